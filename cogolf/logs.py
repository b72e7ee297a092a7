"""Logging set-up: JSON lines when not on a terminal, readable console output on one.

Context such as `match_id`, `slot` and `hole` is bound by the code that knows it;
tokens are never bound or logged.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "info", *, json: bool | None = None, stream=None) -> None:
    stream = stream or sys.stderr
    use_json = not stream.isatty() if json is None else json
    renderer = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
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
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
