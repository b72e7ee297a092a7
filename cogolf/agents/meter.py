"""An attempt's budgets and what it has spent, checked before every model call.

Pure bookkeeping, shared by the gateway's request handlers under one lock. A call is
admitted with a *reservation*: its estimated input tokens and the most output it may
produce (the gateway caps the request's max_tokens to what is left). So parallel calls
cannot together pass a budget, and a reply that reports no usage is charged its whole
reservation. The first call refused for a budget sets `limit`, and the attempt ends.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

LIMITS = ("requests", "tokens", "cost")


@dataclass(frozen=True)
class Budget:
    max_requests: int | None = None
    max_tokens: int | None = None  # input and output together
    max_cost: float | None = None  # in the provider's currency


@dataclass(frozen=True)
class Prices:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


@dataclass(frozen=True)
class Reservation:
    input_tokens: int
    output_tokens: int  # the max_tokens the call is sent with
    cost: float


class OverBudget(Exception):
    def __init__(self, which: str, message: str) -> None:
        super().__init__(message)
        self.which = which


@dataclass
class Meter:
    budget: Budget
    prices: Prices | None = None
    requests: int = 0  # admitted calls
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # None: no call had a cost reported or priced
    unmetered: int = 0  # replies without usage, charged their reservation
    provider_failures: int = 0
    last_failed: bool = False  # the latest finished call failed at the provider
    limit: str | None = None  # requests | tokens | cost: the budget that ended the attempt
    _reserved_tokens: int = 0
    _reserved_cost: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def reserve(self, input_tokens: int, want_output: int) -> Reservation:
        """Admit one call, or raise OverBudget (which also sets `limit`)."""
        with self._lock:
            if self.limit is not None:
                raise OverBudget(self.limit, f"the attempt's {self.limit} budget is spent")
            b = self.budget
            if b.max_requests is not None and self.requests >= b.max_requests:
                raise self._over("requests", f"max_requests {b.max_requests} reached")
            out = max(1, want_output)
            if b.max_tokens is not None:
                room = b.max_tokens - self.tokens - self._reserved_tokens - input_tokens
                if room < 1:
                    raise self._over("tokens", f"max_tokens {b.max_tokens} would be passed "
                                     f"({self.tokens} used, {self._reserved_tokens} in flight, "
                                     f"about {input_tokens} in this request)")
                out = min(out, room)
            cost = 0.0
            if b.max_cost is not None:
                assert self.prices is not None  # the agent's settings require prices
                spent = (self.cost or 0.0) + self._reserved_cost
                room_cost = b.max_cost - spent - self.prices.cost(input_tokens, 0)
                fits = (math.floor(room_cost * 1e6 / self.prices.output_per_mtok)
                        if self.prices.output_per_mtok > 0 else out)
                if room_cost <= 0 or fits < 1:
                    raise self._over("cost", f"max_cost {b.max_cost:g} would be passed "
                                     f"({spent:.6f} spent or in flight)")
                out = min(out, fits)
                cost = self.prices.cost(input_tokens, out)
            self.requests += 1
            self._reserved_tokens += input_tokens + out
            self._reserved_cost += cost
            return Reservation(input_tokens, out, cost)

    def _over(self, which: str, message: str) -> OverBudget:
        self.limit = which
        return OverBudget(which, message)

    def settle(self, r: Reservation, input_tokens: int | None, output_tokens: int | None,
               cost: float | None) -> tuple[int, int, float | None]:
        """Charge a finished call: what the provider reported, else the reservation."""
        with self._lock:
            self._release(r)
            if input_tokens is None or output_tokens is None:
                self.unmetered += 1
                input_tokens, output_tokens = r.input_tokens, r.output_tokens
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            if cost is None and self.prices is not None:
                cost = self.prices.cost(input_tokens, output_tokens)
            if cost is not None:
                self.cost = (self.cost or 0.0) + cost
            self.last_failed = False
            return input_tokens, output_tokens, cost

    def fail(self, r: Reservation, *, provider: bool) -> None:
        """A call that brought no reply: nothing is charged; the provider's fault counts."""
        with self._lock:
            self._release(r)
            if provider:
                self.provider_failures += 1
                self.last_failed = True

    def _release(self, r: Reservation) -> None:
        self._reserved_tokens -= r.input_tokens + r.output_tokens
        self._reserved_cost -= r.cost

    def usage(self) -> dict[str, object]:
        with self._lock:
            return {"requests": self.requests, "input_tokens": self.input_tokens,
                    "output_tokens": self.output_tokens,
                    "cost": None if self.cost is None else round(self.cost, 6),
                    "unmetered": self.unmetered, "provider_failures": self.provider_failures}
