"""The benchmark suite runs (one step per case) so it never rots; no timing is asserted."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_suite_smoke(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    cases = {r["case"] for r in result["results"]}
    assert any(c.startswith("a + b") for c in cases)
    assert result["meta"]["threads"] == 1
