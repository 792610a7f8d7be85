"""Run every benchmark in bench/ and print one line each; results land in bench/results/*.json."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    chosen = sys.argv[1:] or sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith(("_", "all")))
    for name in chosen:
        runpy.run_path(str(HERE / f"{name}.py"), run_name="__main__")
