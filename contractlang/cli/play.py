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
    floors_for_env,
    rule_set,
)
from contractlang.cli.render import usage_line
from contractlang.files import write_atomically

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
    import contractlang as cl
    from contractlang.diagnostics import ContractError

    checked = load_one(contract)
    game_options([checked], env, board, contract)
    floors_for_env(floors, env)
    kind = cl.game_for(checked)
    given = {"customer": customer, "supplier": supplier, "red": red, "blue": blue}
    agents = {role: given[role] for role in kind.roles}
    options = {
        "env": env,
        "floors": floors,
        "guidance": tuple(guidance or ()),
        "board": board,
        "board_set": board_set,
        "mode": choice(mode, ("pfp", "trade"), "mode"),
        "visible": not hidden,
        "rules": rules,
    }
    setup = {k: v for k, v in options.items() if k in kind.setup.model_fields}
    if guidance and "guidance" not in setup:
        raise UsageProblem("--guidance applies to ContractSim LLM agents")
    missing = [k for k in REQUIRED if k in setup and setup[k] is None]
    if missing:
        raise (UsageProblem if missing[0] == "env" else InputError)(
            f"a {kind.title} contract needs {REQUIRED[missing[0]]}"
        )
    if "rules" in setup:
        rule_set(rules)
    client = llm_client(llm_settings(list(agents.values()), llm_flags))
    try:
        with llm_status(client, json_out), playing():
            played = cl.play(checked, agents=agents, seed=seed, llm=client, **setup)
    except ContractError as exc:
        raise CheckFailed(exc.diagnostics, source_text(read(contract)[0])) from None
    record = played.record
    if log is not None:
        header = {k: v for k, v in record.setup.items() if v is not None}
        _write_log(log, contract, checked, record.monitor_events(), seed=record.seed, agents=agents, **header)
    if json_out:
        typer.echo(json.dumps({"ok": True, **played.to_json()}))
        return
    typer.echo(played.story())
    if record.llm_calls:
        note = record.facts.get("usage_note")
        typer.echo(usage_line(record.llm_usage) + (f"; {note}" if note else ""))


REQUIRED = {"env": "--env N (1..6)", "board": "--board ID (0..79; see `contractlang ctbench boards`)"}
"""The setup each game needs from the command line, and how to give it."""


def _write_log(log: Path, contract: Path, checked, events: list[dict], **game) -> None:
    """The game's monitor events behind a header naming the game, so `trace` and `view` need nothing else."""
    from contractlang.interpreter.trace import game_log, log_header

    write_atomically(log, game_log(log_header(checked, read(contract)[0], **game), events))


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
