"""Renew the viewer's screenshots in docs/figures/view-*.png (not an mkdocs hook: the docs build never runs it, so
it needs no browser). It runs the browser tests that open each page kind in Debian's headless Chromium on real
outputs of the bundled examples, with VIEW_SCREENSHOTS=1 so that each saves its page, and checks that every
screenshot was written anew.

    python3 docs/hooks/view_screenshots.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"
SHOTS = {  # the screenshot → the test that takes it
    "view-contractsim.png": "test_a_run_record_shows_each_week_beside_the_rcc_baseline",
    "view-ctbench.png": "test_a_ctbench_game_replays_the_board_move_by_move",
    "view-experiment.png": "test_an_experiment_lists_filters_opens_and_compares_its_games",
    "view-compare.png": "test_an_experiment_lists_filters_opens_and_compares_its_games",
    "view-leaderboard.png": "test_a_tournament_shows_its_leaderboard_and_bundles_without_an_absolute_path",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="Print what was written as JSON.")
    args = parser.parse_args()
    start = time.time()
    tests = sorted(set(SHOTS.values()))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/viewer/test_view.py",
            "-k",
            " or ".join(tests),
        ],
        cwd=ROOT,
        env={**os.environ, "VIEW_SCREENSHOTS": "1"},
        capture_output=True,
        text=True,
    )
    stale = [name for name in SHOTS if not (FIGURES / name).exists() or (FIGURES / name).stat().st_mtime < start]
    if done.returncode != 0 or stale:
        why = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:]
        print(
            f"error: the screenshots were not all renewed ({', '.join(stale) or 'tests failed'}): {why}",
            file=sys.stderr,
        )
        return 1
    written = {name: (FIGURES / name).stat().st_size for name in SHOTS}
    if args.json:
        print(json.dumps({"ok": True, "written": {str(Path("docs/figures") / k): v for k, v in written.items()}}))
    else:
        for name, size in written.items():
            print(f"docs/figures/{name}: {size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
