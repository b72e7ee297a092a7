"""One model gateway for every game's agent attempts in a process (a night, a Ray
worker): started by the first session that needs it, stopped with the last."""

from __future__ import annotations

import threading

from cogolf.agents.gateway import Gateway

_lock = threading.Lock()
_gateway: Gateway | None = None
_users = 0


def acquire() -> Gateway:
    global _gateway, _users
    with _lock:
        if _gateway is None:
            _gateway = Gateway().start()
        _users += 1
        return _gateway


def release() -> None:
    global _gateway, _users
    with _lock:
        _users -= 1
        if _users <= 0 and _gateway is not None:
            _gateway.stop()
            _gateway, _users = None, 0
