"""The one place the golf runners reach the sandbox walls."""

from __future__ import annotations

from cogolf.sandbox.walls import ExternalRun, WallSpec, run_external

__all__ = ["ExternalRun", "WallSpec", "run_external"]
