"""The ContractSim commands beyond `run`: negotiate, metrics."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import UsageProblem, playing, runner_progress
from contractlang.cli.llm_options import GuidanceOption, LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (
    ConventionOption,
    EstimateFlag,
    FailOnErrorOption,
    JsonFlag,
    LlmWorkers,
    Ray,
    fail_on_error,
    int_list,
)
from contractlang.cli.render import stdout_console, usage_line


@app.command()
@llm_options(max_tokens=16384, timeout=300.0)
def negotiate(
    env: Annotated[
        str,
        typer.Option(
            "--env",
            help="ContractSim environment(s): N, a comma-separated list, or all "
            "(a sweep: one negotiation per environment).",
        ),
    ],
    customer: Annotated[
        list[str] | None,
        typer.Option(
            help="Customer negotiator, repeatable (every Customer meets every Supplier): scripted (accepts the first "
            "offer with non-negative expected gain; the default), llm[:MODEL], cmd:PROGRAM or py:… (a Python "
            "negotiator answering the turn's JSON text)."
        ),
    ] = None,
    supplier: Annotated[
        list[str] | None,
        typer.Option(
            help="Supplier negotiator, repeatable: scripted (offers the candidates, best for itself first; the "
            "default), llm[:MODEL], cmd:PROGRAM or py:…."
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option(min=1, max=1000, help="Negotiations per pairing and environment (the paper: 3).")
    ] = 1,
    translator: Annotated[
        str, typer.Option(help="Reads every proposal into the IR: rules (offline) or llm[:MODEL].")
    ] = "rules",
    candidates: Annotated[
        list[Path] | None,
        typer.Option(
            "--candidates",
            help="Contract files the scripted Supplier may offer (default: the bundled "
            "catering-*.contract examples); all in one setting.",
        ),
    ] = None,
    setting: Annotated[
        list[str] | None,
        typer.Option(
            help="Negotiate in this setting (repeatable: catering, hotel, ai-hosting; Table 11 / Figure 11): the "
            "candidates are relabelled, money scaled by the setting's multiplier. Default: the candidates' own."
        ),
    ] = None,
    perform_customer: Annotated[
        str,
        typer.Option(
            help="Customer in the performance games on the agreed contract: "
            "rc, re, rcc, random, llm[:MODEL], cmd:PROGRAM or py:…."
        ),
    ] = "rcc",
    perform_supplier: Annotated[
        str, typer.Option(help="Supplier in the performance games (as --perform-customer).")
    ] = "rcc",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first performance game.")] = 42,
    games: Annotated[
        int, typer.Option(min=1, max=1000, help="Performance games per agreed contract (seeds SEED, SEED+1, ...).")
    ] = 1,
    guidance: GuidanceOption = None,
    ablation: Annotated[
        bool,
        typer.Option(
            "--ablation",
            help="Play the control (no clause) and each --guidance "
            "clause alone, the paper's Figure 5 conditions, "
            "instead of all clauses together.",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Directory for the job records (jobs/negotiations.jsonl: a "
            "rerun resumes and plays nothing twice) and "
            "negotiation/: tables and Figures 2, 3 and 5 as PNG + "
            "JSON; --workers and --ray apply only then."
        ),
    ] = None,
    frontiers: Annotated[
        Path | None,
        typer.Option(
            "--frontiers",
            help="A directory `contractlang synth` wrote, whose frontiers (`experiment frontier`) "
            "Figure 2 draws in Envs 3–6 (default: the set shipped in the repository; Envs "
            "1–2's are exact).",
            show_default=False,
        ),
    ] = None,
    workers: LlmWorkers = None,
    ray: Ray = None,
    fail_on_errors: FailOnErrorOption = None,
    estimate: EstimateFlag = False,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Negotiate ContractSim contracts (ContractSim paper, Sec. 3), score each negotiation (ContractSim paper, App. C.5), then perform the agreed contract
    (default RCC vs RCC). Every Customer meets every Supplier in every environment, --repeats times. Offline by
    default: scripted negotiators, the rules translator."""
    from contractlang.api.experiments import negotiations

    customers, suppliers = _agents(customer, "--customer"), _agents(supplier, "--supplier")
    env_ids = "all" if env == "all" else int_list(env, "environment", "--env")
    clauses = tuple(dict.fromkeys(guidance or ()))
    if ablation and not clauses:
        raise UsageProblem("--ablation compares --guidance clauses with the control; give --guidance")
    if estimate and out is None:
        raise UsageProblem("--estimate applies to a run into --out (a stored sweep)")
    perform = (perform_customer, perform_supplier)
    settings = llm_settings(
        [*customers, *suppliers, translator, perform_customer, perform_supplier], llm_flags, calls=not estimate
    )
    plan = partial(
        negotiations,
        env_ids,
        customers,
        suppliers,
        repeats,
        translator,
        candidates,
        setting,
        perform,
        seed,
        games,
        clauses,
        ablation,
        out,
        frontiers,
        workers,
        ray,
        settings,
        fail_on_error=fail_on_error(fail_on_errors),
    )
    if estimate:
        from contractlang.cli.experiments import echo_estimate

        with playing():
            estimated = plan(estimate=True)
        echo_estimate(estimated, json_out)
        return
    client = llm_client(settings)  # a recordings file that cannot be used stops the run here, before any game
    with runner_progress(json_out) as advance, playing():
        done = plan(
            client=client, progress=advance, notice=None if json_out else lambda text: typer.echo(text, err=True)
        )
    jobs, runs, summary, folder = done.jobs, done.runs, done.summary, done.folder
    played_now, unfinished = done.played_now, done.unfinished
    if json_out:
        extra = {} if folder is None else {"out": str(folder), "played_now": played_now, "unfinished": unfinished}
        typer.echo(
            json.dumps(
                {
                    "ok": True,
                    "runs": [r.model_dump(mode="json") for r in runs],
                    "summary": summary.model_dump(),
                    **extra,
                }
            )
        )
        return
    for job, run_ in zip(jobs, runs):
        _print_negotiation(run_, job, done.plan, done.budgets[run_.env], perform, len(runs) > 1)
    if len(runs) > 1:
        typer.echo(
            f"{summary.agreed} of {summary.negotiations} negotiations agreed; mean expected gain Customer "
            f"{summary.mean_gain_customer}, Supplier {summary.mean_gain_supplier}; mean P_sat "
            f"{summary.mean_p_sat}; {summary.performance_games} performance game(s)"
        )
    if folder is not None:
        left_out = f"; {unfinished} errored or limited left out of the tables" if unfinished else ""
        typer.echo(
            f"{played_now} negotiation(s) played now{left_out}; tables and Figures 2, 3"
            f"{' and 5' if ablation else ''} in {folder}"
        )


def _agents(names: list[str] | None, option: str) -> tuple[str, ...]:
    """The negotiators an option names, once each (default scripted); an empty name is a usage error."""
    if names and any(not n.strip() for n in names):
        raise UsageProblem(f"{option} takes a negotiator name, not an empty text")
    return tuple(dict.fromkeys(names or ["scripted"]))


def _print_negotiation(run_, job, plan, budget: int, perform: tuple[str, str], heading: bool) -> None:
    record, metrics = run_.negotiation, run_.metrics
    if heading:
        # the parts of the job that vary in this plan, after the environment (the heading of a single sweep)
        parts = [f"environment {run_.env}"]
        if len(plan.customers) * len(plan.suppliers) > 1:
            parts.append(f"{job.customer} vs {job.supplier}")
        if plan.repeats > 1:
            parts.append(f"repeat {job.repeat + 1}")
        if len(plan.conditions) > 1:
            parts.append(job.condition)
        if len(plan.settings) > 1:
            parts.append(job.setting)
        typer.echo(f"== {', '.join(parts)} ==")
    # a proposal is called by the name its translation found, so a reader can tell the offers apart
    names = [f'"{p.terms.name}"' if p.terms else "a contract" for p in record.proposals]
    offered = iter(names)
    for t in record.turns:
        action = (
            f" — proposes {next(offered)}"
            if t.contract
            else " — accepts"
            if t.accept
            else " — terminates"
            if t.terminate
            else ""
        )
        typer.echo(f"round {t.round} {t.role}: {t.response}{action}")
    for k, (p, name) in enumerate(zip(record.proposals, names), start=1):
        typer.echo(
            f"proposal {k} {name} (round {p.round}, {p.role}): translation {p.status}"
            f"{'' if p.feasible(budget) else ', not feasible'}"
        )
    typer.echo(
        f"outcome: {record.outcome}" + (f" on proposal {len(record.proposals)} {names[-1]}" if metrics.agreed else "")
    )
    if record.outcome == "agreed" and not metrics.agreed:
        typer.echo(
            f"the agreed text does not translate completely ({record.agreed.status}): nothing to score or perform"
        )
    if metrics.agreed:
        regret = metrics.acceptance_regret
        typer.echo(
            f"expected gain: Customer {metrics.gain_customer:.2f}, Supplier {metrics.gain_supplier:.2f}; "
            f"P_sat {metrics.p_sat:.4f}; mutual benefit {metrics.mutual_benefit}; contingencies "
            f"{metrics.contingency_count}; completeness {metrics.completeness:.4f}; acceptance regret "
            f"Customer {regret['customer']}, Supplier {regret['supplier']}"
        )
        m = record.agreed.terms.setting_info.multiplier
        for game in run_.performances:
            typer.echo(
                f"performance ({perform[0]} vs {perform[1]}, seed {game.seed}): Customer "
                f"${game.u_customer * m:,}, Supplier ${game.u_supplier * m:,}"
            )
            if game.llm_calls:
                typer.echo("  " + usage_line(game.llm_usage))
    if record.llm_calls:
        typer.echo("negotiation " + usage_line(record.llm_usage))


@app.command()
def metrics(
    logs: Annotated[list[Path], typer.Argument(help="Run records: JSON lines written by `run --env N --json`.")],
    allow_commands: Annotated[
        bool,
        typer.Option(
            "--allow-commands",
            help="Let the regret replays start the "
            "external agents (cmd:PROGRAM) the records name; off by default, "
            "so a data file never starts a program.",
        ),
    ] = False,
    convention: ConventionOption = "cs19",
    json_out: JsonFlag = False,
) -> None:
    """ContractSim performance metrics (ContractSim paper, App. C.6) over run records: a row per role and policy (Tables 7–10).

    Amounts are in Catering base units for every setting, as in the paper's tables. Regret and compliant
    regret replay each run with the role played by RCC (same contract, environment, counterparty, seed and floor
    rule set, [CS-14a], which each record names); records of two floor rule sets are refused together."""
    from contractlang.api.experiments import metrics as summarise
    from contractlang.progress import job_progress

    with job_progress(json_out) as advance, playing():
        result = summarise(logs, allow_commands, convention, advance, lambda note: typer.echo(note, err=True))
    summaries, floors = result.roles, [result.floors]
    if json_out:
        typer.echo(json.dumps({"ok": True, "floors": floors[0], "roles": [s.model_dump() for s in summaries]}))
        return
    result.print_table(stdout_console())  # whole rows into a pipe, like every table
    typer.echo(f"Played under the {floors[0]} floor rule set [CS-14a]; regret replays under the same.")
