"""The ContractSim commands beyond `run`: negotiate, metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError, playing
from contractlang.cli.inputs import load_contracts
from contractlang.cli.llm_options import GuidanceOption, LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import JsonFlag, int_list
from contractlang.cli.render import usage_line
from contractlang.files import read_capped

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
    games: Annotated[int, typer.Option(min=1, max=1000, help="Performance games per agreed contract (seeds SEED, SEED+1, "
                                                   "...).")] = 1,
    guidance: GuidanceOption = None,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Negotiate ContractSim contracts (§8), score each negotiation (§13), then perform the agreed contract
    (default RCC vs RCC). Offline by default: scripted negotiators, the rules translator."""
    from contractlang.progress import job_progress
    from games.contractsim.environments import ENVIRONMENTS, environment
    from games.contractsim.llm_agents import guidance_for
    from games.contractsim.session import check_names, negotiate_each
    from solver.dp import TableCache

    perform = (perform_customer, perform_supplier)
    check_names(customer, supplier, translator, perform)
    env_ids = list(ENVIRONMENTS) if env == "all" else int_list(env, "environment", "--env")
    guidance_for(tuple(guidance or ()), "negotiation", "customer")
    environments = [environment(e) for e in dict.fromkeys(env_ids)]
    if not environments:
        raise InputError("--env names no environment")
    settings = llm_settings([customer, supplier, translator, perform_customer, perform_supplier], llm_flags)
    files = candidates or sorted(EXAMPLES.glob("catering*.contract"))
    offers = [c.ir for f in files for c in load_contracts(f) if c.ir.kind == "contractsim"]
    if not offers:
        raise InputError("no ContractSim contract to offer; give --candidates FILE")
    settings_keys = sorted({ir.setting for ir in offers})
    if len(settings_keys) > 1:
        raise InputError(f"the candidates mix settings ({', '.join(settings_keys)}); one negotiation is in one "
                         "setting")
    client = llm_client(settings)
    tables = TableCache()
    with job_progress(json_out) as advance, playing(tables):
        sweep = negotiate_each(environments, customer, supplier, offers, tables, translator, perform,
                               tuple(range(seed, seed + games)), client, tuple(guidance or ()), advance)
    summary = sweep.summary
    if json_out:
        typer.echo(json.dumps({"ok": True, "runs": [r.model_dump(mode="json") for r in sweep.runs],
                               "summary": summary.model_dump()}))
        return
    for run_ in sweep.runs:
        _print_negotiation(run_, environments, perform, len(sweep.runs) > 1)
    if len(sweep.runs) > 1:
        typer.echo(f"{summary.agreed} of {summary.negotiations} negotiations agreed; mean expected gain Customer "
                   f"{summary.mean_gain_customer}, Supplier {summary.mean_gain_supplier}; mean P_sat "
                   f"{summary.mean_p_sat}; {summary.performance_games} performance game(s)")


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
                typer.echo("  " + usage_line(game.llm_usage))
    if record.llm_calls:
        typer.echo("negotiation " + usage_line(record.llm_usage))


@app.command()
def metrics(
    logs: Annotated[list[Path], typer.Argument(help="Run records: JSON lines written by `run --env N --json`.")],
    allow_commands: Annotated[bool, typer.Option("--allow-commands", help="Let the regret replays start the "
                                                 "external agents (cmd:PROGRAM) the records name; off by default, "
                                                 "so a data file never starts a program.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """ContractSim performance metrics (spec §15) over run records, per role, in the layout of Tables 7–10.

    Amounts are in Catering base units for every setting, as in the paper's tables. Regret and compliant
    regret replay each run with the role played by RCC (same contract, environment, counterparty and seed)."""
    from contractlang.progress import job_progress
    from games.contractsim.metrics import performance_metrics
    from games.contractsim.run import read_run_records
    from solver.dp import TableCache

    runs = [r for path in logs for r in read_run_records(read_capped(path), str(path))]
    if not runs:
        raise InputError("no run records found")
    tables = TableCache()
    with job_progress(json_out) as advance, playing(tables):
        summaries = performance_metrics(runs, tables, advance, lambda note: typer.echo(note, err=True),
                                        allow_commands)
    if json_out:
        typer.echo(json.dumps({"ok": True, "roles": [s.model_dump() for s in summaries]}))
        return
    from games.contractsim.story import print_metrics

    print_metrics(summaries)

