"""What the server asks of the browser's pages, which it serves without importing them.

The pages (`cogolf.pages`) read the server's disclosure policy, so the server gets
them as an argument (`ServeOptions.pages`), as it gets its games: no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from cogolf.game import HostedGame
from cogolf.server.disclosure import View

ViewOf = Callable[[HostedGame, Request], View]  # what one request may see of one match


class Pages(Protocol):
    def wants(self, request: Request) -> bool:
        """Whether a request to an API address asks for the page instead (a browser)."""
        ...

    def routes(
        self, matches: Callable[[], Iterable[HostedGame]], view_of: ViewOf
    ) -> list[BaseRoute]:
        """The pages' own routes (`/`, static files)."""
        ...

    async def match_page(
        self, request: Request, hosted: HostedGame | None, view_of: ViewOf, decks: dict[str, Any]
    ) -> Response:
        """`/matches/{id}` for a browser."""
        ...
