"""An LLM seat of a night, walled like every bot, calling its model only through the gateway.

A seat played by a chat model (an `llm` entrant's Cogolf seat, an `llm` or agent
entrant's live golf) runs `cogolf bot --policy llm:...` behind the bot wall like
any policy bot. Its model file is rewritten for the wall: the provider's address
becomes the night's model gateway, relayed into the bot's network namespace beside
the server's port, and the key's variable becomes `COGOLF_LLM_TOKEN`, a token valid
for this one seat of this one match at this gateway only. The real key stays in the
operator's process, which the gateway runs in; the gateway meters every call and
writes the seat's transcript (`<match_id>.seat<slot>.ndjson`, 0600, the key
redacted), so what a seat spent is what the gateway counted, not what the seat says.

The client is imported and built when the bot starts (`cogolf bot` warms it), before
the first hole's deadline runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from cogolf.agents import shared
from cogolf.agents.gateway import Gateway
from cogolf.agents.meter import Budget, Meter, Prices
from cogolf.league.botwall import BotWall, bot_python, import_path, wrap
from cogolf.llm.config import LLMConfig
from cogolf.llm.entrant import PREFIX, config_of

TOKEN_ENV = "COGOLF_LLM_TOKEN"
CA_CERTIFICATES = ("/etc/ssl",)


def walled_ref(config: LLMConfig, gateway: Gateway) -> str:
    """The policy reference the walled seat plays: the model at the gateway, with no key,
    no prices' authority and no extra fields (the gateway adds the entrant's own)."""
    table = {
        "provider": config.provider,
        "model": config.model,
        "base_url": gateway.openai_url if config.provider == "openai" else gateway.anthropic_url,
        "api_key_env": TOKEN_ENV,
        "max_output_tokens": config.max_output_tokens,
        "request_timeout": config.request_timeout,
    }
    return PREFIX + json.dumps(table, sort_keys=True, separators=(",", ":"))


def _prices(config: LLMConfig) -> Prices | None:
    if config.input_price_per_mtok is None and config.output_price_per_mtok is None:
        return None
    return Prices(config.input_price_per_mtok or 0.0, config.output_price_per_mtok or 0.0)


@dataclass
class LLMSeats:
    """The walled LLM seats of one process (a night, a Ray worker, a golf run), sharing the
    process's gateway: started with the first seat, stopped by `close`."""

    gateway: Gateway | None = None
    tokens: set[str] = field(default_factory=set)

    def command(self, policy: str, transcript: Path, log: Path, *, deck_dir: Path | None = None,
                scratch_root: str = "") -> tuple[list[str], str]:
        """(the walled launcher command of the seat, its token: `revoke` it after the match)."""
        config = config_of(policy.removeprefix(PREFIX))
        if self.gateway is None:
            self.gateway = shared.acquire()
        token = self.gateway.grant(config, Meter(Budget(), _prices(config)), transcript,
                                   label=transcript.stem)
        self.tokens.add(token)
        import_path()  # fails early, with the reason, when bots cannot read the packages
        argv = [bot_python(), "-s", "-P", "-m", "cogolf", "bot", "--url", "{url}",
                "--policy", walled_ref(config, self.gateway)]
        # The HTTP client loads the CA certificates when it is built, even for plain http.
        readable: tuple[str, ...] = CA_CERTIFICATES
        if deck_dir is not None:
            argv += ["--deck", str(deck_dir)]
            readable += (str(deck_dir),)
        wall = BotWall(readable=readable, env=((TOKEN_ENV, token),), log=str(log),
                       scratch_root=scratch_root, gateway_port=self.gateway.port)
        return wrap(argv, wall), token

    def revoke(self, token: str) -> None:
        if self.gateway is not None and token in self.tokens:
            self.tokens.discard(token)
            self.gateway.revoke(token)

    def close(self) -> None:
        for token in list(self.tokens):
            self.revoke(token)
        if self.gateway is not None:
            self.gateway = None
            shared.release()
