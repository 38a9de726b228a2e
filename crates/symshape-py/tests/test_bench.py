"""The benchmark script runs, and its answers hold (a small corpus)."""

import pytest

pytest.importorskip("sympy")

from symshape import bench  # noqa: E402


def test_bench_runs_without_contradiction(capsys):
    assert bench.main(["--sizes", "2,3"]) == 0
    out = capsys.readouterr().out
    assert "no contradiction" in out
    assert "decided: sympy" in out
