"""Progress of a night: a redrawn bar on a terminal, one plain line per match otherwise.

Both show matches done out of the total, how many of them are void and how many
attempts were retried, the current leader (by match points, then margin, over
every match finished so far, resumed ones included), the elapsed time and an
estimate of the time left from this run's pace: seconds per finished match, its
retries included, so a night whose matches need retries is not promised early.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from cogolf import messages as m
from cogolf.league.standings import DRAW_POINTS, WIN_POINTS
from cogolf.logs import set_line_writer

BAR_WIDTH = 24


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
    ) -> None:
        self.total = total
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
        self.done += 1
        self.played_now += 1
        if result is None:
            self.void += 1
        if result is not None:
            self.add_result(result)
        self._show(match_id, result, void_cause)

    def _status(self) -> str:
        elapsed = self.clock() - self.started
        left = self.total - self.done
        eta = _clock(elapsed / self.played_now * left) if self.played_now else "?"
        counts = [f"{self.void} void"] if self.void else []
        counts += [f"{self.retries} retried"] if self.retries else []
        extra = f" ({', '.join(counts)})" if counts else ""
        return (
            f"{self.done}/{self.total}{extra}  leader {self.leader()}  "
            f"elapsed {_clock(elapsed)}  left ~{eta}"
        )

    def _show(self, match_id: str, result: m.MatchResult | None, void_cause: str | None) -> None:
        if self.tty:
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
                else f"void ({void_cause})"
            )
            self.stream.write(f"match {match_id} {what}  {self._status()}\n")
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
