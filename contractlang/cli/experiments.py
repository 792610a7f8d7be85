"""`contractlang synth` and `contractlang experiment …`: the ContractSim performance experiments (ContractSim paper, App. C.4–D.3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app, experiment_app
from contractlang.cli.errors import InputError, playing, runner_progress
from contractlang.cli.inputs import output_dir
from contractlang.cli.llm_options import LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (
    ConventionOption,
    EstimateFlag,
    FailOnErrorOption,
    FloorsOption,
    JsonFlag,
    LlmWorkers,
    Ray,
    Workers,
    fail_on_error,
    float_set,
    int_list,
    items,
)

app.add_typer(experiment_app, name="experiment")


@app.command()
def synth(
    out: Annotated[
        Path | None,
        typer.Option(
            help="Directory for the contracts, manifest.json and the job "
            "records; a rerun into it resumes (default: "
            "./contractlang-out/synth, reusing the finished jobs of the "
            "set shipped in the package)."
        ),
    ] = None,
    starts: Annotated[
        int, typer.Option(min=1, max=1000, help="Random starts per environment and target [CS-34].")
    ] = 20,
    search_envs: Annotated[
        str,
        typer.Option(
            help="Environments to search in (Env 1 reuses Env 3's terms and Env 2 Env 4's when those are searched)."
        ),
    ] = "3,4,5,6",
    rhos: Annotated[str, typer.Option(help="Target satisfaction levels ρ.")] = "0.9,0.8,0.7,0.6,0.5",
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Generate the 180 synthetic performance contracts (ContractSim paper, App. C.4): base contracts by multi-start coordinate
    ascent in Envs 3–6, reused in Envs 1–2, six contingency variants each, every one re-solved; checks E14."""
    from contractlang.api.experiments import synth as synthesize

    envs = int_list(search_envs, "environment", "--search-envs")
    if any(e not in range(1, 7) for e in envs):
        raise InputError(f"--search-envs takes environments 1..6, not {search_envs!r}")
    with runner_progress(json_out) as advance:
        run = synthesize(out, starts, envs, float_set(rhos, "--rhos"), workers, ray, advance)
    out = output_dir(out, None, "synth")
    m = run.manifest
    rows = [r.model_dump(mode="json") | {"holds": r.holds} for r in m.e14]
    not_mb = sum(not e.mutually_beneficial for e in m.contracts + m.excluded)
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "out": str(out),
                    "contracts": len(m.contracts),
                    "excluded": len(m.excluded),
                    "not_mutually_beneficial": not_mb,
                    "e14_holds": m.e14_holds,
                    "e14": rows,
                    "searched_now": run.searched,
                    "solved_now": run.solved,
                }
            )
        )
        return
    typer.echo("E14 (base contracts: |P_sat - ρ| ≤ 0.05 and individually rational)")
    typer.echo(f"{'env':>3} {'ρ':>4} {'P_sat':>7} {'U_Cust':>8} {'U_Supp':>7}  starts  E14")
    for r in m.e14:
        if not r.found:
            typer.echo(
                f"{r.env:>3} {r.rho:>4.1f} {'–':>7} {'–':>8} {'–':>7}  {r.feasible_starts:>6}  no contract found"
            )
            continue
        typer.echo(
            f"{r.env:>3} {r.rho:>4.1f} {r.p_sat:7.4f} {r.u_customer:8.2f} {r.u_supplier:7.2f}  "
            f"{r.feasible_starts:>6}  {'holds' if r.holds else 'FAILS'}"
        )
    excluded_not_mb = sum(not e.mutually_beneficial for e in m.excluded)
    excluded_classes = ", ".join(dict.fromkeys(e.variant for e in m.excluded))
    typer.echo(
        f"{len(m.contracts)} contracts in {out / 'contracts'}; E14 holds for {m.e14_holds} of {len(m.e14)} "
        f"base contracts; {not_mb} of {len(m.contracts) + len(m.excluded)} variants not mutually beneficial "
        f"({excluded_not_mb} in the excluded classes {excluded_classes}); "
        f"{run.searched} searches and {run.solved} solves run now"
    )


Directory = Annotated[
    Path | None,
    typer.Argument(
        help="A directory written by `contractlang synth` (default: the set shipped in the package, read-only).",
        show_default=False,
    ),
]
Out = Annotated[
    Path | None,
    typer.Option(
        help="Directory for the job records and the report; a rerun into it resumes (default: DIRECTORY when given, "
        "else ./contractlang-out, laid out as a set, reusing the shipped set's finished games).",
        show_default=False,
    ),
]


ContractsOption = Annotated[
    str | None, typer.Option("--contracts", help="Only the contracts whose names match this glob, e.g. 'synth-env5-*'.")
]
EnvsOption = Annotated[str | None, typer.Option("--envs", help="Only these environments (comma-separated).")]
VariantsOption = Annotated[
    str | None,
    typer.Option(
        "--variants", help="Only these contingency variants (comma-separated: base, S, RO, S+PD, S+RO, S+PD+RO)."
    ),
]
RhosOption = Annotated[str | None, typer.Option("--rhos", help="Only these target satisfaction levels ρ.")]
LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        min=1,
        help="At most N contracts of the slice, in the set's order. A sliced run's tables say which "
        "slice they cover; a later run reuses its finished games.",
    ),
]


def _slice(contracts, envs, variants, rhos, limit) -> dict:
    """The slice options as the facade's keywords."""
    return {
        "contracts": contracts,
        "limit": limit,
        "envs": None if envs is None else int_list(envs, "environment", "--envs"),
        "variants": None if variants is None else items(variants, "--variants"),
        "rhos": None if rhos is None else float_set(rhos, "--rhos"),
    }


@experiment_app.command("rational")
def experiment_rational(
    directory: Directory = None,
    out: Out = None,
    contracts: ContractsOption = None,
    envs: EnvsOption = None,
    variants: VariantsOption = None,
    rhos: RhosOption = None,
    limit: LimitOption = None,
    convention: ConventionOption = "cs19",
    floors: FloorsOption = "cs14",
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """All nine RC/RCC/RE pairings on every synthetic contract with seed 42: Tables 7–10 (macro and micro), the
    identities E1–E13 (docs/rules/checks.md) checked on the runs, and the paper's rows (App. D.3) beside ours. Resumable."""
    from contractlang.api.experiments import rational

    with runner_progress(json_out) as advance:
        result = rational(
            directory,
            out=out,
            **_slice(contracts, envs, variants, rhos, limit),
            convention=convention,
            workers=workers,
            ray=ray,
            progress=advance,
            floors=floors,
        )
    checks, records = result.report.identities, result.report.contracts
    held = sum(i.holds for i in checks)
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "contracts": records,
                    "played_now": result.played_now,
                    "convention": convention,
                    "floors": floors,
                    "covers": result.report.covers,
                    "identities_hold": held,
                    "identities": [i.model_dump(mode="json") for i in checks],
                    "tables": str(result.tables),
                }
            )
        )
        return
    typer.echo(result.markdown, nl=False)
    typer.echo("")
    for i in checks:
        status = "holds" if i.holds else "FAILS: " + ", ".join(i.failures)
        typer.echo(f"{i.id:>4}  {status:5s}  ({i.checked} checked)  {i.statement}")
    typer.echo(
        f"{records} contracts × 9 pairings under the {floors} floor rule set ({result.played_now} contracts "
        f"played now); {held} of {len(checks)} identities hold; tables in {result.tables}"
    )


AgentOption = Annotated[
    list[str],
    typer.Option(
        "--agent",
        help="The agent under test (repeatable): rc, rcc, re, random, llm[:[PROVIDER/]MODEL] (an LLM agent, "
        "ContractSim paper, App. B.2; llm:MODEL or llm:anthropic/MODEL needs ANTHROPIC_API_KEY, llm:openai/MODEL an "
        "OpenAI-compatible API and OPENAI_API_KEY; or --replay), cmd:PROGRAM (an external agent "
        "speaking JSON lines), py:MODULE:ATTR or py:FILE.py:ATTR (a Python agent), or a name an "
        "installed package registers; LABEL=SPEC labels it in the tables.",
    ),
]


@experiment_app.command("performance")
@llm_options(max_tokens=8192, timeout=120.0)
def experiment_performance(
    agent: AgentOption,
    directory: Directory = None,
    out: Out = None,
    role: Annotated[str, typer.Option(help="The role the agent plays: customer, supplier or both.")] = "both",
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds; each is one more case per contract.")] = "42",
    setting: Annotated[
        list[str] | None,
        typer.Option(
            help="Play the agents' games in this setting (repeatable: catering, hotel, ai-hosting): the contracts are "
            "relabelled, money × the setting's multiplier; tables.md adds Table 11, the settings side by side "
            "(amounts in base units)."
        ),
    ] = None,
    contracts: ContractsOption = None,
    envs: EnvsOption = None,
    variants: VariantsOption = None,
    rhos: RhosOption = None,
    limit: LimitOption = None,
    convention: ConventionOption = "cs19",
    floors: FloorsOption = "cs14",
    workers: LlmWorkers = None,
    ray: Ray = None,
    fail_on_errors: FailOnErrorOption = None,
    estimate: EstimateFlag = False,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Each agent in each role against RCC, RC and RE on every synthetic contract (ContractSim paper, App. B.2, App. C.6): Tables 7–10
    (macro and micro) with the rational rows of the same cases and the paper's beside them, Figure 4 (compliance
    and unilateral defection against P_sat and the number of contingencies), and the LLM agents' tokens and
    cost. Regret's RCC games are the rational experiment's, played once into the same job store. A game whose
    model calls fail is stored as errored and the run goes on; a rerun retries it. Resumable."""
    from contractlang.api.experiments import agent_specs, performance

    agents = list(dict.fromkeys(agent))
    seed_list = int_list(seeds, "seed", "--seeds")
    if any(s < 0 for s in seed_list):
        raise InputError(f"--seeds takes seeds of 0 or more, not {seeds!r}")
    allowed = fail_on_error(fail_on_errors)
    settings = llm_settings(agent_specs(agents), llm_flags, calls=not estimate)
    slice_options = _slice(contracts, envs, variants, rhos, limit)
    if estimate:
        with runner_progress(True), playing():
            plan = performance(
                agents=agents,
                directory=directory,
                out=out,
                role=role,
                seeds=seed_list,
                settings=setting,
                **slice_options,
                llm=settings,
                estimate=True,
                floors=floors,
            )
        echo_estimate(plan, json_out)
        return
    llm_client(settings)  # a recordings file that cannot be used stops the run here, before any game
    with runner_progress(json_out) as advance, playing():
        result = performance(
            agents=agents,
            directory=directory,
            out=out,
            role=role,
            seeds=seed_list,
            settings=setting,
            **slice_options,
            convention=convention,
            workers=workers,
            ray=ray,
            llm=settings,
            progress=advance,
            notice=None if json_out else lambda text: typer.echo(text, err=True),
            fail_on_error=allowed,
            floors=floors,
        )
    rep = result.report
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "contracts": rep.contracts,
                    "seeds": list(rep.seeds),
                    "agents": agents,
                    "roles": list(rep.roles),
                    "covers": rep.covers,
                    "errored": rep.errored,
                    "limited": rep.limited,
                    "played_now": {"rational": result.played_rational, "agents": result.played_agents},
                    "llm": [u.model_dump(mode="json") | {"total_tokens": u.total_tokens} for u in rep.llm],
                    "convention": convention,
                    "floors": floors,
                    "tables": str(result.tables),
                    "figure": str(result.figure),
                }
            )
        )
        return
    typer.echo(result.markdown, nl=False)
    typer.echo("")
    for u in rep.llm:
        cost = "cost unknown for this model" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        typer.echo(
            f"{u.agent}: {u.games} games, {u.calls} LLM calls ({u.failed} failed), {u.total_tokens:,} tokens "
            f"({u.input_tokens:,} input, {u.output_tokens:,} output, prompt cache {u.cache_read_tokens:,} "
            f"read and {u.cache_write_tokens:,} written), {cost}"
        )
    left_out = (
        f"; {rep.errored} errored and {rep.limited} limited games left out of the tables"
        if rep.errored or rep.limited
        else ""
    )
    typer.echo(
        f"{rep.contracts} contracts × {len(rep.seeds)} seed(s) × {len(agents)} agent(s) × "
        f"{len(rep.settings)} setting(s) × {len(rep.roles)} role(s) × 3 counterparties under the {floors} "
        f"floor rule set ({result.played_agents} agent games and {result.played_rational} rational jobs "
        f"played now{left_out}); tables and Figure 4 in {result.folder}"
    )


def echo_estimate(plan, json_out: bool) -> None:
    """`--estimate`'s answer: one line, or its JSON."""
    if json_out:
        typer.echo(json.dumps({"ok": True, "estimate": plan.model_dump(mode="json")}))
    else:
        typer.echo(plan.text())


@experiment_app.command("frontier")
def experiment_frontier(
    directory: Directory = None,
    out: Out = None,
    envs: Annotated[
        str | None,
        typer.Option(
            help="Environments (default: every one the contract set "
            "covers); the panels of others drawn before are kept."
        ),
    ] = None,
    f2_seeds: Annotated[
        int,
        typer.Option(
            min=0,
            max=1000,
            help=(
                "Grim-only contracts per stochastic environment whose contingency variants join F2's pool: the most "
                "valuable of each P_sat band of width 0.05 counted down from 0.95."
            ),
        ),
    ] = 8,
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Pareto frontiers F1 (grim only) and F2 (all contingencies) per environment [CS-35], over contracts valued
    exactly: the `synth` searches' pool in Envs 3–6, an enumeration in Envs 1–2. Writes a Figure-2 style PNG
    per environment and the points as JSON. Resumable."""
    from contractlang.api.experiments import frontier

    chosen = None if envs is None else int_list(envs, "environment", "--envs")
    with runner_progress(json_out) as advance:
        result = frontier(directory, out, chosen, f2_seeds, workers, ray, advance)
    found, folder, ran = result.frontiers, result.folder, result.ran
    if json_out:
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "out": str(folder),
                    "pool_jobs_run_now": ran,
                    "envs": [
                        {"env": f.env, "f1": len(f.f1), "f2": len(f.f2), "pool_f1": f.pool_f1, "pool_f2": f.pool_f2}
                        for f in found
                    ],
                }
            )
        )
        return
    typer.echo(f"{'env':>3}  {'pool F1':>7} {'pool F2':>7}  {'|F1|':>4} {'|F2|':>4}  {'max U_C+U_S F1':>14} {'F2':>8}")
    for f in found:
        best = [max((p.joint_utility for p in pts), default=float("nan")) for pts in (f.f1, f.f2)]
        typer.echo(
            f"{f.env:>3}  {f.pool_f1:>7} {f.pool_f2:>7}  {len(f.f1):>4} {len(f.f2):>4}  {best[0]:14.2f} {best[1]:8.2f}"
        )
    typer.echo(f"plots and points in {folder} ({ran} pool jobs run now)")


@app.command("seal")
def seal(
    stores: Annotated[
        list[Path],
        typer.Argument(
            help="Job stores (`jobs/*.jsonl`, a sweep's games.jsonl) written before stores carried checks.",
            show_default=False,
        ),
    ],
    json_out: JsonFlag = False,
) -> None:
    """Give every line of a job store written before stores carried checks its check, so runs read it again:
    only for stores you trust, since nothing can tell an old store from one whose checks were removed."""
    from contractlang.api.experiments import seal as seal_stores

    sealed = seal_stores(stores)
    if json_out:
        typer.echo(json.dumps({"ok": True, "sealed": sealed}))
        return
    for path, lines in sealed.items():
        typer.echo(f"{path}: {lines} records sealed")
