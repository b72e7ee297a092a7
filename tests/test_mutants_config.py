"""`make mutants`' configuration stays true to the tree: every listed module and test
file exists, every mutant declared equivalent belongs to its module, and the report
has the markers its table is written between."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("mutants_tool", ROOT / "tools" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_mutation_config_names_what_exists() -> None:
    tool = _tool()
    modules = tool.load_modules()
    assert [m.path for m in modules][:2] == ["cogolf/values.py", "cogolf/verify.py"]
    assert len({m.path for m in modules}) == len(modules)
    for m in modules:
        assert (ROOT / m.path).is_file(), m.path
        assert m.tests and all((ROOT / t).is_file() for t in m.tests), m.tests
        prefix = m.path.removesuffix(".py").replace("/", ".") + ".x"
        assert all(name.startswith(prefix) for name in m.equivalent), m.path
        assert all(why.strip() for why in m.equivalent.values()), m.path
    text = (ROOT / "MUTANTS.md").read_text()
    assert text.index(tool.BEGIN) < text.index(tool.END)
