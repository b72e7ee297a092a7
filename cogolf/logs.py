"""Logging set-up: JSON lines when not on a terminal, readable console output on one.

Context such as `match_id`, `slot` and `hole` is bound by the code that knows it;
tokens are never bound or logged. Logging can never break a match: lines go to
whatever `sys.stderr` is at the moment of writing, and a stream that is closed or
broken (a detached terminal, a full pipe) loses the line, not the match.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TextIO

_level_override: str | None = None
_line_writer: Callable[[str], None] | None = None


def set_level_override(level: str | None) -> None:
    """`--log-level` given on the command line wins over each command's own default."""
    global _level_override
    _level_override = level


def set_line_writer(writer: Callable[[str], None] | None) -> None:
    """While a progress bar is drawn on stderr, lines bound for stderr go through
    `writer`, which puts each on a line of its own above the bar (None: directly)."""
    global _line_writer
    _line_writer = writer


class StderrLogger:
    """A structlog logger writing each line to the current `sys.stderr`, never raising."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def msg(self, message: str) -> None:
        stream = self._stream or sys.stderr
        try:
            if _line_writer is not None and stream is sys.stderr:
                _line_writer(message)
                return
            stream.write(message + "\n")
            stream.flush()
        except (OSError, ValueError):  # closed or broken: drop the line
            pass

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


class StderrLoggerFactory:
    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def __call__(self, *args: Any) -> StderrLogger:
        return StderrLogger(self._stream)


def configure(
    level: str = "info", *, json: bool | None = None, stream: TextIO | None = None
) -> None:
    """Set up structlog for a command. `stream` pins the output; by default it follows
    `sys.stderr`. `json` defaults to JSON unless stderr is a terminal."""
    import structlog  # here, so that importing this module stays cheap

    level = _level_override or level
    target = stream or sys.stderr
    try:
        tty = target.isatty()
    except (OSError, ValueError):
        tty = False
    use_json = not tty if json is None else json
    renderer = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=tty)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=StderrLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
