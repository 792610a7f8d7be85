"""What a new user tripped on (issue #30, items 12-17): each case goes through the real CLI."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.helpers import EXAMPLES, run_cli

CATERING = """contract "c" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $3 }
%s
}
"""

# (what, contract source, the line:col the error points at, text the hint must hold)
MISTAKES = [
    ("misspelt clause keyword", CATERING % "  delivr {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  }",
     "4:3", "did you mean `deliver`?"),
    ("misspelt product", CATERING % "  deliver {\n    weeks 2..10: piza 1, pasta 1, soup 1\n  }",
     "5:18", "did you mean `pizza`?"),
    ("misspelt game", 'contract "c" {\n  game contractsim.hotle\n}\n', "2:3", "did you mean `contractsim.hotel`?"),
    ("misspelt player", 'contract "c" {\n  game ctbench\n  cover {\n    (1,2): redd pays for blue\n  }\n}\n',
     "4:12", "did you mean `red`?"),
    ("block not closed before the next clause",
     CATERING % "  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  pay {\n    weeks 1..9: $18\n  }",
     "6:3", "is the '}' closing `deliver {` (line 4) missing?"),
]


@pytest.mark.parametrize("what, source, where, hint", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_contract_mistakes_get_a_suggestion(tmp_path, what, source, where, hint):
    path = tmp_path / "c.contract"
    path.write_text(source, encoding="utf-8")
    result = run_cli("check", str(path))
    assert result.returncode == 1
    out = result.stdout + result.stderr
    assert f"\n{path}:{where}: error[" in "\n" + out, out
    assert hint in out


def test_missing_brace_at_the_end_points_at_the_open_block(tmp_path):
    path = tmp_path / "c.contract"
    path.write_text((CATERING % "  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n").rstrip("}\n"),
                    encoding="utf-8")
    result = run_cli("check", str(path))
    out = result.stdout + result.stderr
    assert result.returncode == 1
    assert f"{path}:4:11: error[E001]: unexpected end of file: `deliver {{` is never closed" in out


def test_text_output_is_not_wrapped_and_ctbench_show_has_a_legend():
    shown = run_cli("ctbench", "show", "3")
    assert shown.returncode == 0
    legend = [line for line in shown.stdout.splitlines() if line.startswith("Legend: ")]
    assert legend and "r on P-Red's best path" in legend[0] and "b on P-Blue's" in legend[0]
    assert len(legend[0]) > 80  # a pipe gets the whole line, not rich's 80-column wrap


def _command_paths(path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group under `path`, read from click's own tree (the app the console script runs)."""
    import typer.main

    from contractlang.cli import app

    node = typer.main.get_command(app)
    for name in path:
        node = node.commands[name]
    found = [path]
    for name in getattr(node, "commands", {}):
        found += _command_paths((*path, name))
    return found


def test_help_reads_without_type_metavars():
    """No `<bool>`, `<list[Path]>` or `{files}` in any --help: typer 0.27+ print them, so the range is pinned."""
    paths = _command_paths()
    assert len(paths) > 20 and ("experiment", "rational") in paths
    for path in paths:
        shown = run_cli(*path, "--help")
        assert shown.returncode == 0, (path, shown.stderr)
        for mark in ("<bool>", "<list[", "{files}", "<int>", "<str>"):
            assert mark not in shown.stdout, f"`contractlang {' '.join(path)} --help` shows {mark}"


def test_a_reader_that_leaves_the_pipe_early_gets_no_error_line():
    """`contractlang … | head` : the reader closed the pipe, which is nobody's mistake, so stderr stays silent
    (a full device is still one line, exit 1: tests/hardening/test_hostile_round2.py)."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first write
    try:
        proc = subprocess.run([sys.executable, "-m", "contractlang", "ctbench", "boards"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")


def test_render_writes_english_in_every_setting(tmp_path):
    """Plurals, asserts in words, and the asserts kept (money scaled) when re-labelled into another setting."""
    catering = run_cli("render", EXAMPLES / "catering-env5-a.contract")
    hotel = run_cli("render", EXAMPLES / "catering-env5-a.contract", "--setting", "hotel")
    assert catering.returncode == hotel.returncode == 0
    assert "2 Margherita Pizzas, 1 Pesto Pasta and 1 Tomato Soup each week" in catering.stdout
    assert "Stated: the total payment equals $125.\nStated: the total payment is at most the Customer's budget.\n" \
        in catering.stdout
    assert "Stated: the total payment equals $12,500.\nStated: the total payment is at most the Hotel owner's " \
        "budget.\n" in hotel.stdout
    assert "2 Conference Room Cleanings, 1 King-Sized Room Cleaning" in hotel.stdout
    for out in (catering.stdout, hotel.stdout):
        assert not re.search(r"==|<=|total pay\b", out), out
    assert "at most 1 missed item of each kind" in run_cli("render", EXAMPLES / "catering-rollover.contract").stdout
    one = tmp_path / "one.contract"
    one.write_text('contract "p" {\n  game ctbench\n  on goal {\n    blue: blue transfers 1 points to red\n  }\n}\n',
                   encoding="utf-8")
    assert "P-Blue transfers 1 point to P-Red." in run_cli("render", one).stdout


def test_run_story_names_the_parties_and_what_each_amount_is_of(tmp_path):
    source = (EXAMPLES / "hotel-cleaning.contract").read_text(encoding="utf-8")
    path = tmp_path / "named.contract"
    path.write_text(source.replace('customer: "Hotel owner"  supplier: "Cleaning provider"',
                                   'customer: "Acme Hotels"  supplier: "Sparkle Ltd"'), encoding="utf-8")
    result = run_cli("run", path, "--env", "3", "--seed", "5", "--customer", "random", "--supplier", "random")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith('Hotel owner "Acme Hotels" (random) vs Cleaning provider "Sparkle Ltd" (random), seed 5')
    assert lines[1] == "week  1: Acme Hotels pays $2,600 (due $1,800)"
    assert "week  2: spoilage detergent 0, disinfectant 0, wet_wipes 0; input prices detergent $300, " \
        "disinfectant $100, wet_wipes $200" in lines
    assert "         Sparkle Ltd orders detergent 8, disinfectant 4, wet_wipes 9 for $4,600, receives detergent 7, " \
        "disinfectant 3, wet_wipes 6, inventory detergent 7, disinfectant 3, wet_wipes 6" in lines
    assert "         Sparkle Ltd delivers conference_room 3, king_room 0, single_room 2 against conference_room 1, " \
        "king_room 1, single_room 1 required — BREACH" in lines
    assert "utilities: Acme Hotels $13,800, Sparkle Ltd $3,700" in lines
    assert not any("[" in line for line in lines)


def test_negotiate_names_each_contract_offered():
    shown = run_cli("negotiate", "--env", "1")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert 'round 1 supplier: Here is my offer. — proposes "catering-base"' in lines
    assert 'proposal 1 "catering-base" (round 1, supplier): translation ok' in lines
    assert 'outcome: agreed on proposal 2 "catering-rollover"' in lines
    assert not any("proposes a contract" in line for line in lines)


def _pixels(png: Path, colour: str, rows: slice) -> int:
    """How many pixels of `rows` (a slice of the image's height, top first) are within 0.05 of `colour`."""
    import matplotlib.colors
    import matplotlib.image

    image = matplotlib.image.imread(png)[..., :3]
    height = image.shape[0]
    band = image[int(rows.start * height):int(rows.stop * height)]
    return int((abs(band - matplotlib.colors.to_rgb(colour)) < 0.05).all(axis=-1).sum())


def test_ctbench_show_png_draws_both_paths_visibly_with_the_chips(tmp_path):
    from games.ctbench.draw import path_label

    png = tmp_path / "board.png"
    shown = run_cli("ctbench", "show", "3", "--png", png)
    assert shown.returncode == 0, shown.stderr
    # P-Blue's path (yellow, dashed) shows on the board and, beside P-Red's (black), in the legend below it
    assert _pixels(png, "#ffd21f", slice(0.1, 0.85)) > 200
    assert _pixels(png, "#ffd21f", slice(0.85, 1)) > 20 and _pixels(png, "black", slice(0.85, 1)) > 20
    assert path_label("blue", 0) == "P-Blue: best path (shortfall 0); chips 0 red, 14 blue, 2 green"
