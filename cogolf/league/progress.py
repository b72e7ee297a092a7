"""Progress of a night: a redrawn bar on a terminal, one plain line per match otherwise.

Both show matches done out of the total, how many of them are void and how many
attempts were retried, the current leader (by match points, then margin, over
every match finished so far, resumed ones included), the elapsed time and an
estimate of the time left from this run's pace: seconds per finished match, its
retries included, so a night whose matches need retries is not promised early.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from cogolf import messages as m
from cogolf.league.standings import DRAW_POINTS, WIN_POINTS
from cogolf.logs import set_line_writer
from cogolf.text import clean

BAR_WIDTH = 24
MAX_CAUSE = 300  # characters of a void match's cause on its one line
_ATTEMPT = re.compile(r"(?:^|; )attempt \d+: ")
_LOG_TAIL = re.compile(r"; the last lines of (\S+):$")


def void_line(cause: str, logs_root: Path | None = None) -> str:
    """A void match's cause on one line: the last attempt's reason and the last line of
    the bot's log it quotes, and where that log is (the full cause is in its marker)."""
    attempts = [a for a in _ATTEMPT.split(cause) if a.strip()]
    last = (attempts[-1] if attempts else cause).removeprefix("PlayError: ")
    lines = [ln.strip() for ln in last.splitlines() if ln.strip()]
    if not lines:
        return "no reason given"
    head, said = lines[0], lines[-1] if len(lines) > 1 else ""
    found = _LOG_TAIL.search(head)
    where = ""
    if found:
        head = head[: found.start()]
        log = Path(found.group(1))
        where = f" (log: {logs_root / log if logs_root is not None else log})"
    text = f"{head}: {said}{where}" if said else f"{head}{where}"
    text = clean(text)
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 1] + "…"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        logs_root: Path | None = None,
    ) -> None:
        self.total = total
        self.logs_root = logs_root  # where the causes' bot logs are (the night's folder)
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.played_now = 0  # matches finished by this run, for the pace
        self.void = 0  # matches of this run that ended void
        self.retries = 0  # attempts of this run that failed and were tried again
        self.points: dict[str, list[int]] = {}  # name -> [points, margin]
        self.bar = ""  # the bar as last drawn on the terminal
        self.playing: set[str] = set()  # matches being played now, for the night's page
        self.solo: tuple[int, int] | None = None  # solo results done, of how many

    def add_result(self, result: m.MatchResult) -> None:
        for slot in (0, 1):
            row = self.points.setdefault(result.names[slot], [0, 0])
            row[1] += result.scores[slot] - result.scores[1 - slot]
            if result.winner is None:
                row[0] += DRAW_POINTS
            elif result.winner == slot:
                row[0] += WIN_POINTS

    def leader(self) -> str:
        if not self.points:
            return "-"
        name, (pts, margin) = min(self.points.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
        return f"{name} ({pts} pts, {margin:+d})"

    def skipped(self, result: m.MatchResult | None) -> None:
        """A match already done before this run."""
        self.done += 1
        if result is not None:
            self.add_result(result)

    def retried(self, job: object = None) -> None:
        """An attempt failed and its match is tried again (shown with the next line)."""
        self.retries += 1

    def finished(self, match_id: str, result: m.MatchResult | None, void_cause: str | None) -> None:
        self.playing.discard(match_id)
        self.done += 1
        self.played_now += 1
        if result is None:
            self.void += 1
        if result is not None:
            self.add_result(result)
        self._show(match_id, result, void_cause)

    def started_match(self, match_id: str) -> None:
        self.playing.add(match_id)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def eta(self) -> float | None:
        """Seconds left at this run's pace (None before its first finished match)."""
        if not self.played_now:
            return None
        return self.elapsed() / self.played_now * (self.total - self.done)

    def _status(self) -> str:
        elapsed = self.elapsed()
        left = self.eta()
        eta = _clock(left) if left is not None else "?"
        counts = [f"{self.void} void"] if self.void else []
        counts += [f"{self.retries} retried"] if self.retries else []
        extra = f" ({', '.join(counts)})" if counts else ""
        return (
            f"{self.done}/{self.total}{extra}  leader {self.leader()}  "
            f"elapsed {_clock(elapsed)}  left ~{eta}"
        )

    def _show(self, match_id: str, result: m.MatchResult | None, void_cause: str | None) -> None:
        if self.tty:
            if result is None:  # one line above the bar; the whole story is in the log
                self.say(f"match {match_id} void: {void_line(void_cause or '', self.logs_root)}")
            filled = BAR_WIDTH * self.done // max(self.total, 1)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            self.bar = f"[{bar}] {self._status()}"
            self.stream.write(f"\r\x1b[2K{self.bar}")
            if self.done == self.total:
                self.stream.write("\n")
                self.bar = ""
                set_line_writer(None)
        else:
            what = (
                f"{result.scores[0]}:{result.scores[1]}"
                if result is not None
                else f"void ({void_line(void_cause or '', self.logs_root)})"
            )
            self.stream.write(f"match {match_id} {what}  {self._status()}\n")
        self.stream.flush()

    def say(self, line: str) -> None:
        """A line of its own: above the bar on a terminal, else between the match lines."""
        if self.tty and self.bar:
            self.above(line)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def above(self, line: str) -> None:
        """A line (a log line) on a line of its own above the bar, which is drawn again."""
        self.stream.write(f"\r\x1b[2K{line}\n{self.bar}")
        self.stream.flush()

    def start(self) -> None:
        if self.tty and self.done < self.total:
            set_line_writer(self.above)  # logs share the terminal with the bar
        if not self.tty:
            self.stream.write(
                f"night: {self.total} matches, {self.done} already done, "
                f"{self.total - self.done} to play\n"
            )
            self.stream.flush()
