"""The `contractlang` command line: the one module that wires contractlang, solver and games together.

Exit codes: 0 ok, 1 the input is wrong (diagnostics, never a traceback), 2 usage error, 3 an internal error
(one line; CONTRACTLANG_DEBUG=1 shows the traceback). Under --json every failure is one JSON object on stdout.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang import check_source
from contractlang.checker import check as check_tree
from contractlang.diagnostics import ContractError, printable
from contractlang.files import FileError, read_capped, write_atomically
from contractlang.formatter import format_source
from contractlang.ir import CheckedContract
from contractlang.parser import parse
from contractlang.vocab import Frozen

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Author, check, verify and run contracts for ContractSim and CT-Bench.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


class InputError(Exception):
    """Bad input found by the CLI itself (missing file, unknown name): one line, exit 1."""


class UsageProblem(Exception):
    """Options that cannot go together or do not apply to this input: one line, exit 2."""


class CheckFailed(Exception):
    """A contract file with diagnostics: printed with carets (or as JSON), exit 1."""

    def __init__(self, diagnostics, source: str):
        self.diagnostics = list(diagnostics)
        self.source = source
        super().__init__(f"{len(self.diagnostics)} error(s) in the contract")


def _read(path: Path) -> tuple[bytes, str]:
    return read_capped(path), str(path)


def _emit_diagnostics(diags, source: str | None) -> None:
    for d in diags:
        typer.echo(d.render(source), err=True)


def _source_text(data: bytes) -> str:
    """Text for caret lines; undecodable bytes show as U+FFFD so a bad-UTF-8 report still points."""
    return data.decode("utf-8", errors="replace")


def load_contracts(path: Path) -> list[CheckedContract]:
    """Read and check a contract file for a command; diagnostics are printed and exit 1 on failure."""
    data, name = _read(path)
    result = check_source(data, name)
    if not result.ok:
        raise CheckFailed(result.diagnostics, _source_text(data))
    return list(result.contracts)


def load_one(path: Path) -> CheckedContract:
    contracts = load_contracts(path)
    if len(contracts) > 1:
        raise InputError(f"{path}: holds {len(contracts)} contracts; this command takes a file with one")
    return contracts[0]


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Contract files to parse and type-check.")],
    json_out: JsonFlag = False,
) -> None:
    """Parse and type-check contract files; report every error as file:line:col with a hint."""
    failed = False
    for path in files:
        try:
            data, name = _read(path)
        except FileError as exc:
            failed = True
            typer.echo(json.dumps({"file": str(path), "ok": False, "error": str(exc)}) if json_out
                       else f"error: {printable(str(exc))}", err=not json_out)
            continue
        result = check_source(data, name)
        failed |= not result.ok
        if json_out:
            payload: dict = {"file": name, "ok": result.ok}
            if result.ok:
                payload["contracts"] = [
                    {"name": c.ir.name, "game": c.ir.kind, "terms": c.ir.terms_json()} for c in result.contracts
                ]
                if len(result.contracts) == 1:
                    payload["terms"] = result.contracts[0].ir.terms_json()
            else:
                payload["diagnostics"] = [d.to_json() for d in result.diagnostics]
            typer.echo(json.dumps(payload))
        elif result.ok:
            names = ", ".join(c.ir.name for c in result.contracts)
            typer.echo(f"{name}: ok ({len(result.contracts)} contract{'s' * (len(result.contracts) != 1)}: {names})")
        else:
            _emit_diagnostics(result.diagnostics, _source_text(data))
    if failed:
        raise typer.Exit(1)


@app.command()
def fmt(
    files: Annotated[list[Path], typer.Argument(help="Contract files to format.")],
    check_only: Annotated[bool, typer.Option("--check", help="Exit 1 if a file is not in canonical form.")] = False,
    write: Annotated[bool, typer.Option("--write", "-w", help="Rewrite the files in place.")] = False,
) -> None:
    """Print contracts in canonical form (stdout), rewrite them (--write) or test them (--check)."""
    if check_only and write:
        raise UsageProblem("--check and --write do not go together: --check only reports, --write rewrites")
    unformatted = []
    for path in files:
        try:
            data, name = _read(path)
            tree = parse(data, name)
        except FileError as exc:
            unformatted.append(str(path))
            typer.echo(f"error: {printable(str(exc))}", err=True)
            continue
        except ContractError as err:
            unformatted.append(str(path))
            _emit_diagnostics(err.diagnostics, _source_text(data))
            continue
        # the formatter prints numbers from their values: one the checker refuses would change on the way
        too_large = [d for d in check_tree(tree).diagnostics if d.code == "E003"]
        if too_large:
            unformatted.append(name)
            _emit_diagnostics(too_large, _source_text(data))
            continue
        text = format_source(tree)
        original = data.decode("utf-8")
        if check_only:
            if text != original:
                unformatted.append(name)
                typer.echo(f"{name}: not in canonical form (run `contractlang fmt --write {name}`)", err=True)
        elif write:
            if text != original:
                write_atomically(path, text)
                typer.echo(f"{name}: reformatted")
        else:
            typer.echo(text, nl=False)
    if unformatted:
        raise typer.Exit(1)


@app.command()
def trace(
    contract: Annotated[Path, typer.Argument(help="The contract the trajectory was played under.")],
    events: Annotated[Path, typer.Argument(help="Event log: one JSON object per line.")],
    json_out: JsonFlag = False,
) -> None:
    """Replay a trajectory: dues, compliance, prefix status, memory, enforcement, and who breached first."""
    from contractlang.interpreter.trace import TraceError, read_events, replay, trace_json

    checked = load_one(contract)
    try:
        monitor, steps = replay(checked.ir, read_events(_read(events)[0], str(events), checked.ir.kind), str(events))
    except TraceError as exc:
        raise InputError(str(exc)) from None
    report = trace_json(monitor, steps)
    if json_out:
        typer.echo(json.dumps(report))
        return
    from contractlang.render_terminal import print_trace

    print_trace(report, checked.ir)


ctbench_app = typer.Typer(help="CT-Bench: the board set, board pictures, sweeps and the authors' logs.",
                          no_args_is_help=True)
app.add_typer(ctbench_app, name="ctbench")

AGENT_HELP = ("planner, conditional, exploiter, random, llm[:MODEL] (an LLM player: needs ANTHROPIC_API_KEY, or "
              "--replay), or cmd:PROGRAM (an external agent speaking JSON lines)")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
RecordingsOption = Annotated[Optional[Path], typer.Option(
    "--recordings", help="SQLite file every LLM response is recorded in (default .contractlang-cache/llm.sqlite); a "
                         "rerun serves the recorded responses.")]
ReplayFlag = Annotated[bool, typer.Option("--replay", help="Serve recorded LLM responses only, never calling the "
                                                           "API: replays a recorded run offline, no key needed.")]
EffortOption = Annotated[Optional[str], typer.Option(help=f"LLM effort: {', '.join(EFFORTS)} (models that take it).")]
ThinkingFlag = Annotated[bool, typer.Option("--thinking", help="Adaptive thinking for the LLM.")]
MaxTokensOption = Annotated[int, typer.Option("--max-tokens", min=1, help="LLM output token limit per call.")]
LlmTimeoutOption = Annotated[float, typer.Option("--llm-timeout", min=0.001, help="Seconds one LLM call may take, "
                                                                                  "retries and waits included.")]
BaseUrlOption = Annotated[Optional[str], typer.Option("--base-url", help="Anthropic API base URL, e.g. a proxy.")]
GuidanceOption = Annotated[Optional[list[str]], typer.Option(
    "--guidance", help="A prompt-guidance clause for LLM agents (spec §8 ablations; repeatable): contingencies, "
                       "net-utility, no-worse-prior (negotiation); prohibition, institutional, reciprocity, planning "
                       "(performance).")]


class LlmFlags(Frozen):
    """The LLM options of one command line (see `llm_options`)."""

    recordings: Optional[Path] = None
    replay: bool = False
    effort: Optional[str] = None
    thinking: bool = False
    max_tokens: int
    llm_timeout: float
    base_url: Optional[str] = None


def llm_options(max_tokens: int, timeout: float):
    """Give a command the LLM options: typer sees them as its own parameters (before --json), and the command
    receives them as one `llm_flags` value."""
    options = [("recordings", RecordingsOption, None), ("replay", ReplayFlag, False), ("effort", EffortOption, None),
               ("thinking", ThinkingFlag, False), ("max_tokens", MaxTokensOption, max_tokens),
               ("llm_timeout", LlmTimeoutOption, timeout), ("base_url", BaseUrlOption, None)]

    def wrap(fn):
        own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name != "llm_flags"]
        added = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                   annotation=annotation) for name, annotation, default in options]
        params = [p for p in own if p.name != "json_out"] + added + [p for p in own if p.name == "json_out"]

        @functools.wraps(fn)
        def command(**kwargs):
            flags = LlmFlags(**{name: kwargs.pop(name) for name, _, _ in options})
            return fn(**kwargs, llm_flags=flags)

        command.__signature__ = inspect.Signature(params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


def _check_base_url(base_url: str | None) -> None:
    if base_url is None:
        return
    from urllib.parse import urlparse

    parsed = urlparse(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageProblem(f"--base-url must be an http:// or https:// address, not {base_url!r}")


def _llm_settings(names: list[str], flags: LlmFlags):
    """LLM settings when any of `names` (agents, judge, translator) is `llm[:MODEL]`; None otherwise. Without
    a key, and not replaying, an LLM option is bad input that says how to set one."""
    from contractlang.llm import DEFAULT_RECORDINGS, KEY_HINT, LlmSettings, agent_model

    uses = [n for n in names if agent_model(n) is not None]
    if not uses:
        given = [flag for flag, value in (("--recordings", flags.recordings), ("--replay", flags.replay),
                                          ("--effort", flags.effort), ("--thinking", flags.thinking),
                                          ("--base-url", flags.base_url)) if value]
        if given:
            raise UsageProblem(f"{given[0]} applies to LLM agents, judges and translators (llm[:MODEL]); none is "
                               "chosen")
        return None
    _check_base_url(flags.base_url)
    if flags.effort is not None:
        _choice(flags.effort, EFFORTS, "effort")
    if not flags.replay and not os.environ.get("ANTHROPIC_API_KEY"):
        raise InputError(f"{uses[0]} needs the Anthropic API: {KEY_HINT}")
    return LlmSettings(max_tokens=flags.max_tokens, effort=flags.effort, thinking=flags.thinking,
                       timeout_seconds=flags.llm_timeout, max_retries=5, base_url=flags.base_url,
                       recordings=flags.recordings or DEFAULT_RECORDINGS, replay=flags.replay)


def _llm_client(settings):
    from contractlang.llm import LlmClient, MissingApiKey

    if settings is None:
        return None
    try:
        return LlmClient(settings, os.environ.get("ANTHROPIC_API_KEY"))
    except MissingApiKey as exc:
        raise InputError(str(exc)) from None


@contextmanager
def _llm_status(client, json_out: bool):
    """A spinner on stderr while LLM agents play (a game makes tens of model calls); nothing otherwise."""
    if client is None or json_out:
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status("playing with LLM agents"):
        yield


def _usage_line(usage) -> str:
    cost = "cost unknown for this model" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    return (f"LLM: {usage.calls} call(s) ({usage.replayed} replayed, {usage.failed} failed), "
            f"{usage.input_tokens:,} input and {usage.output_tokens:,} output tokens, {cost}")


def _board(board_id: int):
    from games.ctbench.board import benchmark_board

    try:
        return benchmark_board(board_id)
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None


@contextmanager
def _playing(tables=None):
    """Games as bad input, one line each: an external agent that breaks the protocol (games/external.py), or a
    DP table directory (`tables`) that cannot be written."""
    from games.external import AgentError

    try:
        yield
    except AgentError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        if tables is None:
            raise
        raise InputError(f"{tables.directory}: cannot keep solved DP tables there ({exc.strerror or exc}); "
                         "run from a writable directory") from None


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {what} {value!r}; choose from {', '.join(allowed)}")
    return value


@app.command()
@llm_options(max_tokens=8192, timeout=120.0)
def run(
    contract: Annotated[Path, typer.Argument(help="The contract to play under.")],
    board: Annotated[Optional[int], typer.Option("--board", help="CT-Bench benchmark board ID (0..79).")] = None,
    env: Annotated[Optional[int], typer.Option("--env", help="ContractSim environment (1..6).")] = None,
    customer: Annotated[str, typer.Option(help="ContractSim Customer: rc, re, rcc, random, llm[:MODEL] (an LLM agent, "
                                               "§10), or cmd:PROGRAM (an external agent speaking JSON lines).")]
    = "rcc",
    supplier: Annotated[str, typer.Option(help="ContractSim Supplier: rc, re, rcc, random, llm[:MODEL] or cmd:PROGRAM "
                                               "(rc and rcc solve or load the contract's DP table).")] = "rcc",
    red: Annotated[str, typer.Option(help=f"P-Red agent: {AGENT_HELP}.")] = "planner",
    blue: Annotated[str, typer.Option(help=f"P-Blue agent: {AGENT_HELP}.")] = "planner",
    mode: Annotated[str, typer.Option(help="Trading mechanism: pfp (Pay-for-Partner) or trade.")] = "pfp",
    hidden: Annotated[bool, typer.Option("--hidden", help="Hide each player's state from the other.")] = False,
    seed: Annotated[Optional[int], typer.Option(min=0, help="Seed: ContractSim shocks (default 42, spec §3) or "
                                                            "CT-Bench random agents (default 0).")] = None,
    log: Annotated[Optional[Path], typer.Option(help="Write the game's events as JSON lines here.")] = None,
    guidance: GuidanceOption = None,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Play one game under a contract (ContractSim with --env, CT-Bench with --board): story and scores."""
    checked = load_one(contract)
    _game_options([checked], env, board, contract)
    players = [customer, supplier] if checked.ir.kind == "contractsim" else [red, blue]
    settings = _llm_settings(players, llm_flags)
    if checked.ir.kind == "contractsim":
        from games.contractsim.llm_agents import guidance_for

        try:
            guidance_for(tuple(guidance or ()), "performance", "customer")
        except KeyError as exc:
            raise InputError(str(exc.args[0])) from None
        _run_contractsim(checked, env, customer, supplier, 42 if seed is None else seed, log, json_out,
                         _llm_client(settings), tuple(guidance or ()))
        return
    if guidance:
        raise UsageProblem("--guidance applies to ContractSim LLM agents")
    if board is None:
        raise InputError("a CT-Bench contract needs --board ID (0..79; see `contractlang ctbench boards`)")
    from contractlang.checker import check_board
    from games.ctbench.agents import make_agent
    from games.ctbench.play import play_game

    bench = _board(board)
    problems = check_board(checked, bench.board.colour, f"board {board}")
    if problems:
        raise CheckFailed(problems, _source_text(_read(contract)[0]))
    _choice(mode, ("pfp", "trade"), "mode")
    import numpy as np

    from contractlang.llm import agent_model

    for name in (red, blue):
        try:
            if agent_model(name) is None:
                make_agent(name, np.random.default_rng(0))
        except KeyError as exc:
            raise InputError(str(exc.args[0])) from None
    client = _llm_client(settings)
    with _llm_status(client, json_out), _playing():
        record = play_game(bench, "file", mode, red, blue, seed=seed or 0, contract=checked.ir, visible=not hidden,
                           keep_log=True, llm=client)
    if log is not None:
        write_atomically(log, "".join(json.dumps(e) + "\n" for e in record.log))
    if json_out:
        payload = record.model_dump(mode="json", exclude={"log"})
        payload["scores"] = {"red": record.scores[0], "blue": record.scores[1]}
        typer.echo(json.dumps(payload))
        return
    from games.ctbench.story import story

    typer.echo(story(record, bench))
    if record.llm_calls:
        typer.echo(_usage_line(record.llm_usage))


def _run_contractsim(checked, env, customer, supplier, seed, log, json_out, llm=None, guidance=()) -> None:
    from games.contractsim.environments import environment
    from games.contractsim.run import play

    if env is None:
        raise InputError("a ContractSim contract needs --env N (1..6)")
    from solver.dp import TableCache

    tables = TableCache()
    try:
        environment_value = environment(env)
        with _llm_status(llm, json_out), _playing(tables):
            record = play(checked.ir, environment_value, customer, supplier, seed=seed, tables=tables, llm=llm,
                          guidance=guidance)
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None
    p_sat = tables.solve(checked.ir, environment_value)[0].p_sat if supplier in ("rc", "rcc") else None
    m = checked.ir.setting_info.multiplier
    if log is not None:
        write_atomically(log, "".join(json.dumps(e) + "\n" for e in record.monitor_events()))
    if json_out:
        payload = record.model_dump(exclude={"log"})  # a run record, base units: `metrics` reads it back
        payload.update(dollars={"u_customer": record.u_customer * m, "u_supplier": record.u_supplier * m},
                       p_sat=p_sat,
                       violations={"customer": next((w.week for w in record.weeks if w.role == "customer"
                                                     and not w.compliant), None),
                                   "supplier": next((w.week for w in record.weeks if w.role == "supplier"
                                                     and not w.compliant), None)},
                       trajectory=[e.model_dump() for e in record.log], llm_usage=record.llm_usage.model_dump())
        typer.echo(json.dumps(payload))
        return
    from games.contractsim.story import story

    typer.echo(story(record, checked.ir))
    if p_sat is not None:
        typer.echo(f"P_sat of this contract here (exact DP): {p_sat:.6f}")
    if record.llm_calls:
        defaults = ", ".join(f"{role} {n}" for role, n in record.llm_defaults.items())
        typer.echo(_usage_line(record.llm_usage) + f"; requests defaulted to zero: {defaults}")


@app.command()
def metrics(
    logs: Annotated[list[Path], typer.Argument(help="Run records: JSON lines written by `run --env N --json`.")],
    json_out: JsonFlag = False,
) -> None:
    """ContractSim performance metrics (spec §15) over run records, per role, in the layout of Tables 7–10.

    Amounts are in Catering base units for every setting, as in the paper's tables. Regret and compliant
    regret replay each run with the role played by RCC (same contract, environment, counterparty and seed)."""
    from contractlang.progress import job_progress
    from games.contractsim.metrics import summarise
    from games.contractsim.run import RunRecord
    from solver.dp import TableCache

    runs = []
    for path in logs:
        data, name = _read(path)
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError("a line must be one JSON object")
                runs.append(RunRecord.model_validate({k: v for k, v in obj.items() if k in RunRecord.model_fields}))
            except (ValueError, RecursionError) as exc:
                reason = (str(exc) or "nested too deeply").splitlines()[0]
                raise InputError(f"{name}:{number}: not a run record ({reason})") from None
    if not runs:
        raise InputError("no run records found")
    counterfactuals: dict[str, list[RunRecord] | None] = {"customer": None, "supplier": None}
    if all(r.contract_ir is not None for r in runs):
        from contractlang.llm import agent_model

        # replaying a role against an LLM counterparty would make new model calls: that role's regret is left out
        roles = [role for role in counterfactuals if not any(
            agent_model(r.supplier if role == "customer" else r.customer) for r in runs)]
        for role in counterfactuals.keys() - set(roles):
            typer.echo(f"regret of the {role} left out: its counterparty is an LLM agent in some runs, and "
                       "replaying it would make new model calls", err=True)
        tables = TableCache()
        replays, replayed = len(roles) * len(runs), 0
        with job_progress(json_out) as advance, _playing(tables):
            advance("counterfactual RCC runs", 0, replays)
            for role in roles:
                counterfactuals[role] = []
                for r in runs:
                    counterfactuals[role].append(r.counterfactual(role, tables))
                    replayed += 1
                    advance("counterfactual RCC runs", replayed, replays)
    else:
        typer.echo("regret left out: some records hold no contract terms (records from `run --json` of this "
                   "version do)", err=True)
    summaries = [summarise(runs, role, counterfactuals[role]) for role in ("customer", "supplier")]
    if json_out:
        typer.echo(json.dumps([s.model_dump() for s in summaries]))
        return
    from games.contractsim.story import print_metrics

    print_metrics(summaries)


@ctbench_app.command("boards")
def ctbench_boards(
    board_set: Annotated[str, typer.Option("--set", help="ours (our seeded sample, the default) or paper (the "
                                                         "CT-Bench authors' 80 grids).")] = "ours",
    json_out: JsonFlag = False,
) -> None:
    """Class counts over all 3,432 boards and an 80-board set: classes, shortfalls, best paths, baselines."""
    from collections import Counter

    from games.ctbench.board import all_boards, benchmark_boards

    _choice(board_set, ("ours", "paper"), "board set")
    counts = Counter(b.classification for b in all_boards())
    bench = benchmark_boards(board_set)
    rows = []
    for b in bench:
        paths = {p: b.board.best_path(p) for p in ("red", "blue")}
        rows.append({"id": b.id, "paper_id": b.source_id, "paper_bucket": b.source_bucket, "key": b.board.key,
                     "class": b.board_class, "rows": b.board.rows(),
                     "shortfall": [paths["red"][1], paths["blue"][1]],
                     "best_paths": {p: [list(t) for t in paths[p][0]] for p in paths},
                     "baselines": [b.board.baseline("red"), b.board.baseline("blue")],
                     "bottleneck": b.board.bottleneck()})
    if json_out:
        typer.echo(json.dumps({"boards": 3432, "classes": dict(counts), "set": board_set, "benchmark": rows}))
        return
    typer.echo("All 3,432 boards: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    source = "the CT-Bench authors' grids (paper id, their stratum)" if board_set == "paper" else "our seeded sample"
    typer.echo(f"Benchmark set, {source} (id class rows shortfall red/blue baselines bottleneck):")
    for r in rows:
        paper = f"  paper {r['paper_id']:>3} {r['paper_bucket']}" if board_set == "paper" else ""
        typer.echo(f"  {r['id']:>2} {r['class']:<18} {' '.join(r['rows'])}  {r['shortfall'][0]}/{r['shortfall'][1]}"
                   f"  {r['baselines'][0]:>2}/{r['baselines'][1]:<2} {r['bottleneck'] or '-':<4}{paper}")


@ctbench_app.command("show")
def ctbench_show(
    board_id: Annotated[int, typer.Argument(help="Benchmark board ID (0..79).")],
    png: Annotated[Optional[Path], typer.Option("--png", help="Also draw the board to this PNG file.")] = None,
) -> None:
    """Draw a board: colours, start, goal and both players' best paths."""
    from rich.console import Console

    from games.ctbench.draw import board_text, save_png

    bench = _board(board_id)
    b = bench.board
    console = Console()
    console.print(f"Board {board_id} ({bench.board_class}, key {b.key})")
    console.print(board_text(b))
    for p in ("red", "blue"):
        path, short = b.best_path(p)
        console.print(f"P-{p.capitalize()} best path {' '.join(map(str, path))}, shortfall {short}")
    if png is not None:
        save_png(b, png, title=f"board {board_id} ({bench.board_class})")
        console.print(f"wrote {png}")


@ctbench_app.command("sweep")
@llm_options(max_tokens=8192, timeout=120.0)
def ctbench_sweep(
    boards: Annotated[str, typer.Option(help="'all' or comma-separated board IDs.")] = "all",
    conditions: Annotated[str, typer.Option("--conditions", "--condition",
                                            help="Comma-separated: none, prog_trading, prog_points, nl_trading.")]
    = "none,prog_trading,prog_points,nl_trading",
    modes: Annotated[str, typer.Option("--modes", "--mode", help="Comma-separated: pfp, trade.")] = "pfp,trade",
    agents: Annotated[str, typer.Option(help="Comma-separated pairings 'RED vs BLUE' (or RED:BLUE for built-in "
                                             "agents), e.g. 'planner vs exploiter'.")] = "planner:planner",
    red: Annotated[Optional[str], typer.Option(help=f"P-Red in every game (with --blue, instead of --agents): "
                                                    f"{AGENT_HELP}.")] = None,
    blue: Annotated[Optional[str], typer.Option(help="P-Blue in every game (with --red).")] = None,
    judge: Annotated[str, typer.Option(help="Contract judge (summaries, NL-Trading moves): rules (offline) or "
                                            "llm[:MODEL].")] = "rules",
    seed: Annotated[int, typer.Option(min=0, help="Seed for random agents.")] = 0,
    repeats: Annotated[int, typer.Option(min=1, help="Games per (board, condition, mode, pairing); repeat r "
                                                     "draws agent randomness from (seed, r).")] = 1,
    hidden: Annotated[bool, typer.Option("--hidden", help="Hide each player's state from the other.")] = False,
    workers: Annotated[Optional[int], typer.Option(min=1, help="Local worker processes (default: all cores).")]
    = None,
    ray: Annotated[Optional[str], typer.Option(help="Run on Ray instead: a cluster address, or 'local'.")] = None,
    out: Annotated[Path, typer.Option(help="Directory for games.jsonl and summary.json; a rerun into it resumes.")]
    = Path("ctbench-sweep"),
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Run boards × contract conditions × modes × pairings × repeats; resumable. Offline agents by default;
    LLM players and judges (llm[:MODEL]) and external agents (cmd:PROGRAM) too."""
    from contextlib import closing

    from contractlang.llm import agent_model
    from contractlang.progress import job_progress
    from games.ctbench.agents import AGENTS
    from games.ctbench.board import benchmark_boards
    from games.ctbench.metrics import summarise
    from games.external import is_external
    from games.ctbench.play import CONDITIONS
    from games.ctbench.sweep import GameSpec, record_store, run_specs

    ids = [b.id for b in benchmark_boards()] if boards == "all" else _int_list(boards, "board ID")
    for i in ids:
        _board(i)
    conds = [_choice(c, CONDITIONS, "condition") for c in conditions.split(",")]
    mode_list = [_choice(m, ("pfp", "trade"), "mode") for m in modes.split(",")]
    if (red is None) != (blue is None):
        raise UsageProblem("--red and --blue go together (or give --agents)")
    pairs = [(red, blue)] if red is not None else [_pairing(pair) for pair in agents.split(",")]
    for name in {n for pair in pairs for n in pair}:
        if not is_external(name) and agent_model(name) is None:
            _choice(name, (*AGENTS, "random"), "agent")
    if judge != "rules" and agent_model(judge) is None:
        raise InputError(f"unknown judge {judge!r}; use rules or llm[:MODEL]")
    settings = _llm_settings([n for pair in pairs for n in pair] + [judge], llm_flags)
    _llm_client(settings)  # a recordings file that cannot be used stops the sweep here, before any game
    specs = list(dict.fromkeys(
        GameSpec(board_id=i, condition=c, mode=m, red=r, blue=b, seed=seed, repeat=k, visible=not hidden, judge=judge)
        for i in ids for c in conds for m in mode_list for r, b in pairs for k in range(repeats)))
    store = record_store(out)
    todo = store.missing(specs)
    summary_path = out / "summary.json"
    if todo:
        summary_path.unlink(missing_ok=True)  # it would describe a record set this run is about to change
    if store.dropped_cut_line:
        typer.echo(f"{store.path}: dropped its last line, cut short by an interrupted run", err=True)
    if len(todo) < len(specs):
        typer.echo(f"{len(specs) - len(todo)} of {len(specs)} games already in {store.path}; playing "
                   f"{len(todo)}", err=True)
    try:
        with job_progress(json_out or not todo) as advance, \
                closing(run_specs(todo, workers=workers, ray_address=ray, llm=settings)) as games, _playing():
            advance("games", 0, len(todo))
            for played, record in enumerate(games, 1):
                store.add(record)
                advance("games", played, len(todo))
    except RuntimeError as exc:
        raise InputError(str(exc)) from None
    finally:
        store.close()
    records = [store.records[s] for s in specs]
    rows = summarise(records)
    summary = [r.model_dump(mode="json") for r in rows]
    write_atomically(summary_path, json.dumps(summary, indent=1) + "\n")
    if json_out:
        typer.echo(json.dumps({"ok": True, "games": len(records), "played": len(todo), "out": str(out),
                               "rows": summary}))
        return
    from games.ctbench.story import print_summary

    print_summary(rows)
    typer.echo(f"{len(records)} games ({len(todo)} played now); results in {store.path} and {summary_path}")


def _pairing(text: str) -> tuple[str, str]:
    """'RED vs BLUE', or RED:BLUE when neither name holds a colon (llm:MODEL and cmd:PROGRAM do)."""
    red, sep, blue = text.partition(" vs ")
    if not sep:
        red, sep, blue = text.partition(":")
        if not sep or ":" in blue or red in ("llm", "cmd"):
            raise UsageProblem(f"write the pairing {text!r} as 'RED vs BLUE' (agent names may hold colons)")
    if not red.strip() or not blue.strip():
        raise UsageProblem(f"the pairing {text!r} names no agent on one side")
    return red.strip(), blue.strip()


@ctbench_app.command("import")
def ctbench_import(
    directory: Annotated[Path, typer.Argument(help="A copy of the authors' public_logs/ (or any folder of game "
                                                   "directories holding metadata.json and event_log_*.json).")],
    out: Annotated[Path, typer.Option("--out", help="The runs file to write (JSON lines, one game each).")],
    json_out: JsonFlag = False,
) -> None:
    """Import the CT-Bench authors' published game logs as typed games with contracts in contractlang."""
    from contractlang.progress import job_progress
    from games.ctbench.published import ImportProblem, game_directories, import_game, mark_superseded

    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory of game logs")
    dirs = list(game_directories(directory))
    if not dirs:
        raise InputError(f"{directory}: no game directory (one holding metadata.json) under it")
    games, problems = [], []
    with job_progress(json_out) as advance:
        advance("importing", 0, len(dirs))
        for k, d in enumerate(dirs, 1):
            try:
                games.append(import_game(d, directory))
            except ImportProblem as exc:
                problems.append(str(exc))
                if not json_out:
                    typer.echo(f"skipped {exc}", err=True)
            advance("importing", k, len(dirs))
    games = mark_superseded(games)
    write_atomically(out, "".join(g.model_dump_json() + "\n" for g in games))
    complete = sum(g.complete for g in games)
    superseded = sum(g.superseded for g in games)
    summary = {"ok": True, "out": str(out), "directories": len(dirs), "imported": len(games),
               "complete": complete, "incomplete": len(games) - complete, "superseded": superseded,
               "contracts_formed": sum(g.contract_formed for g in games), "problems": problems}
    if json_out:
        typer.echo(json.dumps(summary))
        return
    typer.echo(f"imported {len(games)} of {len(dirs)} games into {out}: {complete} complete, "
               f"{len(games) - complete} cut short (no final state), {superseded} superseded by a later run of "
               f"the same game; {len(problems)} skipped")


def _runs(path: Path) -> list:
    """Every line of a runs file (imported games or our game records); a bad line is `file:line: reason`."""
    from games.ctbench.published import ImportProblem, read_runs

    try:
        return [item for _, item in read_runs(path)]
    except ImportProblem as exc:
        raise InputError(str(exc)) from None


@ctbench_app.command("replay")
def ctbench_replay(
    runs: Annotated[Path, typer.Argument(help="A runs file written by `ctbench import`.")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write every game's verdict here (JSON "
                                                              "lines).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Re-play every imported game through our engine and Monitor; report where each parts from its log."""
    from games.ctbench.published import ImportedGame
    from games.ctbench.replay import RULES, replay, summary_by_rule

    games = [g for g in _runs(runs) if isinstance(g, ImportedGame)]
    if not games:
        raise InputError(f"{runs}: holds no imported game (write one with `contractlang ctbench import`)")
    complete = [g for g in games if g.complete]
    verdicts = [replay(g) for g in complete]
    agree = sum(v.agrees for v in verdicts)
    by_rule = summary_by_rule(verdicts)
    if out is not None:
        write_atomically(out, "".join(v.model_dump_json() + "\n" for v in verdicts))
    if json_out:
        typer.echo(json.dumps({"ok": True, "replayed": len(verdicts), "agree": agree,
                               "skipped_incomplete": len(games) - len(complete), "by_rule": by_rule,
                               "rules": {k: RULES[k] for k in by_rule},
                               "games": [v.model_dump(mode="json") for v in verdicts]}))
        return
    for v in verdicts:
        if not v.agrees:
            typer.echo(f"{v.source}: turn {v.first.turn}: {v.first.rule}: {v.first.detail}")
    rate = agree / len(verdicts) if verdicts else 0.0
    typer.echo(f"replayed {len(verdicts)} complete games ({len(games) - len(complete)} cut-short logs skipped): "
               f"{agree} agree on positions and chips after every turn and on the final scores ({rate:.1%})")
    for rule, n in by_rule.items():
        typer.echo(f"  {n:>5}  {rule}: {RULES[rule]}")


@ctbench_app.command("report")
def ctbench_report(
    runs: Annotated[Path, typer.Argument(help="A runs file: `ctbench import` output or a sweep's games.jsonl.")],
    png: Annotated[Optional[Path], typer.Option("--png", help="Also draw reward by condition and board class "
                                                              "into this directory.")] = None,
    all_runs: Annotated[bool, typer.Option("--all-runs", help="Imported logs: keep every complete run, not only "
                                                              "the latest of each game (the paper's choice).")]
    = False,
    paper: Annotated[bool, typer.Option("--paper", help="Set the paper's printed value beside every cell that "
                                                        "differs from it (rows named as the authors' logs name "
                                                        "models).")] = False,
    json_out: JsonFlag = False,
) -> None:
    """The paper's Tables 1–8 and 11 and the contract-formation measures, from imported logs or our sweeps."""
    from games.ctbench.published import ImportedGame
    from games.ctbench.report import (
        compare_with_paper,
        missing_metrics,
        missing_text,
        paper_tables,
        promise_keeping,
        promise_text,
        save_plots,
        table_text,
    )

    records, skipped = [], 0
    for item in _runs(runs):
        if isinstance(item, ImportedGame):
            if not item.complete or (item.superseded and not all_runs):
                skipped += 1
                continue
            item = item.record()
        records.append(item)
    if not records:
        raise InputError(f"{runs}: holds no complete game to report on")
    tables = paper_tables(records)
    promises = promise_keeping(records)
    missing = missing_metrics(records)
    written = []
    if png is not None:
        try:
            png.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{png}: cannot create the plot directory: {exc.strerror or exc}") from None
        written = save_plots(records, png, write_atomically)
    compared, differences = compare_with_paper(tables)
    if json_out:
        typer.echo(json.dumps({"ok": True, "games": len(records), "skipped": skipped,
                               "tables": [t.model_dump(mode="json") for t in tables],
                               "paper_cells_compared": compared,
                               "paper_differences": [d.model_dump() for d in differences],
                               "table_11": [r.model_dump(mode="json") for r in promises],
                               "formation": missing.model_dump(mode="json"), "plots": [str(p) for p in written]}))
        return
    for t in tables:
        typer.echo(table_text(t, with_paper=paper) + "\n")
    if promises:
        typer.echo(promise_text(promises) + "\n")
    typer.echo(missing_text(missing))
    if paper and compared:
        typer.echo(f"\n{compared - len(differences)} of {compared} cells equal the paper's")
    typer.echo(f"\n{len(records)} games" + (f" ({skipped} cut-short or superseded runs left out)" if skipped else "")
               + "".join(f"; wrote {p}" for p in written))


@app.command()
@llm_options(max_tokens=16384, timeout=300.0)
def negotiate(
    env: Annotated[str, typer.Option("--env", help="ContractSim environment(s): N, a comma-separated list, or all "
                                                   "(a sweep: one negotiation per environment).")],
    customer: Annotated[str, typer.Option(help="Customer negotiator: scripted (accepts the first offer with "
                                               "non-negative expected gain), llm[:MODEL] or cmd:PROGRAM.")]
    = "scripted",
    supplier: Annotated[str, typer.Option(help="Supplier negotiator: scripted (offers the candidates, best for "
                                               "itself first), llm[:MODEL] or cmd:PROGRAM.")] = "scripted",
    translator: Annotated[str, typer.Option(help="Reads every proposal into the IR: rules (offline) or "
                                                 "llm[:MODEL].")] = "rules",
    candidates: Annotated[Optional[list[Path]], typer.Option(
        "--candidates", help="Contract files the scripted Supplier may offer (default: the bundled "
                             "catering-*.contract examples); all in one setting.")] = None,
    perform_customer: Annotated[str, typer.Option(help="Customer in the performance games on the agreed contract: "
                                                       "rc, re, rcc, random, llm[:MODEL] or cmd:PROGRAM.")] = "rcc",
    perform_supplier: Annotated[str, typer.Option(help="Supplier in the performance games (as --perform-customer).")]
    = "rcc",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first performance game.")] = 42,
    games: Annotated[int, typer.Option(min=1, help="Performance games per agreed contract (seeds SEED, SEED+1, "
                                                   "...).")] = 1,
    guidance: GuidanceOption = None,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Negotiate ContractSim contracts (§8), score each negotiation (§13), then perform the agreed contract
    (default RCC vs RCC). Offline by default: scripted negotiators, the rules translator."""
    from contractlang.llm import LlmUsage, agent_model
    from contractlang.progress import job_progress
    from games.contractsim.environments import ENVIRONMENTS, environment
    from games.contractsim.llm_agents import guidance_for
    from games.contractsim.session import negotiate_and_perform
    from games.external import is_external
    from solver.dp import TableCache

    from games.contractsim.policies import CUSTOMERS, SUPPLIERS

    for name, what in ((customer, "Customer negotiator"), (supplier, "Supplier negotiator")):
        if not is_external(name) and agent_model(name) is None and name != "scripted":
            raise InputError(f"unknown {what} {name!r}; choose from scripted, llm[:MODEL] or cmd:PROGRAM")
    for name, known, what in ((perform_customer, CUSTOMERS, "Customer"), (perform_supplier, SUPPLIERS, "Supplier")):
        if not is_external(name) and agent_model(name) is None and name not in known:
            raise InputError(f"unknown performing {what} {name!r}; choose from {', '.join(known)}, llm[:MODEL] or "
                             "cmd:PROGRAM")
    if translator != "rules" and agent_model(translator) is None:
        raise InputError(f"unknown translator {translator!r}; use rules or llm[:MODEL]")
    env_ids = list(ENVIRONMENTS) if env == "all" else _int_list(env, "environment")
    try:
        guidance_for(tuple(guidance or ()), "negotiation", "customer")
        environments = [environment(e) for e in dict.fromkeys(env_ids)]
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None
    if not environments:
        raise InputError("--env names no environment")
    settings = _llm_settings([customer, supplier, translator, perform_customer, perform_supplier], llm_flags)
    files = candidates or sorted((Path(__file__).resolve().parents[1] / "examples").glob("catering*.contract"))
    offers = [c.ir for f in files for c in load_contracts(f) if c.ir.kind == "contractsim"]
    if not offers:
        raise InputError("no ContractSim contract to offer; give --candidates FILE")
    settings_keys = sorted({ir.setting for ir in offers})
    if len(settings_keys) > 1:
        raise InputError(f"the candidates mix settings ({', '.join(settings_keys)}); one negotiation is in one "
                         "setting")
    client = _llm_client(settings)
    tables = TableCache()
    runs = []
    with job_progress(json_out) as advance, _playing(tables):
        advance("negotiating", 0, len(environments))
        for e in environments:
            runs.append(negotiate_and_perform(
                e, customer, supplier, offers, tables, translator, (perform_customer, perform_supplier),
                tuple(range(seed, seed + games)), client, tuple(guidance or ())))
            advance("negotiating", len(runs), len(environments))
    agreed = [r for r in runs if r.metrics.agreed]
    summary = {
        "negotiations": len(runs), "agreed": len(agreed),
        "mean_gain_customer": _mean([r.metrics.gain_customer for r in agreed]),
        "mean_gain_supplier": _mean([r.metrics.gain_supplier for r in agreed]),
        "mean_p_sat": _mean([r.metrics.p_sat for r in agreed]),
        "mutual_benefit": sum(bool(r.metrics.mutual_benefit) for r in agreed),
        "performance_games": sum(len(r.performances) for r in runs),
        "llm": LlmUsage.of([c for r in runs for c in (*r.negotiation.llm_calls,
                                                      *(c for g in r.performances for c in g.llm_calls))]).model_dump(),
    }
    if json_out:
        typer.echo(json.dumps({"ok": True, "runs": [r.model_dump(mode="json") for r in runs], "summary": summary}))
        return
    for run_ in runs:
        _print_negotiation(run_, environments, (perform_customer, perform_supplier), len(runs) > 1)
    if len(runs) > 1:
        typer.echo(f"{len(agreed)} of {len(runs)} negotiations agreed; mean expected gain Customer "
                   f"{summary['mean_gain_customer']}, Supplier {summary['mean_gain_supplier']}; mean P_sat "
                   f"{summary['mean_p_sat']}; {summary['performance_games']} performance game(s)")


def _mean(values: list) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _print_negotiation(run_, environments, perform: tuple[str, str], heading: bool) -> None:
    record, metrics = run_.negotiation, run_.metrics
    budget = next(e.budget for e in environments if e.id == run_.env)
    if heading:
        typer.echo(f"== environment {run_.env} ==")
    for t in record.turns:
        action = " — proposes a contract" if t.contract else " — accepts" if t.accept else \
            " — terminates" if t.terminate else ""
        typer.echo(f"round {t.round} {t.role}: {t.response}{action}")
    for k, p in enumerate(record.proposals, start=1):
        typer.echo(f"proposal {k} (round {p.round}, {p.role}): translation {p.status}"
                   f"{'' if p.feasible(budget) else ', not feasible'}")
    typer.echo(f"outcome: {record.outcome}" + (f" on proposal {len(record.proposals)}" if metrics.agreed else ""))
    if record.outcome == "agreed" and not metrics.agreed:
        typer.echo(f"the agreed text does not translate completely ({record.agreed.status}): nothing to score or "
                   "perform")
    if metrics.agreed:
        regret = metrics.acceptance_regret
        typer.echo(f"expected gain: Customer {metrics.gain_customer:.2f}, Supplier {metrics.gain_supplier:.2f}; "
                   f"P_sat {metrics.p_sat:.4f}; mutual benefit {metrics.mutual_benefit}; contingencies "
                   f"{metrics.contingency_count}; completeness {metrics.completeness:.4f}; acceptance regret "
                   f"Customer {regret['customer']}, Supplier {regret['supplier']}")
        m = record.agreed.terms.setting_info.multiplier
        for game in run_.performances:
            typer.echo(f"performance ({perform[0]} vs {perform[1]}, seed {game.seed}): Customer "
                       f"${game.u_customer * m:,}, Supplier ${game.u_supplier * m:,}")
            if game.llm_calls:
                typer.echo("  " + _usage_line(game.llm_usage))
    if record.llm_calls:
        typer.echo("negotiation " + _usage_line(record.llm_usage))


def _game_options(contracts: list[CheckedContract], env: int | None, board: int | None, path: Path) -> None:
    """--env is for ContractSim contracts and --board for CT-Bench: one the file cannot use is a usage error."""
    kinds = {c.ir.kind for c in contracts}
    if env is not None and "contractsim" not in kinds:
        raise UsageProblem(f"--env applies to ContractSim contracts; {path} is for CT-Bench (use --board ID)")
    if board is not None and "ctbench" not in kinds:
        raise UsageProblem(f"--board applies to CT-Bench contracts; {path} is for ContractSim (use --env N)")


def _file_stems(names: list[str]) -> list[str]:
    """File-name stems from contract names: no separators, no leading dots, and distinct."""
    stems: list[str] = []
    for name in names:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "contract"
        base, k = stem, 1
        while stem in stems:
            k += 1
            stem = f"{base}-{k}"
        stems.append(stem)
    return stems


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"expected comma-separated {what}s, got {text!r}") from None


@app.command()
def translate(
    text_file: Annotated[Path, typer.Argument(help="Contract prose (UTF-8 text).")],
    backend: Annotated[str, typer.Option(help="rules (offline, deterministic) or anthropic (needs ANTHROPIC_API_KEY).")]
    = "rules",
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the DSL here.")] = None,
    name: Annotated[Optional[str], typer.Option(help="Contract name when the text gives none.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model for the anthropic backend.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Output token limit per attempt (anthropic).")] = 4096,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds the whole translation may take, retries and "
                                                            "waits included (anthropic).")] = 60.0,
    retries: Annotated[int, typer.Option(min=0, help="Retries for transient API errors, with backoff "
                                                     "(anthropic).")] = 3,
    base_url: Annotated[Optional[str], typer.Option(help="API base URL (anthropic), e.g. a proxy.")] = None,
    cache: Annotated[Optional[Path], typer.Option(help="SQLite cache and audit file "
                                                     "(default .contractlang-cache/translations.sqlite).")] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip the extra checks in the repair loop.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Translate contract prose to checked DSL; a missing term is reported, never filled in."""
    from contractlang.translate import DEFAULT_CACHE, MissingApiKey, TranslationCache, translate_text
    from contractlang.llm import DEFAULT_MODEL, LlmSettings

    _choice(backend, ("rules", "anthropic"), "backend")
    _check_base_url(base_url)
    if base_url is not None and backend != "anthropic":
        raise UsageProblem("--base-url applies to --backend anthropic")
    data, _ = _read(text_file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{text_file}: not UTF-8 text") from None
    settings = LlmSettings(model=model or DEFAULT_MODEL, max_tokens=max_tokens, timeout_seconds=timeout,
                           max_retries=retries, base_url=base_url)
    if backend == "rules":
        typer.echo("translating offline with the rules backend", err=True)
    try:
        result = translate_text(text, name=name or text_file.stem, backend=backend,
                                cache=TranslationCache(cache or DEFAULT_CACHE), settings=settings,
                                extra_checks=() if no_verify else _extra_checks())
    except MissingApiKey as exc:
        raise InputError(str(exc)) from None
    if output is not None and result.dsl:
        write_atomically(output, result.dsl)
    if json_out:
        typer.echo(json.dumps({**result.model_dump(include={
            "ok", "well_formed", "dsl", "terms", "missing", "attempts", "cached", "backend", "model", "error",
            "diagnostics", "inconsistencies", "notes"}), "status": result.status}))
    else:
        if output is None:
            typer.echo(result.dsl, nl=False)
        typer.echo(f"{result.status}: {result.attempts} attempt(s), {'cached' if result.cached else 'fresh'}, "
                   f"{result.backend}/{result.model}" + (f"; {result.error}" if result.error else ""), err=True)
        for field in result.missing:
            typer.echo(f"missing: {field}", err=True)
        for finding in result.inconsistencies:
            typer.echo(f"inconsistent: {finding.message}", err=True)
        if result.inconsistencies:
            typer.echo("the text contradicts itself: translated as written, not well-formed", err=True)
        for note in result.notes:
            typer.echo(f"note: {note}", err=True)
        if not result.ok:
            from contractlang.diagnostics import Diagnostic

            for d in result.diagnostics:
                if not d["code"].startswith("E4"):
                    typer.echo(Diagnostic.from_json(d).render(result.dsl), err=True)
    if result.status != "ok":
        raise typer.Exit(1)


def _extra_checks():
    """Checks that join the translation repair loop: the z3 verifier's arithmetic (stated totals)."""
    from solver.verify import translation_checks

    return (translation_checks,)


@app.command()
def verify(
    contract: Annotated[Path, typer.Argument(help="The contract to verify.")],
    env: Annotated[Optional[int], typer.Option("--env", help="ContractSim environment 1..6 (budget, capacity, "
                                                              "cash-flow checks).")] = None,
    board: Annotated[Optional[int], typer.Option("--board", help="CT-Bench board ID 0..79 (colour, chip and path "
                                                                  "checks).")] = None,
    timeout_ms: Annotated[int, typer.Option(min=1, help="z3 time limit per check, in milliseconds.")] = 5000,
    events_out: Annotated[Optional[Path], typer.Option(help="Write each refuted check's counterexample as an "
                                                            "event log here, for `contractlang trace`.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Prove or refute the contract's properties with z3; refutations come with a replayable counterexample."""
    from solver.verify import verify as run_verify

    contracts = load_contracts(contract)
    _game_options(contracts, env, board, contract)
    environment = board_value = None
    if env is not None:
        from games.contractsim.environments import environment as get_env

        try:
            environment = get_env(env)
        except KeyError as exc:
            raise InputError(str(exc.args[0])) from None
    if board is not None:
        from games.ctbench.verify_board import board_spec

        board_value = board_spec(_board(board).board, f"board {board}")
    reports = [run_verify(c, env=environment, board=board_value, timeout_ms=timeout_ms) for c in contracts]
    if events_out is not None:
        try:
            events_out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot write {events_out}: {exc.strerror or exc}") from None
        stems = _file_stems([r.contract for r in reports])
        for report, stem in zip(reports, stems):
            for check in report.checks:
                if check.counterexample and "events" in check.counterexample:
                    body = "".join(json.dumps(e) + "\n" for e in check.counterexample["events"])
                    write_atomically(events_out / f"{stem}.{check.name}.jsonl", body)
    if json_out:
        payload = [r.to_json() for r in reports]
        typer.echo(json.dumps(payload[0] if len(payload) == 1 else {"contracts": payload}))
        return
    from contractlang.render_terminal import print_verification

    source = _source_text(_read(contract)[0])
    for report in reports:
        print_verification(report, str(contract), source)
    if env is None and board is None:
        typer.echo("(pass --env N for budget, capacity and cash-flow checks; --board ID for CT-Bench board checks)",
                   err=True)


@app.command()
def solve(
    contract: Annotated[Path, typer.Argument(help="A ContractSim contract file (one contract).")],
    env: Annotated[int, typer.Option("--env", help="ContractSim environment 1..6.")],
    cache_dir: Annotated[Optional[Path], typer.Option(help="Where solved tables are kept, keyed by contract terms "
                                                           "and environment (default: $CONTRACTLANG_DP_CACHE, "
                                                           "else .contractlang-cache/dp).")]
    = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Solve afresh and keep nothing on disk.")] = False,
    plot: Annotated[Optional[Path], typer.Option(help="Draw the survival curve S_t to this PNG.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Exact DP for the rational Supplier (spec §9.2): P_sat, expected utilities with both players RCC,
    completeness (§14), the survival curve, table size and solve time."""
    from games.contractsim.environments import environment as get_env
    from solver.dp import TableCache
    from solver.dp.cache import default_dir

    checked = load_one(contract)
    if checked.ir.kind != "contractsim":
        raise InputError(f"{contract}: `solve` needs a ContractSim contract; this one is for CT-Bench")
    try:
        environment = get_env(env)
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None
    directory = None if no_cache else (cache_dir or default_dir())
    cache = TableCache(directory)
    from rich.progress import Progress

    with Progress(transient=True, disable=json_out) as bar:
        task = bar.add_task(f"solving {checked.ir.name} in environment {env}", total=None)
        try:
            result, _, hit = cache.solve(checked.ir, environment,
                                         progress=lambda done, total: bar.update(task, completed=done, total=total))
        except OSError as exc:
            raise InputError(f"{directory}: cannot keep the solved table there ({exc.strerror or exc}); "
                             "pass --cache-dir DIR or --no-cache") from None
    if plot is not None:
        from contractlang.render_terminal import plot_survival

        plot_survival(result, plot)
    if json_out:
        payload = result.model_dump()
        payload["survival"] = list(result.survival)
        payload["cached"] = hit
        typer.echo(json.dumps(payload))
        return
    from contractlang.render_terminal import print_solution

    print_solution(result, checked.ir, hit)


@app.command()
def render(
    contract: Annotated[Path, typer.Argument(help="The contract to write out as prose.")],
    setting: Annotated[Optional[str], typer.Option(help="Re-label into catering, hotel or ai-hosting.")] = None,
) -> None:
    """Write a contract as prose: every term explicit, clauses in a fixed order, termination last."""
    from contractlang.render import render as render_prose
    from contractlang.vocab import SETTINGS

    if setting is not None:
        _choice(setting, tuple(SETTINGS), "setting")
    contracts = load_contracts(contract)
    if setting is not None and any(c.ir.kind == "ctbench" for c in contracts):
        raise UsageProblem(f"--setting re-labels ContractSim contracts; {contract} holds a CT-Bench agreement")
    for checked in contracts:
        typer.echo(render_prose(checked.ir, setting=setting))


def _fail(message: str, code: int, json_mode: bool, diagnostics=None, source: str | None = None) -> None:
    """One failure, one report: a JSON object on stdout under --json, else lines on stderr."""
    if json_mode:
        payload: dict = {"ok": False, "error": message}
        if diagnostics is not None:
            payload["diagnostics"] = [d.to_json() for d in diagnostics]
        typer.echo(json.dumps(payload))
    elif diagnostics is not None:
        for d in diagnostics:
            typer.echo(d.render(source), err=True)
    else:
        typer.echo(f"error: {printable(message)}", err=True)
    sys.exit(code)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Console entry point: bad input exits 1, usage errors 2, an internal error 3; never a traceback."""
    json_mode = "--json" in sys.argv[1:]
    # a blocked signal mask is inherited across exec (Python resets handlers, not the mask): unblock, so that
    # Ctrl-C and SIGTERM reach a run whatever process started it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)  # likewise an inherited SIG_IGN: Ctrl-C must end a run
    signal.signal(signal.SIGTERM, _terminate)  # a killed run unwinds like Ctrl-C: workers ended, files closed
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:
        _fail("interrupted", 130, json_mode)
    except CheckFailed as exc:
        _fail(str(exc), 1, json_mode, exc.diagnostics, exc.source)
    except ContractError as exc:
        _fail(str(exc), 1, json_mode, exc.diagnostics)
    except (InputError, FileError) as exc:
        _fail(str(exc), 1, json_mode)
    except UsageProblem as exc:
        _fail(f"usage: {exc}", 2, json_mode)
    except Exception as exc:
        if callable(getattr(exc, "format_message", None)):  # click's usage and parameter errors
            if not json_mode and hasattr(exc, "show"):
                exc.show()
                sys.exit(getattr(exc, "exit_code", 2))
            _fail(f"usage: {exc.format_message()}", getattr(exc, "exit_code", 2), json_mode)
        if os.environ.get("CONTRACTLANG_DEBUG") == "1":
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set CONTRACTLANG_DEBUG=1 to see where)", 3, json_mode)
    if code == 130:  # typer turns an interrupt inside a command into exit code 130
        _fail("interrupted", 130, json_mode)
    sys.exit(code or 0)


__all__ = ["app", "main"]

from contractlang import cli_experiments  # noqa: E402,F401  (registers `synth` and `experiment` on `app`)
