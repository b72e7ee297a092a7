"""Tokens and cost of every LLM entrant of a night, per match and in total.

Read from the seats' transcripts (`<night>/llm/<match_id>.seat<slot>.ndjson`: a
walled seat's is the gateway's, whose holes and fallbacks come from the replay);
the entrant's name comes from the match's replay header, since a bot never
learns it. The summary is written to `<night>/llm/usage.json` and printed
under the standings. A line that cannot be read is skipped, never fatal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cogolf.grid import grid
from cogolf.llm.transcript import TRANSCRIPTS_DIR

USAGE_FILE = "usage.json"
GOLF_DIR = "golf"  # the live golf courses of LLM entrants (`commands.llm_golf`)
NAME = re.compile(r"^(?P<match>[A-Za-z0-9][A-Za-z0-9_-]*)\.seat(?P<slot>\d)\.ndjson$")
MAX_LINE = 1 << 20
FIELDS = ("turns", "fallbacks", "attempts", "input_tokens", "output_tokens")


def _entrant(replays: Path, match_id: str, slot: int) -> str:
    try:
        with open(replays / f"{match_id}.ndjson", encoding="utf-8") as f:
            header = json.loads(f.readline(MAX_LINE))
        # A Cogolf header names both seats; a golf header its one player as the model.
        names = header.get("names") or [header.get("config", {}).get("model")]
        return str(names[slot])
    except (OSError, ValueError, AttributeError, IndexError):
        return f"{match_id}.seat{slot}"


def _replay_turns(replays: Path, match_id: str, slot: int) -> tuple[int, int]:
    """(plays, fallbacks) of a seat from its match's journal: a walled seat's transcript is
    the gateway's, which sees calls, not holes."""
    turns = fallbacks = 0
    try:
        with open(replays / f"{match_id}.ndjson", encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"submission"' not in line or len(line) > MAX_LINE:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(record, dict) or record.get("kind") != "submission":
                    continue
                if record.get("slot", 0) != slot:
                    continue
                turns += 1
                fallbacks += (record.get("source") or record.get("origin")) != "seat"
    except OSError:
        pass
    return turns, fallbacks


def _seat(replays: Path, match_id: str, slot: int, path: Path) -> dict[str, Any]:
    out = _read(path)
    if not out.pop("_turns_seen"):
        out["turns"], out["fallbacks"] = _replay_turns(replays, match_id, slot)
    return out


def _read(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(FIELDS, 0) | {"cost": None, "_turns_seen": False}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if record.get("kind") == "attempt":
                out["attempts"] += 1
                for key in ("input_tokens", "output_tokens"):
                    value = record.get(key)
                    out[key] += value if isinstance(value, int) and value > 0 else 0
                cost = record.get("cost")
                if isinstance(cost, int | float) and cost >= 0:
                    out["cost"] = (out["cost"] or 0.0) + cost
            elif record.get("kind") == "turn":
                out["_turns_seen"] = True
                out["turns"] += 1
                out["fallbacks"] += record.get("outcome") != "played"
    return out


def night_usage(night_dir: Path) -> dict[str, Any] | None:
    """The night's LLM usage, or None when no LLM seat played."""
    night_dir = Path(night_dir)
    # Cogolf matches' transcripts, then those of the LLM entrants' live golf courses.
    golf = night_dir / TRANSCRIPTS_DIR / GOLF_DIR
    matches: list[dict[str, Any]] = []
    for replays, folder in (
        (night_dir, night_dir / TRANSCRIPTS_DIR),
        (golf, golf / TRANSCRIPTS_DIR),
    ):
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            found = NAME.match(path.name)
            if not found or not path.is_file():
                continue
            match_id, slot = found["match"], int(found["slot"])
            entrant = _entrant(replays, match_id, slot)
            matches.append({"match_id": match_id, "slot": slot, "entrant": entrant,
                            **_seat(replays, match_id, slot, path)})
    if not matches:
        return None
    entrants: dict[str, dict[str, Any]] = {}
    for m in matches:
        e = entrants.setdefault(
            m["entrant"],
            {"entrant": m["entrant"], "matches": 0, **dict.fromkeys(FIELDS, 0), "cost": None},
        )
        e["matches"] += 1
        for key in FIELDS:
            e[key] += m[key]
        if m["cost"] is not None:
            e["cost"] = round((e["cost"] or 0.0) + m["cost"], 6)
    return {
        "night": Path(night_dir).name,
        "entrants": [entrants[k] for k in sorted(entrants)],
        "matches": matches,
    }


def match_usage(replays: Path, match_id: str) -> dict[str, Any] | None:
    """The usage of one match's LLM seats (`cogolf play`), or None when it had none."""
    folder = Path(replays) / TRANSCRIPTS_DIR
    matches = []
    for slot in (0, 1):
        path = folder / f"{match_id}.seat{slot}.ndjson"
        if path.is_file():
            entrant = _entrant(Path(replays), match_id, slot)
            matches.append({"match_id": match_id, "slot": slot, "entrant": entrant,
                            **_seat(replays, match_id, slot, path)})
    if not matches:
        return None
    return {"entrants": [], "matches": matches}


def render_match_usage(doc: dict[str, Any]) -> str:
    header = ["seat", "entrant", "turns", "fallbacks", "tokens in", "tokens out", "cost"]
    rows = [[str(m["slot"]), m["entrant"], *_counts(m)] for m in doc["matches"]]
    lines = grid(header, rows, left=2)
    return "\n".join(["LLM usage (tokens and cost of this match)", *(f"  {ln}" for ln in lines)])


def write_usage(doc: dict[str, Any], night_dir: Path) -> Path:
    path = Path(night_dir) / TRANSCRIPTS_DIR / USAGE_FILE
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _cost(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_usage(doc: dict[str, Any]) -> str:
    header = ["entrant", "match", "turns", "fallbacks", "tokens in", "tokens out", "cost"]
    rows: list[list[str]] = []
    for e in doc["entrants"]:
        for m in (m for m in doc["matches"] if m["entrant"] == e["entrant"]):
            rows.append([e["entrant"], m["match_id"], *_counts(m)])
        rows.append([e["entrant"], f"night ({e['matches']} matches)", *_counts(e)])
    lines = grid(header, rows, left=2)
    return "\n".join(
        ["LLM usage (tokens and cost per match, then the night)", *(f"  {ln}" for ln in lines)]
    )


def _counts(d: dict[str, Any]) -> list[str]:
    cells = (d["turns"], d["fallbacks"], d["input_tokens"], d["output_tokens"])
    return [*(str(c) for c in cells), _cost(d["cost"])]
