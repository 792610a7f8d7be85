"""The training example runs end to end on a tiny budget: it learns on the vectorised environment, measures each
policy on held-out games against the exact optimum, and writes the curve and its figure."""

from __future__ import annotations

import json
import runpy
import sys

from tests.helpers import ROOT


def test_the_training_example_writes_its_curve_against_the_optimum(tmp_path, monkeypatch):
    out = tmp_path / "curve"
    argv = ["train_supplier.py", "--minutes", "0.005", "--population", "8", "--games", "8", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(ROOT / "examples" / "rl" / "train_supplier.py"), run_name="__main__")
    summary = json.loads((out / "curve.json").read_text())
    assert summary["optimum"] > 0 and summary["curve"]
    point = summary["curve"][0]
    assert point["low"] <= point["mean"] <= point["high"] and point["steps"] == 8 * 8 * 10
    assert (out / "curve.png").read_bytes().startswith(b"\x89PNG")
