"""The ContractSim commands beyond `run`: negotiate, metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError, UsageProblem, playing, runner_progress
from contractlang.cli.inputs import load_contracts, synthetic_set
from contractlang.cli.llm_options import GuidanceOption, LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (
    ConventionOption,
    EstimateFlag,
    FailOnErrorOption,
    JsonFlag,
    LlmWorkers,
    Ray,
    choice,
    fail_on_error,
    int_list,
)
from contractlang.cli.render import stdout_console, usage_line
from contractlang.files import check_outputs, read_capped
from contractlang.vocab import SETTINGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _frontiers(directory: Path | None) -> tuple:
    """Figure 2's frontiers for Envs 3–6: a given set must have them; the shipped one may not yet."""
    from games.contractsim.frontier import read_frontiers

    drawn = read_frontiers(synthetic_set(directory))
    if directory is not None and not drawn:
        raise InputError(
            f"--frontiers: {directory} has no frontiers/frontiers.json; run `contractlang experiment "
            f"frontier {directory}` first"
        )
    return drawn


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
    from games.contractsim.environments import ENVIRONMENTS, environment
    from games.contractsim.llm_agents import guidance_for
    from games.contractsim.negotiation_experiment import MAX_NEGOTIATIONS, Plan, play_job
    from games.contractsim.session import NegotiationSummary, check_names
    from solver.dp import TableCache

    customers, suppliers = _agents(customer, "--customer"), _agents(supplier, "--supplier")
    perform = (perform_customer, perform_supplier)
    for c in customers:
        for s in suppliers:
            check_names(c, s, translator, perform)
    env_ids = list(ENVIRONMENTS) if env == "all" else int_list(env, "environment", "--env")
    clauses = tuple(dict.fromkeys(guidance or ()))
    guidance_for(clauses, "negotiation", "customer")
    if ablation and not clauses:
        raise UsageProblem("--ablation compares --guidance clauses with the control; give --guidance")
    envs = tuple(environment(e).id for e in dict.fromkeys(env_ids))
    if not envs:
        raise InputError("--env names no environment")
    settings = llm_settings(
        [*customers, *suppliers, translator, perform_customer, perform_supplier], llm_flags, calls=not estimate
    )
    files = candidates or sorted(EXAMPLES.glob("catering*.contract"))
    offers = [c.ir for f in files for c in load_contracts(f) if c.ir.kind == "contractsim"]
    if not offers:
        raise InputError("no ContractSim contract to offer; give --candidates FILE")
    own = sorted({ir.setting for ir in offers})
    if len(own) > 1:
        raise InputError(f"the candidates mix settings ({', '.join(own)}); one negotiation is in one setting")
    chosen = [choice(s, tuple(SETTINGS), "setting") for s in dict.fromkeys(setting or own)]
    plan = Plan(
        envs=envs,
        customers=customers,
        suppliers=suppliers,
        repeats=repeats,
        conditions=((), *((c,) for c in clauses)) if ablation else (clauses,),
        settings=tuple(chosen),
        offers=tuple(offers),
        translator=translator,
        perform=perform,
        seeds=tuple(range(seed, seed + games)),
    )
    if plan.size > MAX_NEGOTIATIONS:
        raise InputError(f"{plan.size:,} negotiations asked for; one command plays at most {MAX_NEGOTIATIONS:,}")
    jobs = plan.jobs()
    allowed = fail_on_error(fail_on_errors)
    if estimate:
        from contractlang.cli.experiments import echo_estimate
        from games.contractsim.negotiation_experiment import decisions, negotiation_phase
        from games.runner import estimate as run_estimate

        if out is None:
            raise UsageProblem("--estimate applies to a run into --out (a stored sweep)")
        echo_estimate(
            run_estimate(negotiation_phase(jobs, out / "jobs" / "negotiations.jsonl"), decisions, settings), json_out
        )
        return
    client = llm_client(settings)  # a recordings file that cannot be used stops the run here, before any game
    drawn = () if out is None else _frontiers(frontiers)
    played_now = unfinished = None
    tables = TableCache()
    with runner_progress(json_out) as advance, playing():
        if out is None:
            runs = []
            advance("negotiating", 0, len(jobs))
            for job in jobs:
                runs.append(play_job(job, client=client, tables=tables).run)
                advance("negotiating", len(runs), len(jobs))
        else:
            from games.contractsim.negotiation_experiment import negotiation_records, report_paths
            from games.runner import RunOptions

            check_outputs(report_paths(out))  # refused now, not after the negotiations
            options = RunOptions(workers=workers, ray=ray, llm=settings, fail_on_error=allowed)
            done, played_now, unfinished = negotiation_records(
                jobs,
                out / "jobs" / "negotiations.jsonl",
                options,
                advance,
                None if json_out else lambda text: typer.echo(text, err=True),
            )
            jobs, runs = [j for j, _ in done], [r for _, r in done]
    summary = NegotiationSummary.of(runs)
    folder = None
    if out is not None:
        from games.contractsim.negotiation_experiment import report, write_report

        folder = write_report(out, report(plan, jobs, runs, drawn), setting is not None)
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
        _print_negotiation(run_, job, plan, perform, len(runs) > 1)
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


def _print_negotiation(run_, job, plan, perform: tuple[str, str], heading: bool) -> None:
    from games.contractsim.environments import environment

    record, metrics = run_.negotiation, run_.metrics
    budget = environment(run_.env).budget
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
    from contractlang.progress import job_progress
    from games.contractsim.metrics import CONVENTIONS, performance_metrics
    from games.contractsim.play import read_run_records
    from solver.dp import TableCache

    choice(convention, tuple(CONVENTIONS), "convention")
    runs = [r for path in logs for r in read_run_records(read_capped(path), str(path))]
    if not runs:
        raise InputError("no run records found")
    floors = sorted({r.floors for r in runs})
    if len(floors) > 1:
        raise InputError(
            f"the records were played under different floor rule sets [CS-14a]: {', '.join(floors)}; "
            "summarise each rule set's records apart"
        )
    if convention != "cs19" and any(r.contract_ir is None for r in runs):
        raise InputError(
            f"--convention {convention} needs the contract's terms in every record; records from "
            "`run --json` of this version hold them"
        )
    tables = TableCache()
    with job_progress(json_out) as advance, playing():
        summaries = performance_metrics(
            runs, tables, advance, lambda note: typer.echo(note, err=True), allow_commands, convention
        )
    if json_out:
        typer.echo(json.dumps({"ok": True, "floors": floors[0], "roles": [s.model_dump() for s in summaries]}))
        return
    from games.contractsim.story import print_metrics

    print_metrics(summaries, stdout_console())  # whole rows into a pipe, like every table
    typer.echo(f"Played under the {floors[0]} floor rule set [CS-14a]; regret replays under the same.")
