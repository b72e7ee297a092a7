"""The built-in coding agent: a tool-calling loop through the official clients.

It runs inside the attempt's walls like any command-line agent (`python -m
cogolf.agents.builtin`), reaching the model only through the gateway named in its
environment (`OPENAI_BASE_URL`/`ANTHROPIC_BASE_URL`, the attempt's token as the key),
so it needs nothing installed but this package. Tools: list, read, write and edit
files (search/replace) in the workspace, run a command there (time and output capped)
and finish. Every model call is a turn; old tool output is shortened as the context
fills (the prompt says so). Exit 0 when it finishes or runs out of turns, 2 when the
model cannot be reached, 4 when a budget refuses the call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_READ_CHARS = 60_000
MAX_OUTPUT_CHARS = 16_000
MAX_LISTED = 1000
CONTEXT_CHARS = 400_000  # of tool output kept in full; older output is shortened past it
KEEP_RECENT = 6  # tool results never shortened
SHORTENED_CHARS = 600

SYSTEM = (
    "You are a careful software engineer working alone in a sandboxed workspace. Use the "
    "tools to inspect the files, make the changes the task asks for and check them. Paths "
    "are relative to the workspace. When the work is done, call finish. Old tool output is "
    "shortened as your context fills: read a file again if you need it whole."
)

TOOLS: list[dict[str, Any]] = [
    {"name": "list_files", "description": "List the files below a folder of the workspace.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "read_file", "description": "Read a text file of the workspace.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"]}},
    {"name": "write_file", "description": "Create or replace a file with the given content.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                     "content": {"type": "string"}},
                    "required": ["path", "content"]}},
    {"name": "edit_file",
     "description": "Replace the one occurrence of `old` in a file with `new`.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                     "old": {"type": "string"},
                                                     "new": {"type": "string"}},
                    "required": ["path", "old", "new"]}},
    {"name": "run", "description": "Run a shell command in the workspace (time and output "
     "capped), e.g. a test or a linter.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                    "required": ["command"]}},
    {"name": "finish", "description": "End the attempt: the workspace as it is is scored.",
     "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}}},
]


class ToolError(Exception):
    pass


class Workspace:
    def __init__(self, root: Path, command_timeout: float) -> None:
        self.root, self.command_timeout = root.resolve(), command_timeout

    def path(self, rel: Any) -> Path:
        if not isinstance(rel, str) or not rel:
            raise ToolError("path must be a non-empty string")
        target = (self.root / rel).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise ToolError(f"{rel}: outside the workspace")
        return target

    def list_files(self, path: str = ".") -> str:
        top = self.path(path)
        names = []
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted(filenames):
                names.append(str((Path(dirpath) / name).relative_to(self.root)))
                if len(names) >= MAX_LISTED:
                    return "\n".join(names) + f"\n... (more than {MAX_LISTED} files)"
        return "\n".join(names) or "(no files)"

    def read_file(self, path: str) -> str:
        text = self.path(path).read_text(encoding="utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS:
            return text[:MAX_READ_CHARS] + f"\n... ({len(text) - MAX_READ_CHARS} more characters)"
        return text

    def write_file(self, path: str, content: Any) -> str:
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        target = self.path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {path} ({len(content)} characters)"

    def edit_file(self, path: str, old: Any, new: Any) -> str:
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ToolError("old and new must be strings, old not empty")
        target = self.path(path)
        text = target.read_text(encoding="utf-8")
        count = text.count(old)
        if count != 1:
            raise ToolError(f"{path}: `old` occurs {count} times; it must occur exactly once")
        target.write_text(text.replace(old, new), encoding="utf-8")
        return f"edited {path}"

    def run(self, command: Any) -> str:
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command must be a non-empty string")
        try:
            done = subprocess.run(["/bin/sh", "-c", command], cwd=self.root, capture_output=True,
                                  timeout=self.command_timeout, stdin=subprocess.DEVNULL,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"") + (exc.stderr or b"")
            return _cap(out.decode("utf-8", "replace")) + \
                f"\n[the command passed its {self.command_timeout:g} s limit and was stopped]"
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        return _cap(text) + f"\n[exit code {done.returncode}]"


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"[... {len(text) - MAX_OUTPUT_CHARS} characters cut ...]\n" + \
        text[-MAX_OUTPUT_CHARS:]


def call_tool(ws: Workspace, name: str, args: Any) -> str:
    tools: dict[str, Callable[..., str]] = {
        "list_files": ws.list_files, "read_file": ws.read_file, "write_file": ws.write_file,
        "edit_file": ws.edit_file, "run": ws.run,
    }
    if name not in tools:
        return f"error: no tool {name!r}"
    if not isinstance(args, dict):
        return "error: the arguments must be a JSON object"
    try:
        return tools[name](**args)
    except TypeError as exc:
        return f"error: {exc}"
    except (ToolError, OSError, UnicodeDecodeError) as exc:
        return f"error: {exc}"


def shorten(results: list[dict[str, Any]], key: str) -> None:
    """Cut the oldest tool results (all but the last KEEP_RECENT) while the total passes
    CONTEXT_CHARS."""
    total = sum(len(r[key]) for r in results)
    for r in results[:-KEEP_RECENT]:
        if total <= CONTEXT_CHARS:
            return
        text = r[key]
        if len(text) > SHORTENED_CHARS:
            r[key] = text[:SHORTENED_CHARS] + f"\n[shortened: {len(text)} characters]"
            total -= len(text) - len(r[key])


class Chat:
    """One API's shape of the same conversation."""

    def __init__(self, api: str, model: str, prompt: str) -> None:
        self.api, self.model = api, model
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.results: list[dict[str, Any]] = []  # tool results, shortened in place
        if api == "openai":
            import openai

            self.errors: Any = openai
            self.client: Any = openai.OpenAI(max_retries=2, timeout=600)
        else:
            import anthropic

            self.errors = anthropic
            self.client = anthropic.Anthropic(max_retries=2, timeout=600)

    def ask(self) -> tuple[str, list[tuple[str, str, Any]]]:
        """The model's text and its tool calls (id, name, arguments)."""
        if self.api == "openai":
            reply = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": SYSTEM}, *self.messages],
                tools=[{"type": "function", "function": t} for t in TOOLS])
            message = reply.choices[0].message
            calls = []
            for c in message.tool_calls or []:
                try:
                    args = json.loads(c.function.arguments or "{}")
                except ValueError:
                    args = None
                calls.append((c.id, c.function.name, args))
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in message.tool_calls]
            self.messages.append(entry)
            return message.content or "", calls
        reply = self.client.messages.create(
            model=self.model, system=SYSTEM, max_tokens=8192, messages=self.messages,
            tools=[{"name": t["name"], "description": t["description"],
                    "input_schema": t["parameters"]} for t in TOOLS])
        blocks = [b.model_dump(exclude_none=True) for b in reply.content]
        self.messages.append({"role": "assistant", "content": blocks})
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        return text, [(b["id"], b["name"], b.get("input")) for b in blocks
                      if b["type"] == "tool_use"]

    def answer(self, results: list[tuple[str, str]]) -> None:
        if self.api == "openai":
            for call_id, text in results:
                entry = {"role": "tool", "tool_call_id": call_id, "content": text}
                self.messages.append(entry)
                self.results.append(entry)
            shorten(self.results, "content")
            return
        blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": text}
                  for call_id, text in results]
        self.messages.append({"role": "user", "content": blocks})
        self.results.extend(blocks)
        shorten(self.results, "content")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cogolf.agents.builtin")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--max-turns", type=int, default=60)
    parser.add_argument("--command-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    api = os.environ.get("COGOLF_API", "openai")
    chat = Chat(api, os.environ.get("COGOLF_MODEL", "model"),
                Path(args.prompt).read_text(encoding="utf-8"))
    ws = Workspace(Path.cwd(), args.command_timeout)
    for turn in range(1, args.max_turns + 1):
        try:
            text, calls = chat.ask()
        except chat.errors.APIStatusError as exc:
            print(f"turn {turn}: the model call failed: HTTP {exc.status_code}: {exc.message}",
                  flush=True)
            return 4 if "budget_exceeded" in str(exc.body) else 2
        except chat.errors.APIError as exc:
            print(f"turn {turn}: the model could not be reached: {exc}", flush=True)
            return 2
        if text:
            print(f"turn {turn}: {text[:300]}", flush=True)
        if not calls:
            print(f"turn {turn}: no tool call; done", flush=True)
            return 0
        results = []
        finished = False
        for call_id, name, call_args in calls:
            print(f"turn {turn}: {name} {json.dumps(call_args)[:200]}", flush=True)
            if name == "finish":
                finished = True
                results.append((call_id, "finished"))
                continue
            results.append((call_id, call_tool(ws, name, call_args)))
        if finished:
            return 0
        chat.answer(results)
    print(f"max turns ({args.max_turns}) reached", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
