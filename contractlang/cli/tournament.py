"""`contractlang tournament`: cross-play tournaments on common random numbers (docs/explanation/tournaments.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import UsageProblem, playing, runner_progress
from contractlang.cli.experiments import (
    ContractsOption,
    Directory,
    EnvsOption,
    LimitOption,
    RhosOption,
    VariantsOption,
    _slice,
    echo_estimate,
)
from contractlang.cli.llm_options import LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (
    BoardSetOption,
    EstimateFlag,
    FailOnErrorOption,
    FloorsOption,
    JsonFlag,
    LlmWorkers,
    Ray,
    fail_on_error,
    items,
)
from contractlang.errors import MAX_SEEDS


@app.command("tournament")
@llm_options(max_tokens=8192, timeout=120.0)
def tournament_command(
    directory: Directory = None,
    agents: Annotated[
        str | None,
        typer.Option(
            "--agents",
            help="Comma-separated agents: built-in names (rcc, rc, re, random; planner, conditional, exploiter, "
            "random for CT-Bench), llm[:[PROVIDER/]MODEL], cmd:PROGRAM, py:MODULE:ATTR, LABEL=SPEC.",
        ),
    ] = None,
    agent: Annotated[
        list[str] | None, typer.Option("--agent", help="One more agent (repeatable; for specs holding a comma).")
    ] = None,
    game: Annotated[str, typer.Option(help="contractsim or ctbench.")] = "contractsim",
    references: Annotated[
        bool, typer.Option("--references", help="Add the game's built-in reference agents to the field.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Directory for the job store and tournament.json; a rerun into it resumes and plays only "
            "new games (default: DIRECTORY, else ./contractlang-out/tournament)."
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(min=1, max=MAX_SEEDS, help="Seeds per cell, from --seed on.")] = 3,
    seed: Annotated[int, typer.Option(min=0, help="The first seed.")] = 0,
    contracts: ContractsOption = None,
    envs: EnvsOption = None,
    variants: VariantsOption = None,
    rhos: RhosOption = None,
    limit: LimitOption = None,
    floors: FloorsOption = "cs14",
    boards: Annotated[str, typer.Option(help="CT-Bench: 'all' or comma-separated board IDs (ID or SET:ID).")] = "all",
    board_set: BoardSetOption = None,
    conditions: Annotated[str, typer.Option(help="CT-Bench contract conditions, comma-separated.")] = "none",
    modes: Annotated[str, typer.Option(help="CT-Bench modes, comma-separated: pfp, trade.")] = "pfp",
    plan: Annotated[
        bool, typer.Option("--plan", help="Also print the seeds each pair needs for 80 % power (from this run).")
    ] = False,
    detect: Annotated[
        float | None, typer.Option(help="The difference --plan sizes for (default: each pair's observed one).")
    ] = None,
    until_separated: Annotated[
        bool,
        typer.Option(
            "--until-separated",
            help="Play the seeds in --looks batches and stop a pair's games once its difference is separated "
            "(repeated paired t-tests with Bonferroni α-spending at --alpha).",
        ),
    ] = False,
    looks: Annotated[int, typer.Option(min=1, help="Looks of --until-separated.")] = 5,
    alpha: Annotated[
        float, typer.Option(min=1e-9, max=0.5, help="The error rate of --until-separated and --plan.")
    ] = 0.05,
    max_fallback: Annotated[
        float, typer.Option(min=0, max=1, help="Quality gate: an LLM cell's largest share of fallback answers.")
    ] = 0.2,
    max_errors: Annotated[
        float, typer.Option(min=0, max=1, help="Quality gate: an LLM cell's largest share of errored games.")
    ] = 0.1,
    workers: LlmWorkers = None,
    ray: Ray = None,
    fail_on_errors: FailOnErrorOption = None,
    estimate: EstimateFlag = False,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Every agent against every other in each role it plays, --seeds seeds per cell on common random numbers:
    ratings per role with paired-bootstrap intervals, compliant regret and regret against RCC in the same seat
    (ContractSim), pairwise probabilities and a Bradley–Terry fit. Every game is a job of the run machinery:
    resumable."""
    from contractlang.api.experiments import agent_specs
    from contractlang.api.tournament import tournament

    names = list(dict.fromkeys([*(items(agents, "--agents") if agents else []), *(agent or [])]))
    if not names and not references:
        raise UsageProblem("name the agents: --agents A,B,... (or --references)")
    common = dict(
        agents=names,
        game=game,
        directory=directory,
        out=out,
        references=references,
        seeds=seeds,
        seed=seed,
        **_slice(contracts, envs, variants, rhos, limit),
        floors=floors,
        boards="all" if boards == "all" else items(boards, "--boards"),
        board_set=board_set,
        conditions=items(conditions, "--conditions"),
        modes=items(modes, "--modes"),
        workers=workers,
        ray=ray,
        llm=llm_settings(agent_specs(names), llm_flags, calls=not estimate),
        fail_on_error=fail_on_error(fail_on_errors),
    )
    if estimate:
        with runner_progress(True), playing():
            echo_estimate(tournament(**common, estimate=True), json_out)
        return
    llm_client(common["llm"])
    with runner_progress(json_out) as advance, playing():
        result = tournament(
            **common,
            progress=advance,
            plan=plan,
            detect=detect,
            until_separated=until_separated,
            looks=looks,
            alpha=alpha,
            max_fallback=max_fallback,
            max_errors=max_errors,
        )
    rep = result.report
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "played_now": result.played,
                    "report": str(result.path),
                    **rep.model_dump(mode="json", exclude={"cells"}),
                }
            )
        )
        return
    for role in rep.roles:
        typer.echo(
            f"{role}: rank, agent, utility [95 % CI], regret against the optimum [95 % CI], compliant regret "
            "against the field [95 % CI], regret against the field [95 % CI], gap to the exact optimum [95 % CI], "
            "Bradley–Terry strength, tied with"
        )
        for r in (r for r in rep.ratings if r.role == role):
            typer.echo(
                f"  {r.rank:>2} {r.agent:<16} {r.utility.text()}  {r.optimum_regret.text()}  "
                f"{r.compliant_regret.text()}  {r.regret.text()}  {r.gap.text()}  {r.strength.text()}  "
                f"{', '.join(r.tied_with) or '–'}"
            )
    for g in rep.gates:
        typer.echo(f"gated: {g.role} {g.agent} against {g.opponent}: {g.reason}")
    for p in rep.plan:
        need = "–" if p.seeds is None else str(p.seeds)
        typer.echo(f"plan: {p.role} {p.a} vs {p.b}: {need} seeds to detect {p.detect} at 80 % power")
    if rep.sequential:
        typer.echo(f"stopping rule: {rep.sequential}")
    typer.echo(
        f"{rep.games} games on {rep.units} units × {len(rep.agents)} agents ({result.played} played now); "
        f"report in {result.path}"
    )
