"""`cogolf doctor`: list each sandbox wall on this machine and whether it holds."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from cogolf.commands.common import add_json_option, add_sandbox_options, sandbox_modes
from cogolf.logs import configure
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.base import BaseSandbox, missing_walls
from cogolf.sandbox.doctor import examine


async def _diagnose(mode: str) -> dict[str, Any]:
    sb = make_sandbox(mode, accept_weak=True)  # look at a weak sandbox instead of refusing
    assert isinstance(sb, BaseSandbox)
    try:
        await sb.start()
    except Exception as exc:
        return {"mode": mode, "error": f"{type(exc).__name__}: {exc}", "walls": {}, "checks": []}
    try:
        report = await examine(sb)
        return {"mode": mode, **sb.describe(), **report}
    finally:
        await sb.close()


def _handle(args: argparse.Namespace) -> int:
    configure("warning")
    modes = sandbox_modes(args)
    reports = [asyncio.run(_diagnose(m)) for m in modes]
    healthy = all(
        "error" not in r and not missing_walls(r["walls"]) and all(c["held"] for c in r["checks"])
        for r in reports
    )
    if args.json:
        print(json.dumps({"healthy": healthy, "sandboxes": reports}, indent=2))
        return 0 if healthy else 1
    for r in reports:
        print(f"sandbox mode: {r['mode']}")
        if "error" in r:
            print(f"  cannot start: {r['error']}")
            continue
        print(f"  interpreter: {r['python']}")
        print("  walls put up by the child:")
        for wall, status in sorted(r["walls"].items()):
            mark = "MISSING" if status.startswith("missing") else "ok"
            print(f"    {wall:14s} {mark:8s} {status}")
        print("  hostile probes with the audit hook off (kernel walls only):")
        for c in r["checks"]:
            mark = "holds" if c["held"] else "BROKEN"
            print(f"    {c['check']:18s} {mark:7s} {c['outcome']:32s} [{c['wall']}]")
    if not healthy:
        print("WARNING: the sandbox is weaker than designed on this machine; the server "
              "refuses to run unless started with --accept-weak-sandbox", file=sys.stderr)
    return 0 if healthy else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor", help="check each sandbox wall on this machine",
        description="List each kernel wall of the sandbox and whether it holds, by running "
                    "hostile probes with the audit hook switched off.")
    add_sandbox_options(p, several=True, weak=False)
    add_json_option(p)
    p.set_defaults(func=_handle)
