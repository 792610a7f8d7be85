"""What the commands print for a person: lines not wrapped, a legend, stories that name the parties and what each
amount is of, plain English in every setting, one minus sign, and silence when the reader leaves the pipe."""

from __future__ import annotations

import os
import re

import pytest

from tests.helpers import EXAMPLES, ROOT, run_cli


def test_text_output_is_not_wrapped_and_ctbench_show_has_a_legend():
    shown = run_cli("ctbench", "show", "3")
    assert shown.returncode == 0
    legend = [line for line in shown.stdout.splitlines() if line.startswith("Legend: ")]
    assert legend and "r on P-Red's best path" in legend[0] and "b on P-Blue's" in legend[0]
    assert len(legend[0]) > 80  # a pipe gets the whole line, not rich's 80-column wrap


@pytest.mark.e2e
def test_a_reader_that_leaves_the_pipe_early_gets_no_error_line():
    """`contractlang … | head` : the reader closed the pipe, which is nobody's mistake, so stderr stays silent
    (a full device is still one line, exit 1: tests/hardening/test_outputs.py)."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first write
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "contractlang", "ctbench", "boards"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")


def test_render_writes_english_in_every_setting(tmp_path):
    """Plurals, asserts in words, and the asserts kept (money scaled) when re-labelled into another setting."""
    catering = run_cli("render", EXAMPLES / "catering-env5-a.contract")
    hotel = run_cli("render", EXAMPLES / "catering-env5-a.contract", "--setting", "hotel")
    assert catering.returncode == hotel.returncode == 0
    assert "2 Margherita Pizzas, 1 Pesto Pasta and 1 Tomato Soup each week" in catering.stdout
    assert (
        "Stated: the total payment equals $125.\nStated: the total payment is at most the Customer's budget.\n"
        in catering.stdout
    )
    assert (
        "Stated: the total payment equals $12,500.\nStated: the total payment is at most the Hotel owner's "
        "budget.\n" in hotel.stdout
    )
    assert "2 Conference Room Cleanings, 1 King-Sized Room Cleaning" in hotel.stdout
    for out in (catering.stdout, hotel.stdout):
        assert not re.search(r"==|<=|total pay\b", out), out
    assert "at most 1 missed item of each kind" in run_cli("render", EXAMPLES / "catering-rollover.contract").stdout
    one = tmp_path / "one.contract"
    one.write_text(
        'contract "p" {\n  game ctbench\n  on goal {\n    blue: blue transfers 1 points to red\n  }\n}\n',
        encoding="utf-8",
    )
    assert "P-Blue transfers 1 point to P-Red." in run_cli("render", one).stdout


def test_run_story_names_the_parties_and_what_each_amount_is_of(tmp_path):
    source = (EXAMPLES / "hotel-cleaning.contract").read_text(encoding="utf-8")
    path = tmp_path / "named.contract"
    path.write_text(
        source.replace(
            'customer: "Hotel owner"  supplier: "Cleaning provider"', 'customer: "Acme Hotels"  supplier: "Sparkle Ltd"'
        ),
        encoding="utf-8",
    )
    result = run_cli("run", path, "--env", "3", "--seed", "5", "--customer", "random", "--supplier", "random")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith('Hotel owner "Acme Hotels" (random) vs Cleaning provider "Sparkle Ltd" (random), seed 5')
    assert lines[1] == "week  1: Acme Hotels pays $2,600 (due $1,800)"
    assert (
        "week  2: spoilage detergent 0, disinfectant 0, wet_wipes 0; input prices detergent $300, "
        "disinfectant $100, wet_wipes $200" in lines
    )
    assert (
        "         Sparkle Ltd orders detergent 8, disinfectant 4, wet_wipes 9 for $4,600, receives detergent 7, "
        "disinfectant 3, wet_wipes 6, inventory detergent 7, disinfectant 3, wet_wipes 6" in lines
    )
    assert (
        "         Sparkle Ltd delivers conference_room 3, king_room 0, single_room 2 against conference_room 1, "
        "king_room 1, single_room 1 required — BREACH" in lines
    )
    assert "utilities: Acme Hotels $13,800, Sparkle Ltd $3,700" in lines
    assert not any("[" in line for line in lines)


@pytest.mark.e2e
def test_negotiate_names_each_contract_offered():
    shown = run_cli("negotiate", "--env", "1")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert 'round 1 supplier: Here is my offer. — proposes "catering-base"' in lines
    assert 'proposal 1 "catering-base" (round 1, supplier): translation ok' in lines
    assert 'outcome: agreed on proposal 2 "catering-rollover"' in lines
    assert not any("proposes a contract" in line for line in lines)


def test_one_minus_sign_in_tables_and_stories():
    """ASCII '-' everywhere: the paper's cells beside ours, and a story with a negative amount."""
    shipped = ROOT / "games" / "experiments" / "data" / "synthetic" / "rational"
    for name in ("tables.md", "tables.paper-tables.md"):
        text = (shipped / name).read_text()
        assert "\u2212" not in text and "/ -46.2 ± 32.4" in text
    done = run_cli("run", ROOT / "examples" / "catering-base.contract", "--env", "1", "--customer", "re")
    assert done.returncode == 0 and "\u2212" not in done.stdout + done.stderr and "-" in done.stdout
