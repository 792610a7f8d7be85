"""The CT-Bench commands: boards, show, sweep, import, replay, report."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app, ctbench_app
from contractlang.cli.errors import InputError, UsageProblem, playing
from contractlang.cli.llm_options import LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (
    BoardSetOption,
    EstimateFlag,
    FailOnErrorOption,
    JsonFlag,
    LlmWorkers,
    RulesOption,
    choice,
    fail_on_error,
    items,
)
from contractlang.cli.play import AGENT_HELP
from contractlang.cli.render import usage_line
from contractlang.files import write_atomically

app.add_typer(ctbench_app, name="ctbench")


@ctbench_app.command("boards")
def ctbench_boards(
    board_set: Annotated[
        str,
        typer.Option("--set", help="ours (our seeded sample, the default) or paper (the CT-Bench authors' 80 grids)."),
    ] = "ours",
    json_out: JsonFlag = False,
) -> None:
    """Class counts over all 3,432 boards and an 80-board set: classes, shortfalls, best paths, baselines."""
    from contractlang.api.ctbench import boards

    summary = boards(board_set)
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "boards": 3432,
                    "classes": summary.classes,
                    "set": board_set,
                    "benchmark": [r.model_dump(by_alias=True) for r in summary.benchmark],
                }
            )
        )
        return
    typer.echo("All 3,432 boards: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.classes.items())))
    source = "the CT-Bench authors' grids (paper id, their stratum)" if board_set == "paper" else "our seeded sample"
    typer.echo(f"Benchmark set, {source} (id class rows shortfall red/blue baselines bottleneck):")
    for r in summary.benchmark:
        paper = f"  paper {r.paper_id:>3} {r.paper_bucket}" if board_set == "paper" else ""
        typer.echo(
            f"  {r.id:>2} {r.board_class:<18} {' '.join(r.rows)}  {r.shortfall[0]}/{r.shortfall[1]}"
            f"  {r.baselines[0]:>2}/{r.baselines[1]:<2} {r.bottleneck or '-':<4}{paper}"
        )


@ctbench_app.command("show")
def ctbench_show(
    board_id: Annotated[str, typer.Argument(help="Benchmark board ID (0..79, or SET:ID such as paper:17).")],
    board_set: BoardSetOption = None,
    png: Annotated[Path | None, typer.Option("--png", help="Also draw the board to this PNG file.")] = None,
) -> None:
    """Draw a board: colours, start, goal and both players' best paths."""
    from contractlang.api.ctbench import show
    from contractlang.cli.render import stdout_console

    picture = show(board_id, board_set, png)
    console = stdout_console()
    console.print(f"Board {picture.ref} ({picture.board_class}, key {picture.key})")
    console.print(picture.text)
    for p, path in picture.best_paths.items():
        console.print(f"P-{p.capitalize()} best path {' '.join(map(str, path))}, shortfall {picture.shortfalls[p]}")
    if png is not None:
        console.print(f"wrote {png}")


@ctbench_app.command("sweep")
@llm_options(max_tokens=8192, timeout=120.0)
def ctbench_sweep(
    boards: Annotated[str, typer.Option(help="'all' or comma-separated board IDs (ID or SET:ID).")] = "all",
    board_set: BoardSetOption = None,
    rules: RulesOption = "authors",
    conditions: Annotated[
        str,
        typer.Option(
            "--conditions", "--condition", help="Comma-separated: none, prog_trading, prog_points, nl_trading."
        ),
    ] = "none,prog_trading,prog_points,nl_trading",
    modes: Annotated[str, typer.Option("--modes", "--mode", help="Comma-separated: pfp, trade.")] = "pfp,trade",
    agents: Annotated[
        str,
        typer.Option(
            help="Comma-separated pairings 'RED vs BLUE' (or RED:BLUE for built-in "
            "agents), e.g. 'planner vs exploiter'."
        ),
    ] = "planner:planner",
    red: Annotated[
        str | None, typer.Option(help=f"P-Red in every game (with --blue, instead of --agents): {AGENT_HELP}.")
    ] = None,
    blue: Annotated[str | None, typer.Option(help="P-Blue in every game (with --red).")] = None,
    judge: Annotated[
        str, typer.Option(help="Contract judge (summaries, NL-Trading moves): rules (offline) or llm[:MODEL].")
    ] = "rules",
    seed: Annotated[int, typer.Option(min=0, help="Seed for random agents.")] = 0,
    repeats: Annotated[
        int,
        typer.Option(
            min=1,
            max=1000,
            help="Games per (board, condition, mode, pairing); repeat r draws agent randomness from (seed, r).",
        ),
    ] = 1,
    hidden: Annotated[bool, typer.Option("--hidden", help="Hide each player's state from the other.")] = False,
    workers: LlmWorkers = None,
    ray: Annotated[str | None, typer.Option(help="Run on Ray instead: a cluster address, or 'local'.")] = None,
    out: Annotated[
        Path, typer.Option(help="Directory for games.jsonl and summary.json; a rerun into it resumes.")
    ] = Path("ctbench-sweep"),
    fail_on_errors: FailOnErrorOption = None,
    estimate: EstimateFlag = False,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Run boards × contract conditions × modes × pairings × repeats, each game stored as it ends; resumable.
    Offline agents by default; LLM players and judges (llm[:MODEL]) and external agents (cmd:PROGRAM) too. A
    game whose model calls fail is stored as errored and the sweep goes on; a rerun retries it."""
    from contractlang.api.ctbench import sweep
    from contractlang.progress import job_progress
    from contractlang.vocab import BOARD_SETS

    if board_set is not None:
        choice(board_set, BOARD_SETS, "board set")
    refs = "all" if boards == "all" else items(boards, "--boards")
    conds, mode_list = items(conditions, "--conditions"), items(modes, "--modes")
    if (red is None) != (blue is None):
        raise UsageProblem("--red and --blue go together (or give --agents)")
    pairs = [(red, blue)] if red is not None else [_pairing(pair) for pair in items(agents, "--agents")]
    allowed = fail_on_error(fail_on_errors)
    settings = llm_settings([n for pair in pairs for n in pair] + [judge], llm_flags, calls=not estimate)
    games = partial(sweep, out, refs, board_set, conds, mode_list, pairs, repeats, seed, hidden, judge, rules)
    if estimate:
        from contractlang.cli.experiments import echo_estimate

        try:
            with playing():
                plan = games(llm=settings, estimate=True)
        except ValueError as exc:
            raise UsageProblem(str(exc)) from None
        echo_estimate(plan, json_out)
        return
    llm_client(settings)  # a recordings file that cannot be used stops the sweep here, before any game
    try:
        with job_progress(json_out) as advance, playing():
            swept = games(
                workers, ray, settings, advance, lambda note: typer.echo(note, err=True), fail_on_error=allowed
            )
    except RuntimeError as exc:
        raise InputError(str(exc)) from None
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    result = swept.result
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "games": len(result.records),
                    "played": result.played,
                    "out": str(out),
                    "errored": result.errored,
                    "limited": result.limited,
                    "rows": [r.model_dump(mode="json") for r in result.rows],
                    "llm": result.llm_usage.model_dump(),
                    "llm_null_actions": result.null_actions,
                }
            )
        )
        return
    swept.print_summary()
    if result.llm_usage.calls:
        typer.echo(usage_line(result.llm_usage) + f"; invalid replies taken as the null action: {result.null_actions}")
    left_out = (
        f"; {result.errored} errored and {result.limited} limited games left out of the summary"
        if result.errored or result.limited
        else ""
    )
    typer.echo(
        f"{len(result.records)} games ({result.played} played now{left_out}); results in {result.store} and "
        f"{result.summary}"
    )


def _pairing(text: str) -> tuple[str, str]:
    """'RED vs BLUE', or RED:BLUE when neither name holds a colon (llm:MODEL and cmd:PROGRAM do)."""
    red, sep, blue = text.partition(" vs ")
    if not sep:
        red, sep, blue = text.partition(":")
        if not sep or ":" in blue or red in ("llm", "cmd", "py"):
            raise UsageProblem(f"write the pairing {text!r} as 'RED vs BLUE' (agent names may hold colons)")
    if not red.strip() or not blue.strip():
        raise UsageProblem(f"the pairing {text!r} names no agent on one side")
    return red.strip(), blue.strip()


@ctbench_app.command("import")
def ctbench_import(
    directory: Annotated[
        Path,
        typer.Argument(
            help="A copy of the authors' public_logs/ (or any folder of game "
            "directories holding metadata.json and event_log_*.json)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The runs file to write (JSON lines, one game each).")],
    json_out: JsonFlag = False,
) -> None:
    """Import the CT-Bench authors' published game logs as typed games with contracts in contractlang."""
    from contractlang.api.ctbench import import_logs
    from contractlang.progress import job_progress

    def skipped(problem) -> None:
        if not json_out:
            typer.echo(f"skipped {problem}", err=True)

    with job_progress(json_out) as advance:
        summary = import_logs(directory, out, advance, skipped)
    if json_out:
        typer.echo(json.dumps({"ok": True, **summary.model_dump(mode="json")}))
        return
    typer.echo(
        f"imported {summary.imported} of {summary.directories} games into {out}: {summary.complete} "
        f"complete, {summary.incomplete} cut short (no final state), {summary.superseded} superseded by a "
        f"later run of the same game; {len(summary.problems)} skipped"
    )


@ctbench_app.command("replay")
def ctbench_replay(
    runs: Annotated[Path, typer.Argument(help="A runs file written by `ctbench import`.")],
    rules: RulesOption = "authors",
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write every game's verdict here (JSON lines).")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Re-play every imported game through our engine and Monitor under a rule set; report where each parts from
    its log (first differing turn, the final state field by field) and every rule it needs to agree."""
    from contractlang.api.ctbench import replay

    replayed = replay(runs, rules)
    summary = replayed.summary
    if out is not None:
        write_atomically(out, "".join(v.model_dump_json() + "\n" for v in summary.verdicts))
    if json_out:
        payload = summary.model_dump(mode="json", exclude={"verdicts"})
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    **payload,
                    "rule_texts": replayed.rule_texts,
                    "games": [v.model_dump(mode="json") for v in summary.verdicts],
                }
            )
        )
        return
    typer.echo(replayed.text())


@ctbench_app.command("report")
def ctbench_report(
    runs: Annotated[Path, typer.Argument(help="A runs file: `ctbench import` output or a sweep's games.jsonl.")],
    png: Annotated[
        Path | None,
        typer.Option(
            "--png",
            help="Also draw the panels of the paper's Figures 4 and 19 "
            "(joint reward, Gini, Both Finished, BBB by condition, "
            "board class and model) into this directory.",
        ),
    ] = None,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all-runs",
            help="Imported logs: keep every complete run, not only the latest of each game (the paper's choice).",
        ),
    ] = False,
    paper: Annotated[
        bool,
        typer.Option(
            "--paper",
            help="Compare with the paper: its model names, its value beside "
            "every cell that differs, cells resting on runs the input "
            "lacks marked as such.",
        ),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """The paper's Tables 1–8 and 11, the contract-formation measures and the panels of Figures 4 and 19, from
    imported logs or our sweeps."""
    from contractlang.api.ctbench import report as paper_report

    result = paper_report(runs, png, all_runs, paper)
    report = result.report
    if json_out:
        c = report.comparison
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "games": report.games,
                    "skipped": report.skipped,
                    "rules": report.rules,
                    "tables": [t.model_dump(mode="json") for t in report.tables],
                    "paper_cells_compared": c.compared,
                    "paper_differences": [d.model_dump() for d in c.differences],
                    "paper_cells_absent": [d.model_dump() for d in c.absent],
                    "table_11": [r.model_dump(mode="json") for r in report.promises],
                    "formation": report.formation.model_dump(mode="json"),
                    "plots": [str(p) for p in report.plots],
                }
            )
        )
        return
    typer.echo(result.text())
