"""Golf as a live game: one seat plays a course's holes over the websocket.

The hosted match is `hosted.HostedGolfMatch`; its settings (results folder, run
limits) come from the host's per-game settings under the name `golf`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import structlog

from cogolf import messages as m
from cogolf.game import Host
from cogolf.games.golf import wire
from cogolf.games.golf.hosted import HostedGolfMatch, create_golf_match, host_persisted
from cogolf.games.golf.settings import GolfSettings
from cogolf.server.requests import CreateMatch

log = structlog.get_logger("cogolf.server")


def _settings(host: Host) -> GolfSettings:
    return host.settings.get("golf") or GolfSettings()


class GolfGame:
    name = "golf"
    seats = 1

    def schemas(self) -> dict[str, Any]:
        return {
            "seat_to_server": msgspec.json.schema(wire.GolfSubmission),
            "server_to_seat": msgspec.json.schema(
                wire.GolfWelcome | wire.GolfObservation | m.Ack | m.Error | wire.GolfDone
            ),
            "replay_record": msgspec.json.schema(wire.GolfRecord),
        }

    def create(
        self, req: CreateMatch, host: Host, match_id: str
    ) -> tuple[HostedGolfMatch, list[str]]:
        hosted, tokens = create_golf_match(req, host, _settings(host), match_id)
        log.info("match_created", match_id=match_id, game="golf", course=req.course)
        return hosted, tokens

    def resume(self, path: Path, host: Host) -> HostedGolfMatch | None:
        return host_persisted(path, host, _settings(host))


GAME = GolfGame()
