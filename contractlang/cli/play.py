"""`contractlang run`: one game under a contract, ContractSim (--env) or CT-Bench (--board)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import CheckFailed, InputError, UsageProblem, playing
from contractlang.cli.inputs import game_options, load_one, read, source_text
from contractlang.cli.llm_options import GuidanceOption, LlmFlags, llm_client, llm_options, llm_settings, llm_status
from contractlang.cli.options import (
    BoardSetOption,
    FloorsOption,
    JsonFlag,
    RulesOption,
    choice,
    ctbench_board,
    floors_for_env,
    rule_set,
)
from contractlang.cli.render import usage_line
from contractlang.files import write_atomically
from contractlang.interpreter.rounds import DEFAULT_FLOORS

AGENT_HELP = (
    "planner, conditional, exploiter, random, llm[:[PROVIDER/]MODEL] (an LLM player: llm:MODEL or "
    "llm:anthropic/MODEL needs ANTHROPIC_API_KEY, llm:openai/MODEL an OpenAI-compatible API and "
    "OPENAI_API_KEY; or --replay), cmd:PROGRAM (an external agent speaking JSON lines), py:MODULE:ATTR or "
    "py:FILE.py:ATTR (a Python agent), or a name an installed package registers"
)


@app.command()
@llm_options(max_tokens=8192, timeout=120.0)
def run(
    contract: Annotated[Path, typer.Argument(help="The contract to play under.")],
    board: Annotated[
        str | None, typer.Option("--board", help="CT-Bench benchmark board ID (0..79, or SET:ID such as paper:17).")
    ] = None,
    board_set: BoardSetOption = None,
    rules: RulesOption = "authors",
    env: Annotated[int | None, typer.Option("--env", min=1, max=6, help="ContractSim environment (1..6).")] = None,
    customer: Annotated[
        str,
        typer.Option(
            help="ContractSim Customer: rc, re, rcc, random, llm[:MODEL] (an LLM agent, "
            "ContractSim paper, App. B.2), cmd:PROGRAM (an external agent speaking JSON "
            "lines), py:MODULE:ATTR or py:FILE.py:ATTR (a Python agent), or a name an "
            "installed package registers."
        ),
    ] = "rcc",
    supplier: Annotated[
        str,
        typer.Option(
            help="ContractSim Supplier: rc, re, rcc, random, llm[:MODEL], cmd:PROGRAM or "
            "py:… (rc and rcc solve or load the contract's DP table)."
        ),
    ] = "rcc",
    red: Annotated[str, typer.Option(help=f"P-Red agent: {AGENT_HELP}.")] = "planner",
    blue: Annotated[str, typer.Option(help=f"P-Blue agent: {AGENT_HELP}.")] = "planner",
    mode: Annotated[str, typer.Option(help="Trading mechanism: pfp (Pay-for-Partner) or trade.")] = "pfp",
    hidden: Annotated[bool, typer.Option("--hidden", help="Hide each player's state from the other.")] = False,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Seed: ContractSim shocks (default 42, ContractSim paper, App. A.3) or "
            "CT-Bench random agents (default 0).",
        ),
    ] = None,
    log: Annotated[Path | None, typer.Option(help="Write the game's events as JSON lines here.")] = None,
    guidance: GuidanceOption = None,
    floors: FloorsOption = "cs14",
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Play one game under a contract (ContractSim with --env, CT-Bench with --board): story and scores."""
    checked = load_one(contract)
    game_options([checked], env, board, contract)
    floors_for_env(floors, env)
    players = [customer, supplier] if checked.ir.kind == "contractsim" else [red, blue]
    settings = llm_settings(players, llm_flags)
    if checked.ir.kind == "contractsim":
        from games.contractsim.llm_agents import guidance_for

        guidance_for(tuple(guidance or ()), "performance", "customer")
        _run_contractsim(
            checked,
            contract,
            env,
            customer,
            supplier,
            42 if seed is None else seed,
            log,
            json_out,
            llm_client(settings),
            tuple(guidance or ()),
            floors,
        )
        return
    if guidance:
        raise UsageProblem("--guidance applies to ContractSim LLM agents")
    if board is None:
        raise InputError("a CT-Bench contract needs --board ID (0..79; see `contractlang ctbench boards`)")
    from contractlang.checker import check_board
    from games.agents import check
    from games.ctbench.play import play

    rule_set(rules)
    bench = ctbench_board(board, board_set, checked.ir.board_set)
    problems = check_board(checked, bench.board.colour, f"board {board}")
    if problems:
        raise CheckFailed(problems, source_text(read(contract)[0]))
    choice(mode, ("pfp", "trade"), "mode")
    check(red, "ctbench", "red")
    check(blue, "ctbench", "blue")
    client = llm_client(settings)
    with llm_status(client, json_out), playing():
        record = play(
            bench,
            "file",
            mode,
            red,
            blue,
            seed=seed or 0,
            contract=checked.ir,
            visible=not hidden,
            keep_log=True,
            llm=client,
            rules=rules,
        )
    if log is not None:
        _write_log(
            log,
            contract,
            checked,
            record.monitor_events(),
            board=bench.id,
            board_set=bench.board_set,
            seed=seed or 0,
            agents={"red": red, "blue": blue},
            mode=mode,
            visible=not hidden,
            rules=rules,
        )
    if json_out:
        typer.echo(json.dumps({"ok": True, **record.to_json()}))
        return
    from games.ctbench.story import story

    typer.echo(story(record, bench))
    if record.llm_calls:
        nulls = ", ".join(f"{player} {n}" for player, n in record.llm_null_actions.items())
        typer.echo(usage_line(record.llm_usage) + f"; invalid replies taken as the null action: {nulls}")


def _write_log(log: Path, contract: Path, checked, events: list[dict], **game) -> None:
    """The game's monitor events behind a header naming the game, so `trace` and `view` need nothing else."""
    from contractlang.interpreter.trace import game_log, log_header

    write_atomically(log, game_log(log_header(checked, read(contract)[0], **game), events))


def _run_contractsim(
    checked, contract, env, customer, supplier, seed, log, json_out, llm=None, guidance=(), floors="cs14"
) -> None:
    from games.contractsim.play import play_run
    from solver.dp import TableCache

    if env is None:
        raise UsageProblem("a ContractSim contract needs --env N (1..6)")
    tables = TableCache()
    with llm_status(llm, json_out), playing():
        played = play_run(checked.ir, env, customer, supplier, seed, tables, llm, guidance, floors)
    record = played.record
    if log is not None:
        _write_log(
            log,
            contract,
            checked,
            record.monitor_events(),
            env=env,
            seed=seed,
            agents={"customer": customer, "supplier": supplier},
            guidance=tuple(guidance) or None,
            floors=None if floors == DEFAULT_FLOORS else floors,
        )
    if json_out:
        typer.echo(json.dumps({"ok": True, **record.to_json(played.p_sat)}))
        return
    from games.contractsim.story import story

    typer.echo(story(record, checked.ir))
    if record.floors != "cs14":
        typer.echo(f"Played under the {record.floors} floor rule set [CS-14a].")
    if played.p_sat is not None:
        typer.echo(f"P_sat of this contract here (exact DP): {played.p_sat:.6f}")
    if record.llm_calls:
        defaults = ", ".join(f"{role} {n}" for role, n in record.llm_defaults.items())
        typer.echo(usage_line(record.llm_usage) + f"; requests defaulted to zero: {defaults}")


@app.command("agent-schema")
def agent_schema(
    game: Annotated[
        str | None, typer.Argument(help="contractsim, contractsim-negotiation or ctbench (default: all).")
    ] = None,
    role: Annotated[str | None, typer.Argument(help="The role (customer, supplier; red, blue; default: all).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """The JSON Schema of each role's observations and actions: what a `cmd:` program reads in the `observation`
    of a request line and answers in its `action` (a `py:` agent gets the same fields as attributes)."""
    from contractlang.api.schema import agent_schema as schemas

    found = [s.model_dump() for s in schemas(game, role)]
    if json_out:
        typer.echo(json.dumps({"ok": True, "schemas": found}))
        return
    typer.echo(json.dumps(found if len(found) > 1 else found[0], indent=2))
