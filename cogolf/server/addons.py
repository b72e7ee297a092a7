"""What the server asks of a part it hosts beside its matches (the ladder), without
importing it: routes of its own, and a start and a stop around the server's life.

The ladder creates matches in the server's registry, so it imports the server; the
server gets it as `ServeOptions.addons`, as it gets its games and pages: no cycle.
"""

from __future__ import annotations

from typing import Protocol

from starlette.routing import BaseRoute

from cogolf.server.registry import Registry


class Addon(Protocol):
    def routes(self) -> list[BaseRoute]:
        """Routes added to the server's app."""
        ...

    async def start(self, registry: Registry, url: str) -> None:
        """Called once the server listens at `url`, with its registry (matches resumed)."""
        ...

    async def stop(self) -> None:
        """Called before the server's matches are closed."""
        ...
