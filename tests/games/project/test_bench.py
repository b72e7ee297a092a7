"""`cogolf bench project` on a task with hidden twins: seconds with and without
them side by side, from interleaved attempts of a real (tiny) PHPUnit task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.games.project.test_laravel_csv_import import needs_php

REPO = Path(__file__).resolve().parents[3]

TESTS = """<?php

use PHPUnit\\Framework\\TestCase;

class AddTest extends TestCase
{
    public function test_small_numbers(): void
    {
        $this->assertSame(3, add(1, 2));
    }

    public function test_zero_and_zero(): void
    {
        $this->assertSame(0, add(0, 0));
    }

    public function test_large_numbers(): void
    {
        $this->assertSame(300, add(100, 200));
    }
}
"""

CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="bootstrap.php" cacheResult="false" colors="false">
    <testsuites>
        <testsuite name="Add"><directory suffix="Test.php">.</directory></testsuite>
    </testsuites>
</phpunit>
"""


def adder_task(root: Path) -> Path:
    """A task whose evaluator is three PHPUnit tests of `add`, twinned by rule."""
    (root / "template" / "src").mkdir(parents=True)
    (root / "template" / "src" / "add.php").write_text(
        "<?php\nfunction add(int $a, int $b): int { return $a - $b; }\n")
    (root / "solution" / "src").mkdir(parents=True)
    (root / "solution" / "src" / "add.php").write_text(
        "<?php\nfunction add(int $a, int $b): int { return $a + $b; }\n")
    (root / "evaluator").mkdir()
    (root / "evaluator" / "AddTest.php").write_text(TESTS)
    (root / "evaluator" / "phpunit.xml").write_text(CONFIG)
    (root / "evaluator" / "bootstrap.php").write_text(
        "<?php\nrequire dirname(__DIR__).'/src/add.php';\n")
    php = ["/usr/bin/php", "-n", "-d", "include_path=/usr/share/php"]
    for ext in ("dom", "xml", "xmlwriter", "mbstring", "tokenizer"):
        php += ["-d", f"extension={ext}"]
    names = ("test_small_numbers", "test_zero_and_zero", "test_large_numbers")
    (root / "task.json").write_text(json.dumps({
        "name": "adder", "template": "template", "evaluator_tests": "evaluator",
        "evaluator_dest": ".eval", "time_limit_seconds": 60, "report_format": "junit",
        "command": [*php, "/usr/bin/phpunit", "--configuration", "{tests}/phpunit.xml",
                    "--log-junit", "{report}"],
        "twins": {"rule": "phpunit", "count": 3},
        "checks": [{"id": n, "label": "floor", "tests": [f"AddTest::{n}"]} for n in names],
    }))
    return root


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "cogolf", "bench", "project", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_php
@pytest.mark.slow
def test_bench_project_times_attempts_with_and_without_twins(tmp_path: Path) -> None:
    task = adder_task(tmp_path / "adder")
    (row,) = json.loads(bench(str(task), "--repeat", "2", "--json"))
    assert (row["task"], row["status"], row["points"], row["twins"]) == ("adder", "ok", 1.0, 3)
    assert row["status_without_twins"] == "ok" and row["checks"] == "3/3"
    assert len(row["seconds_with_twins"]) == len(row["seconds_without"]) == 2
    assert row["seconds_min_with_twins"] <= row["seconds_median_with_twins"]
    assert row["seconds_ratio"] == round(
        row["seconds_median_with_twins"] / row["seconds_median_without"], 3)
    assert len(row["cpu_with_twins"]) == 2 and row["cpu_median_with_twins"] > 0
    assert row["cpu_ratio"] == round(row["cpu_median_with_twins"] / row["cpu_median_without"], 3)
    text = bench(str(task))
    assert "adder" in text and "twins 3" in text and "wall: with twins min" in text
    assert "| without min" in text and "| ratio of medians" in text and "cpu:  with twins" in text
