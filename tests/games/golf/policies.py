"""Golf policies the live tests play with, as `cogolf bot` processes or in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SOLUTIONS = Path(__file__).with_name("solutions")


def reference(observation: dict[str, Any]) -> dict[str, str]:
    """Submit the reference solution of every hole, byte for byte."""
    path = SOLUTIONS / observation["course"] / observation["task"]["file_name"]
    return {"source": path.read_bytes().decode("utf-8")}


def flaky(observation: dict[str, Any]) -> Any:
    """Reference solutions, except: junk on flatten, a crash on levenshtein, text on palindrome."""
    key = observation["task"]["key"]
    if key == "flatten":
        return {"oops": 1}
    if key == "levenshtein":
        raise RuntimeError("no idea")
    if key == "palindrome":
        return "f=lambda s:s==s[::-1]"
    return reference(observation)
