"""Why an original loses tests at prepare, said with the fix that fits.

Prepare runs a library's own suite, so the exception a collection error ends in
(`ModuleNotFoundError: No module named 'psutil'`) may be shown to the operator:
it names the fix (`--with psutil`). A candidate's run never gets these words:
its notes are the scorer's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

# import names whose distribution is named otherwise
MODULE_DISTRIBUTIONS = {
    "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python", "sklearn": "scikit-learn",
    "dateutil": "python-dateutil", "OpenSSL": "pyopenssl", "Crypto": "pycryptodome",
    "attr": "attrs", "bs4": "beautifulsoup4", "serial": "pyserial", "dns": "dnspython",
    "git": "gitpython", "jwt": "pyjwt", "magic": "python-magic", "google": "protobuf",
    "nacl": "pynacl", "zmq": "pyzmq", "skimage": "scikit-image", "Levenshtein":
    "python-levenshtein", "dotenv": "python-dotenv", "jose": "python-jose",
    "multipart": "python-multipart", "docx": "python-docx", "gi": "pygobject",
}
_MISSING = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")
_PYTEST_API = re.compile(r"\b_?pytest\b|PytestRemovedIn|PytestDeprecationWarning")
_MISMATCH = "use a unique basename for your test file modules"  # pytest's hint
TEST_MODULE = re.compile(r"(^test_.*|.*_test|^tests?)\.py$")
_NOT_SOURCE = {".git", ".tox", ".nox", "build", "dist", "__pycache__", "node_modules"}
MAX_LISTED = 5


def fix_for(message: str) -> str:
    """The fix a collection error's exception line points to ("" when none fits)."""
    missing = _MISSING.search(message)
    if missing:
        top = missing.group(1).split(".")[0]
        return f"--with {MODULE_DISTRIBUTIONS.get(top, top)}"
    if _PYTEST_API.search(message):
        return "an older pytest: --with 'pytest<9' (or 'pytest<8')"
    if _MISMATCH in message:
        # pytest's "import file mismatch": `python_files` names the library's own modules
        # (for doctests, whose option went with `addopts`), and the installed copy wins
        return ("none needed if it is a library module, not a test file: its "
                "`python_files` collects it, the installed copy shadows it; "
                "--accept-partial-reference keeps the rest")
    return ""


def shadowed_modules(errors: Sequence[str], messages: Mapping[str, str],
                     tops: set[str]) -> list[str]:
    """Collection errors that are the library's own modules, not tests: `python_files`
    names them (progressbar2's `progressbar/*.py`, for doctests whose option went with
    `addopts`) and pytest refuses them since the installed copy is the one imported.
    A module of one of the wheel's top-level names, not named like a test file; scoring
    runs collect the hidden tests only, so nothing of the reference is lost."""
    shadowed = []
    for node in errors:
        path = node.split("::", 1)[0]
        parts = path.removeprefix("src/").split("/")
        name = parts[-1]
        if (_MISMATCH in messages.get(node, "") and parts[0].removesuffix(".py") in tops
                and not (name.startswith("test_") or name.endswith("_test.py")
                         or name == "conftest.py")):
            shadowed.append(node)
    return shadowed


def collection_errors(errors: Sequence[str], messages: Mapping[str, str]) -> str:
    """`path: exception line (fix: ...)`, for the first few collection errors."""
    shown = []
    for node in errors[:MAX_LISTED]:
        message = messages.get(node, "")
        fix = fix_for(message)
        shown.append(node + (f": {message}" if message else "") + (f" (fix: {fix})" if fix
                                                                    else ""))
    more = f"; and {len(errors) - MAX_LISTED} more" if len(errors) > MAX_LISTED else ""
    return "; ".join(shown) + more


def ships_tests(root: Path) -> bool:
    """Whether the source holds any test module at all (an sdist often ships none)."""
    pending = [root]
    while pending:
        folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in _NOT_SOURCE:
                    pending.append(entry)
            elif TEST_MODULE.match(entry.name):
                return True
    return False
