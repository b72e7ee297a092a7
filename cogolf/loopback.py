"""An ASGI app served on a loopback port from a thread of this process: the fake chat
provider and the model gateway, each started and stopped with the code that uses it."""

from __future__ import annotations

import threading
from typing import Any

import uvicorn


class LoopbackServer:
    def __init__(self, app: Any, name: str, **options: Any) -> None:
        self.app, self.name, self.options = app, name, options
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self, port: int = 0) -> int:
        """Serve until `stop`; the port it listens on (any free one for 0)."""
        config = uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning",
                                lifespan="off", timeout_graceful_shutdown=1, **self.options)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name=self.name)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the {self.name} did not start")
            threading.Event().wait(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self.port

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
