"""`cogolf doctor`: list each sandbox wall on this machine and whether it holds."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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


def bot_walls() -> list[dict[str, Any]]:
    """What a league night's walled bots need here, each {need, ok, detail}."""
    from cogolf.league.botwall import BotSetupError, bot_python, import_path
    from cogolf.sandbox import kernel
    from cogolf.sandbox.cgroups import available_bases

    out = []

    def need(name: str, check: Any) -> None:
        try:
            ok, detail = check()
        except (BotSetupError, OSError) as exc:
            ok, detail = False, str(exc)
        out.append({"need": name, "ok": ok, "detail": detail})

    root = os.geteuid() == 0
    need("root", lambda: (root, "a leased uid, its cgroups and network namespace need root"
                          if not root else "running as root"))  # fmt: skip
    need("cgroups", lambda: (bool(bases := available_bases()),
                             ", ".join(sorted(bases)) or "no controller this process can "
                             "delegate (64 tasks, 1 GiB per bot)"))  # fmt: skip
    need("landlock", lambda: (kernel.landlock_abi() > 0, f"abi {kernel.landlock_abi()}"))
    need("bot interpreter", lambda: (True, f"{bot_python()} (any uid can run it)"))
    need("packages", lambda: (True, f"{len(import_path())} folders any uid can read"))
    return out


def _handle(args: argparse.Namespace) -> int:
    configure("warning")
    modes = sandbox_modes(args)
    reports = [asyncio.run(_diagnose(m)) for m in modes]
    healthy = all(
        "error" not in r and not missing_walls(r["walls"]) and all(c["held"] for c in r["checks"])
        for r in reports
    )
    bots = bot_walls()
    bots_ok = all(b["ok"] for b in bots)
    if args.json:
        print(json.dumps({"healthy": healthy, "sandboxes": reports, "bot_walls": bots,
                          "bot_walls_ok": bots_ok}, indent=2))  # fmt: skip
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
    print("league bot walls (every bot process of a night):")
    for b in bots:
        print(f"    {b['need']:16s} {'ok' if b['ok'] else 'MISSING':8s} {b['detail']}")
    print(_verdict(reports, healthy, bots))
    return 0 if healthy else 1


def _verdict(reports: list[dict[str, Any]], healthy: bool, bots: list[dict[str, Any]]) -> str:
    """The last line: whether this machine runs matches and nights with every wall."""
    missing = [b["need"] for b in bots if not b["ok"]]
    nights = "league bots run walled" if not missing else (
        f"league bots run without their walls (missing: {', '.join(missing)})")
    if healthy:
        return f"verdict: OK: the sandbox holds every wall; {nights}"
    weak = sorted({r["mode"] for r in reports if "error" in r or missing_walls(r["walls"])
                   or not all(c["held"] for c in r["checks"])})  # fmt: skip
    return (
        f"verdict: WEAK: the sandbox ({', '.join(weak)}) is weaker than designed here, so the "
        f"server refuses to run unless started with --accept-weak-sandbox; {nights}"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor", help="check each sandbox wall on this machine",
        description="List each kernel wall of the sandbox and whether it holds, by running "
                    "hostile probes with the audit hook switched off.")
    add_sandbox_options(p, several=True, weak=False)
    add_json_option(p)
    p.set_defaults(func=_handle)
