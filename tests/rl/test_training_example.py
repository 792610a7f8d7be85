"""The training example runs end to end on a tiny budget: pycma's CMA-ES learns on the vectorised environment, each
policy is measured on held-out games against the exact optimum, and the curve and its figure are written."""

from __future__ import annotations

import json
import runpy
import sys

import numpy as np

from tests.helpers import ROOT


def train(out, monkeypatch) -> dict:
    argv = ["train_supplier.py", "--minutes", "0.005", "--population", "8", "--games", "8", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(ROOT / "examples" / "rl" / "train_supplier.py"), run_name="__main__")
    return json.loads((out / "curve.json").read_text())


def test_the_training_example_writes_its_curve_against_the_optimum(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.random.seed(1)  # the run draws from its own seeded generator, so numpy's global one changes nothing
    summary = train(tmp_path / "first", monkeypatch)
    curve = summary["curve"]
    assert summary["learner"].startswith("CMA-ES (pycma ") and summary["optimum"] > 0
    # the starting policy, then one point per generation of 8 policies x 8 games x 10 Supplier decisions
    assert summary["generations"] >= 1 and len(curve) == summary["generations"] + 1
    assert [p["steps"] for p in curve] == [640 * g for g in range(len(curve))]
    assert all(p["low"] <= p["mean"] <= p["high"] and 0 <= p["breaches"] <= 1 for p in curve)
    assert summary["best_mean"] == max(p["mean"] for p in curve) and summary["final_mean"] == curve[-1]["mean"]
    assert (tmp_path / "first" / "curve.png").read_bytes().startswith(b"\x89PNG")
    assert not (tmp_path / "outcmaes").exists()  # pycma's log folder is not written

    np.random.seed(2)
    again = train(tmp_path / "again", monkeypatch)["curve"]
    assert [p["mean"] for p in again[:2]] == [p["mean"] for p in curve[:2]]
