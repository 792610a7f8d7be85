"""`contractlang lsp` driven over stdio by a real LSP client (pygls): diagnostics, hover, completion,
formatting, symbols, code actions, the verify command, and hostile documents."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from contractlang import check_source
from contractlang.formatter import format_source
from contractlang.lsp.analysis import MAX_LIVE_CHARS
from contractlang.parser import parse
from contractlang.render.prose import clause_sentences
from tests.lsp.lsp_client import ROOT, session, uri_of

pytestmark = pytest.mark.e2e  # the language server in a real process, and Neovim

EXAMPLE = ROOT / "examples" / "catering-env5-a.contract"
CTBENCH = ROOT / "examples" / "ctbench-board-24-swap.contract"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 240))


def where(text: str, needle: str, offset: int = 0) -> types.Position:
    """The LSP position of the first `needle` in `text`, `offset` characters in."""
    at = text.index(needle) + offset
    line = text.count("\n", 0, at)
    return types.Position(line=line, character=at - (text.rfind("\n", 0, at) + 1))


async def hover_text(s, uri: str, pos: types.Position) -> str | None:
    found = await s.client.text_document_hover_async(types.HoverParams(text_document=s.doc(uri), position=pos))
    return None if found is None else found.contents.value


def test_diagnostics_follow_edits_with_the_checker_spans():
    text = EXAMPLE.read_text()

    async def go():
        async with session() as s:
            uri = uri_of(EXAMPLE)
            s.open(uri, text)
            assert await s.diagnostics(uri, 1) == []
            week = where(text, "week 2:", 5)  # the `2` of the delivery in week 2
            s.edit(uri, 2, (week.line, week.character), (week.line, week.character + 1), "3")
            found = await s.diagnostics(uri, 2)
            assert [d.code for d in found] == ["E402", "E203"]  # week 2 is now missing, week 3 is misplaced
            assert (found[1].severity, found[1].range) == (
                types.DiagnosticSeverity.Error,
                types.Range(start=week, end=types.Position(line=week.line, character=week.character + 1)),
            )
            assert found[1].message == (
                "delivery scheduled in payment week 3\nhint: deliver entries go in production weeks 2, 4, 6, 8 and 10"
            )
            s.edit(uri, 3, (week.line, week.character), (week.line, week.character + 1), "2")
            assert await s.diagnostics(uri, 3) == []
            # columns are UTF-16 units: an emoji before the error counts twice
            parties = where(text, "parties {")
            line = text.splitlines()[parties.line]
            s.edit(
                uri,
                4,
                (parties.line, 0),
                (parties.line, len(line)),
                '  parties { customer: "\U0001f600" supplier: Caterer  nobody: X }',
            )
            (role,) = await s.diagnostics(uri, 4)
            assert role.code == "E103"
            assert (role.range.start.character, role.range.end.character) == (46, 52)

    run(go())


def test_every_contract_of_a_file_is_reported_with_the_diagnostics_check_prints():
    text = (ROOT / "examples" / "catering-portfolio.contract").read_text()
    broken = text.replace("$50", "$5O", 1).replace("week 11: $24", "week 12: $24")
    broken = broken.replace("weeks 5..11: $0", "weeks 5..11: $0\n    week 2: $1")
    expected = check_source(broken.replace("$5O", "$50")).diagnostics

    async def go():
        async with session() as s:
            uri = "file:///tmp/portfolio.contract"
            s.open(uri, broken.replace("$5O", "$50"))
            found = await s.diagnostics(uri, 1)
            assert [(d.code, d.range.start.line + 1, d.range.start.character + 1) for d in found] == [
                (d.code, d.span.line, d.span.column) for d in expected
            ]
            assert {d.range.start.line for d in found} & set(range(0, 15)) and {
                d.range.start.line for d in found
            } & set(range(16, 40)), "both contracts are reported"
            s.replace(uri, broken, 2)
            syntax = await s.diagnostics(uri, 2)
            assert [d.code for d in syntax] == ["E001"]
            assert syntax[0].range.start == where(broken, "$5O", 2)

    run(go())


def test_hover_explains_products_weeks_clauses_and_tiles(tmp_path):
    text = EXAMPLE.read_text()
    ir = check_source(text).contracts[0].ir

    async def go():
        async with session({"board": 24}) as s:
            uri = uri_of(EXAMPLE)
            s.open(uri, text)
            await s.diagnostics(uri, 1)
            product = await hover_text(s, uri, where(text, "pizza: $10", 1))
            assert "Price $10 each" in product and "week 2: 1, week 4: 2" in product and "9 in all" in product
            payment = await hover_text(s, uri, where(text, "week 1: $15", 5))
            assert "**Week 1** (payment): the Customer pays $15." in payment
            ranged = await hover_text(s, uri, where(text, "weeks 3..9", 1))
            assert all(f"**Week {w}** (payment)" in ranged for w in (3, 5, 7, 9))
            assert "less the contract price of anything missing from the week 4 delivery" in ranged
            production = await hover_text(s, uri, where(text, "weeks 4..10", 9))
            assert production.startswith("**Week 10** (production): the Caterer delivers 2 Margherita Pizza")
            assert "nothing may remain outstanding after it" in production
            for clause in ("substitution", "payment_deduction", "rollover", "on_breach"):
                said = await hover_text(s, uri, where(text, clause.replace("on_breach", "on breach"), 2))
                assert said.endswith(clause_sentences(ir)[clause]), clause
            assert await hover_text(s, uri, where(text, "contract ")) is None

            board = CTBENCH.read_text()
            cturi = uri_of(CTBENCH)
            s.open(cturi, board)
            await s.diagnostics(cturi, 1)
            assert await hover_text(s, cturi, where(board, "(0,1)", 1)) == "Tile (0, 1) is **red** on board 24."
            entry = await hover_text(s, cturi, where(board, "pays for red\n", 1))
            assert entry == "P-Blue pays for P-Red's move onto (2,3) with a chip of the tile's colour."
            assert (await hover_text(s, cturi, where(board, "board 24\n"))).startswith("**board 24**: the test is")
            assert (await hover_text(s, cturi, where(board, "red gives blue"))).startswith("**trade**: an executed")
            pfp = board.replace(
                "board 24\n", "board 24\n      mode pfp\n      red pays for blue red 2 and asks blue 1\n"
            )
            pfp = pfp.replace("red gives blue red 2 for blue 1", "blue defects")
            pfpuri = uri_of(tmp_path / "pfp.contract")
            s.open(pfpuri, pfp)
            await s.diagnostics(pfpuri, 1)
            assert (await hover_text(s, pfpuri, where(pfp, "mode pfp"))).startswith("**mode**: `pfp` plays the test")
            arrangement = await hover_text(s, pfpuri, where(pfp, "red pays for blue red 2"))
            assert arrangement.startswith("**Pay-for-Partner arrangement**: the first player offers to pay")
            assert "unless the test says it defects ([CT-18])" in arrangement
            assert (await hover_text(s, pfpuri, where(pfp, "blue defects"))).startswith("**defects**: the next time")
            assert "final score" in await hover_text(s, cturi, where(board, "score red"))
            count = len(s.published)
            s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"contractlang": {"board": 3}})
            )
            assert await hover_text(s, cturi, where(board, "(0,1)", 1)) == "Tile (0, 1) is **red** on board 3."
            assert [d.code for d in await s.diagnostics(cturi, after=count)] == ["E611", "E611"]

    run(go())


def test_completion_offers_keywords_names_and_weeks_of_the_right_kind():
    head = 'contract "x" {\n  game contractsim.hotel\n'

    async def labels(s, text: str) -> list[str]:
        uri = f"file:///tmp/complete-{abs(hash(text))}.contract"
        s.open(uri, text)
        pos = where(text + "\0", "\0")
        found = await s.client.text_document_completion_async(
            types.CompletionParams(text_document=s.doc(uri), position=pos)
        )
        return [item.label for item in found.items]

    async def go():
        async with session() as s:
            assert set(await labels(s, head + "  ")) == {
                "assert",
                "cover",
                "deliver",
                "on",
                "parties",
                "pay",
                "payment_deduction",
                "prices",
                "rollover",
                "substitution",
                "test",  # a scenario test may follow the clauses
            }
            assert await labels(s, head + "  deliver {\n    ") == ["week", "weeks"]
            assert await labels(s, head + "  deliver {\n    weeks 2, ") == ["2", "4", "6", "8", "10"]
            assert await labels(s, head + "  pay {\n    week ") == ["1", "3", "5", "7", "9", "11"]
            assert await labels(s, head + "  prices { king") == ["conference_room", "king_room", "single_room"]
            assert await labels(s, 'contract "x" {\n  game ') == [
                "contractsim.catering",
                "contractsim.hotel",
                "contractsim.ai-hosting",
                "ctbench",
                "ctbench.ours",
                "ctbench.paper",
            ]
            assert await labels(s, 'contract "b" { game ctbench cover { (0,1): red pays for blue with ') == [
                "red",
                "blue",
                "green",
            ]
            assert await labels(s, head + "  prices { $5 ") == []  # a syntax error before the cursor

    run(go())


def test_formatting_symbols_and_the_chip_colour_code_action():
    text = EXAMPLE.read_text()
    messy = text.replace("  prices { pizza: $10  pasta: $5  soup: $2 }", "prices{soup:$2 pizza:$10,pasta:$5}")
    board = CTBENCH.read_text()

    async def go():
        async with session({"board": 3}) as s:
            uri = "file:///tmp/messy.contract"
            s.open(uri, messy)
            await s.diagnostics(uri, 1)
            edits = await s.client.text_document_formatting_async(
                types.DocumentFormattingParams(
                    text_document=s.doc(uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)
                )
            )
            assert len(edits) == 1 and edits[0].new_text == format_source(parse(messy))
            assert edits[0].range.start == types.Position(line=0, character=0)
            assert edits[0].range.end.line == messy.count("\n")
            symbols = await s.client.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=s.doc(uri))
            )
            assert [(x.name, x.detail) for x in symbols] == [
                ("catering-env5-a", "game contractsim.catering"),
                ("tests for catering-env5-a", "2 tests"),
            ]
            assert [c.name for c in symbols[0].children] == [
                "parties",
                "prices",
                "deliver",
                "pay",
                "assert total pay == $125",
                "assert total pay <= budget",
                "substitution",
                "payment deduction",
                "rollover",
                "on breach",
                "test late payment breaches in week 3",
                "test two pizzas carried, each deducted",
                "test a third pizza short is more than rollover carries",
                "test a dear week with a short receipt, in environment 5",
            ]

            cturi = uri_of(CTBENCH)
            s.open(cturi, board)
            found = await s.diagnostics(cturi, 1)
            assert [d.code for d in found] == ["E611", "E611"]
            actions = await s.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=s.doc(cturi), range=found[0].range, context=types.CodeActionContext(diagnostics=found)
                )
            )
            assert [a.title for a in actions] == ["write `with blue chip`", "leave the colour out"]
            (edit,) = actions[0].edit.changes[cturi]
            s.edit(
                cturi,
                2,
                (edit.range.start.line, edit.range.start.character),
                (edit.range.end.line, edit.range.end.character),
                edit.new_text,
            )
            assert [d.range.start.line for d in await s.diagnostics(cturi, 2)] == [found[1].range.start.line]

    run(go())


def test_verify_command_publishes_refuted_checks_with_their_counterexample():
    text = EXAMPLE.read_text()

    async def go():
        async with session({"env": 3}) as s:
            uri = uri_of(EXAMPLE)
            s.open(uri, text)
            assert await s.diagnostics(uri, 1) == []
            count = len(s.published)
            summary = await s.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="contractlang.verify", arguments=[uri])
            )
            assert summary == [{"contract": "catering-env5-a", "proved": 8, "refuted": 1, "unknown": 0}]
            (warning,) = await s.diagnostics(uri, after=count)
            assert warning.code == "cashflow.worst_case" and warning.severity == types.DiagnosticSeverity.Warning
            assert "no order plan meets the week-8 delivery" in warning.message
            assert '; counterexample: {"failing_week":8,"plan":[' in warning.message
            assert warning.range.start.line == where(text, "weeks 4..10").line  # the entry of week 8
            # an edit makes the verdict stale: it is dropped until the next verify
            s.replace(uri, text + "\n", 2)
            assert await s.diagnostics(uri, 2) == []
            with pytest.raises(JsonRpcException, match="env"):
                await s.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="contractlang.verify", arguments=[uri, {"env": 99}])
                )

    run(go())


def test_hostile_documents_and_requests_never_stop_the_server():
    rng = random.Random(35)
    garbage = bytes(rng.randrange(256) for _ in range(200_000)).decode("latin-1")
    example = EXAMPLE.read_text()
    huge = "// padding\n" * (5_000_000 // 11)

    async def go():
        async with session({"board": 999}) as s:
            s.open("file:///tmp/garbage.contract", garbage)
            assert [d.code for d in await s.diagnostics("file:///tmp/garbage.contract", 1)] == ["E001"]
            s.open("file:///tmp/huge.contract", huge)
            (big,) = await s.diagnostics("file:///tmp/huge.contract", 1)
            assert big.code == "L001" and f"{MAX_LIVE_CHARS:,}" in big.message
            for uri in ("file:///tmp/garbage.contract", "file:///tmp/huge.contract"):
                assert (
                    await s.client.text_document_formatting_async(
                        types.DocumentFormattingParams(
                            text_document=s.doc(uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)
                        )
                    )
                    is None
                )
            assert [m.message.split(" (")[0] for m in s.messages] == [
                "contractlang: bad settings",
                "contractlang: fix the syntax error first",
                f"contractlang: the file is over {MAX_LIVE_CHARS:,} characters; run `contractlang fmt` on it",
            ]
            cut = "file:///tmp/half.contract"
            s.open(cut, "")
            for version, end in enumerate(range(0, len(example), 97), start=2):
                s.replace(cut, example[:end], version)
            last = version + 1
            s.replace(cut, example[: example.rindex("\n", 0, len(example) // 2)], last)  # cut at a line's end
            half = await s.diagnostics(cut, last)
            assert [d.code for d in half] == ["E001"] and "unexpected end of file" in half[0].message
            assert not [p for p in s.published if p.uri == cut and 1 < p.version < last], "edits were debounced"
            # requests about unknown documents or impossible positions are answered, as errors or as nothing
            with pytest.raises(JsonRpcException):
                await hover_text(s, "file:///nonexistent/none.contract", types.Position(line=0, character=0))
            assert await hover_text(s, cut, types.Position(line=10_000, character=10_000)) is None
            assert await hover_text(s, "file:///tmp/garbage.contract", types.Position(line=3, character=2)) is None
            with pytest.raises(JsonRpcException):
                await s.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="contractlang.verify", arguments=[{"not": "a uri"}])
                )
            ok = "file:///tmp/ok.contract"
            s.open(ok, example)
            assert await s.diagnostics(ok, 1) == []
            assert "Price $10 each" in await hover_text(s, ok, where(example, "pizza: $10"))
        return s.log

    log = run(go())
    # the failed handler was logged, in one line
    assert "/nonexistent/none.contract: not open in the editor, and cannot be read" in log and "Traceback" not in log


def test_headless_neovim_reads_diagnostics_and_hover_through_its_lsp_client(tmp_path):
    assert shutil.which("nvim"), "needs Neovim: apt-get install neovim (`bash scripts/test-deps` installs it)"
    out = tmp_path / "nvim.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CONTRACTLANG_FILE": str(CTBENCH),
        "CONTRACTLANG_OUT": str(out),
        "CONTRACTLANG_HOVER": "7,6",
        "CONTRACTLANG_BOARD": "3",
        "CONTRACTLANG_PYTHON": sys.executable,
        "XDG_STATE_HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path),
    }
    subprocess.run(
        ["nvim", "--headless", "--clean", "-u", str(ROOT / "tests" / "data" / "nvim_lsp.lua")],
        cwd=ROOT,
        env=env,
        timeout=180,
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    seen = json.loads(out.read_text())
    assert seen["error"] is None
    assert [(d["code"], d["lnum"], d["col"]) for d in seen["diagnostics"]] == [("E611", 8, 4), ("E611", 9, 4)]
    assert seen["diagnostics"][0]["message"].startswith("tile (1, 3) is blue on board 3")
    assert seen["hover"] == "Tile (0, 1) is **red** on board 3."


def test_every_bundled_example_opens_clean_and_verifies_as_the_verifier_says():
    from contractlang import load
    from solver.verify import verify

    examples = sorted((ROOT / "examples").glob("*.contract"))

    async def go():
        async with session() as s:
            for path in examples:
                uri = uri_of(path)
                s.open(uri, path.read_text())
                assert await s.diagnostics(uri, 1) == [], path.name
                count = len(s.published)
                summary = await s.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="contractlang.verify", arguments=[uri])
                )
                expected = [verify(c) for c in load(path)]
                assert summary == [
                    {
                        "contract": r.contract,
                        **{k: [c.status for c in r.checks].count(k) for k in ("proved", "refuted", "unknown")},
                    }
                    for r in expected
                ], path.name
                refuted = [c for r in expected for c in r.checks if c.status == "refuted"]
                assert [d.code for d in await s.diagnostics(uri, after=count)] == [c.name for c in refuted], path.name

    run(go())


def apply_edits(text: str, edits) -> str:
    """`text` after LSP text edits (ASCII text: UTF-16 columns are characters), last edit first."""
    lines = text.split("\n")
    starts = [sum(len(line) + 1 for line in lines[:k]) for k in range(len(lines))]
    offset = lambda p: starts[p.line] + p.character  # noqa: E731
    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def test_mechanical_hints_are_fixed_by_their_code_action():
    catering = EXAMPLE.read_text()
    cases = [
        ("E205", catering.replace("weeks 3..9: $25", "weeks 9..3: $25"), "write the range as 3..9"),
        (
            "E604",
            CTBENCH.read_text().replace("  cover {", "  on goal { red: blue transfers 5 points to blue }\n  cover {"),
            "write `red: red transfers ...`",
        ),
        ("E001", catering.rstrip().removesuffix("}"), "add the closing '}'"),
    ]

    async def go():
        async with session() as s:
            for k, (code, text, title) in enumerate(cases):
                uri = f"file:///tmp/fix-{k}.contract"
                s.open(uri, text)
                found = await s.diagnostics(uri, 1)
                (target,) = [d for d in found if d.code == code]
                actions = await s.client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=s.doc(uri), range=target.range, context=types.CodeActionContext(diagnostics=found)
                    )
                )
                (action,) = [a for a in actions if a.diagnostics[0].code == code]
                assert action.title == title
                fixed = apply_edits(text, action.edit.changes[uri])
                s.replace(uri, fixed, 2)
                assert await s.diagnostics(uri, 2) == [], code

    run(go())


def test_reparsing_only_the_edited_contract_gives_what_check_gives():
    from contractlang.lsp.analysis import analyse

    rng = random.Random(2026)
    text = "\n".join(p.read_text() for p in sorted((ROOT / "examples").glob("*.contract")))
    previous = analyse(text, "all.contract")
    for _ in range(40):
        at = rng.randrange(len(text))
        edit = rng.choice(["", "\n", "}", "{", '"', "// ", "x", "1", " "])
        edited = text[:at] + edit + text[at + rng.choice([0, 1]) :]
        got = analyse(edited, "all.contract", previous=previous)
        assert got.diagnostics == check_source(edited, "all.contract").diagnostics, (at, edit)
        if got.tree is not None:
            assert got.tree == parse(edited, "all.contract")
        previous = got if rng.random() < 0.5 else previous


def test_lsp_command_refuses_a_bad_option_in_one_line():
    from tests.helpers import run_cli

    for value in ("-5", str(10**30)):
        proc = run_cli("lsp", "--debounce-ms", value, cwd=ROOT)
        assert proc.returncode == 2 and "debounce" in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stdout == ""  # stdout belongs to the protocol


def test_a_code_lens_runs_one_scenario_test_and_tests_are_checked_and_explained():
    text = EXAMPLE.read_text()

    async def go():
        async with session() as s:
            uri = uri_of(EXAMPLE)
            s.open(uri, text)
            assert await s.diagnostics(uri, 1) == []
            lenses = await s.client.text_document_code_lens_async(types.CodeLensParams(text_document=s.doc(uri)))
            names = [lens.command.arguments[1] for lens in lenses]
            assert names[:3] == [
                "late payment breaches in week 3",
                "two pizzas carried, each deducted",
                "a third pizza short is more than rollover carries",
            ]
            first = lenses[0]
            assert first.range.start == where(text, '"late payment')
            assert first.command.command == "contractlang.runTest" and first.command.arguments[0] == uri
            outcome = await s.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=first.command.command, arguments=first.command.arguments)
            )
            assert outcome["passed"] is True and "on_breach" in outcome["fired"]
            # the test now pays in full: the lens's run fails at the expectation, file:line:col
            s.replace(uri, text.replace("week 3: pay $0", "week 3: pay $25"), 2)
            assert await s.diagnostics(uri, 2) == []
            outcome = await s.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=first.command.command, arguments=first.command.arguments)
            )
            at = where(text, "breach customer week 3")
            assert outcome["passed"] is False
            assert outcome["failures"][0].startswith(
                f"{EXAMPLE}:{at.line + 1}:{at.character + 1}: expected breach customer week 3 by pay, got no breach"
            )
            assert s.messages[-1].type == types.MessageType.Error
            # a test the contract cannot mean is a diagnostic at its span; hover explains an expectation
            s.replace(uri, text.replace("breach customer week 3 by pay", "breach customer week 3 by substitution"), 3)
            (problem,) = await s.diagnostics(uri, 3)
            assert problem.code == "E806" and problem.range.start == where(text, "by pay", 3)
            s.replace(uri, text, 4)
            assert await s.diagnostics(uri, 4) == []
            shown = await hover_text(s, uri, where(text, "owed customer"))
            assert shown.startswith("**expect**: what the party still owes")
            # a test of the world: its lens plays the utilities on the game's engine; its lines hover and check
            utility = next(lens for lens in lenses if "environment 5" in lens.command.arguments[1])
            outcome = await s.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=utility.command.command, arguments=utility.command.arguments)
            )
            assert outcome["passed"] is True and outcome["utilities"] == {"customer": 238, "supplier": 35}
            assert (await hover_text(s, uri, where(text, "env 5"))).startswith("**env 5**: the test is played in")
            assert (await hover_text(s, uri, where(text, "receive mozzarella"))).startswith("**receive**: what arr")
            assert "realised utility" in await hover_text(s, uri, where(text, "utility customer"))
            s.replace(uri, text.replace("receive mozzarella 4", "receive mozzarella 7"), 5)
            (problem,) = await s.diagnostics(uri, 5)
            assert problem.code == "E808" and problem.range.start == where(text, "mozzarella 4, basil 5")

    run(go())
