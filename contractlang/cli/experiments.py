"""`contractlang synth` and `contractlang experiment …`: the ContractSim performance experiments (§12–§16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang.cli.app import app, experiment_app
from contractlang.cli.errors import InputError, playing, runner_progress
from contractlang.cli.inputs import load_one, synthetic_set
from contractlang.cli.llm_options import LlmFlags, llm_client, llm_options, llm_settings
from contractlang.cli.options import (ConventionOption, JsonFlag, LlmWorkers, Ray, Workers, choice, float_set,
                                     int_list)

app.add_typer(experiment_app, name="experiment")


@app.command()
def synth(
    out: Annotated[Optional[Path], typer.Option(help="Directory for the contracts, manifest.json and the job "
                                                     "records; a rerun into it resumes (default: the set shipped "
                                                     "in the repository, games/contractsim/data/synthetic, which "
                                                     "takes the paper's plan only).")] = None,
    starts: Annotated[int, typer.Option(min=1, max=1000, help="Random starts per environment and target [CS-34].")] = 20,
    search_envs: Annotated[str, typer.Option(help="Environments to search in (Env 1 reuses Env 3's terms and Env "
                                                  "2 Env 4's when those are searched).")] = "3,4,5,6",
    rhos: Annotated[str, typer.Option(help="Target satisfaction levels ρ.")] = "0.9,0.8,0.7,0.6,0.5",
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Generate the 180 synthetic performance contracts (spec §12): base contracts by multi-start coordinate
    ascent in Envs 3–6, reused in Envs 1–2, six contingency variants each, every one re-solved; checks E14."""
    from games.contractsim.synth import EXCLUDED_VARIANTS, SHIPPED, SynthPlan, synthesize

    out = SHIPPED if out is None else out
    envs = int_list(search_envs, "environment", "--search-envs")
    if any(e not in range(1, 7) for e in envs):
        raise InputError(f"--search-envs takes environments 1..6, not {search_envs!r}")
    plan = SynthPlan(starts=starts, search_envs=tuple(dict.fromkeys(envs)), rhos=float_set(rhos, "--rhos"))
    with runner_progress(json_out) as advance:
        run = synthesize(out, plan, workers, ray, advance)
    m = run.manifest
    rows = [r.model_dump(mode="json") | {"holds": r.holds} for r in m.e14]
    not_mb = sum(not e.mutually_beneficial for e in m.contracts + m.excluded)
    if json_out:
        typer.echo(json.dumps({"ok": True, "out": str(out), "contracts": len(m.contracts),
                               "excluded": len(m.excluded), "not_mutually_beneficial": not_mb,
                               "e14_holds": m.e14_holds, "e14": rows, "searched_now": run.searched,
                               "solved_now": run.solved}))
        return
    typer.echo("E14 (base contracts: |P_sat − ρ| ≤ 0.05 and individually rational)")
    typer.echo(f"{'env':>3} {'ρ':>4} {'P_sat':>7} {'U_Cust':>8} {'U_Supp':>7}  starts  E14")
    for r in m.e14:
        if not r.found:
            typer.echo(f"{r.env:>3} {r.rho:>4.1f} {'–':>7} {'–':>8} {'–':>7}  {r.feasible_starts:>6}  no contract found")
            continue
        typer.echo(f"{r.env:>3} {r.rho:>4.1f} {r.p_sat:7.4f} {r.u_customer:8.2f} {r.u_supplier:7.2f}  "
                   f"{r.feasible_starts:>6}  {'holds' if r.holds else 'FAILS'}")
    excluded_not_mb = sum(not e.mutually_beneficial for e in m.excluded)
    typer.echo(f"{len(m.contracts)} contracts in {out / 'contracts'}; E14 holds for {m.e14_holds} of {len(m.e14)} "
               f"base contracts; {not_mb} of {len(m.contracts) + len(m.excluded)} variants not mutually beneficial "
               f"({excluded_not_mb} in the excluded classes {', '.join(EXCLUDED_VARIANTS)}); "
               f"{run.searched} searches and {run.solved} solves run now")


def _synthetic_contracts(directory: Path) -> list:
    """(manifest entry, IR) for every contract `synth` wrote into `directory`, read back from its file."""
    from games.contractsim.synth import read_manifest

    manifest = read_manifest(directory)
    return [(entry, load_one(directory / entry.path).ir) for entry in manifest.contracts]


Directory = Annotated[Optional[Path], typer.Argument(
    help="A directory written by `contractlang synth` (default: the set shipped in the repository, "
         "games/contractsim/data/synthetic).", show_default=False)]


@experiment_app.command("rational")
def experiment_rational(
    directory: Directory = None,
    convention: ConventionOption = "cs19",
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """All nine RC/RCC/RE pairings on every synthetic contract with seed 42: Tables 7–10 (macro and micro), the
    §16.1 identities E1–E13 checked on the runs, and the paper's §16.2 rows beside ours. Resumable."""
    from games.contractsim.experiments import (RationalJob, RationalReport, identities, rational_records, tables,
                                               tables_markdown, write_report)
    from games.contractsim.metrics import CONVENTIONS

    directory = synthetic_set(directory)
    choice(convention, tuple(CONVENTIONS), "convention")
    contracts = _synthetic_contracts(directory)
    jobs = [RationalJob(contract=ir, env=entry.env) for entry, ir in contracts]
    with runner_progress(json_out) as advance:
        records, played = rational_records(jobs, directory / "jobs" / "rational.jsonl", workers, ray, advance)
    rows = tables(records, convention)
    checks = identities(records, rows, {ir.name: entry.p_sat for entry, ir in contracts}, convention)
    report = RationalReport(contracts=len(records), rows=tuple(rows), identities=tuple(checks), convention=convention)
    markdown = tables_markdown(rows, convention)
    written = write_report(directory, report, markdown)
    held = sum(i.holds for i in checks)
    if json_out:
        typer.echo(json.dumps({"ok": True, "contracts": len(records), "played_now": played, "convention": convention,
                               "identities_hold": held, "identities": [i.model_dump(mode="json") for i in checks],
                               "tables": str(written)}))
        return
    typer.echo(markdown, nl=False)
    typer.echo("")
    for i in checks:
        status = "holds" if i.holds else "FAILS: " + ", ".join(i.failures)
        typer.echo(f"{i.id:>4}  {status:5s}  ({i.checked} checked)  {i.statement}")
    typer.echo(f"{len(records)} contracts × 9 pairings ({played} contracts played now); {held} of {len(checks)} "
               f"identities hold; tables in {written}")


AgentOption = Annotated[list[str], typer.Option(
    "--agent", help="The agent under test (repeatable): rc, rcc, re, random, llm[:[PROVIDER/]MODEL] (an LLM agent, "
                    "§10; llm:MODEL or llm:anthropic/MODEL needs ANTHROPIC_API_KEY, llm:openai/MODEL an "
                    "OpenAI-compatible API and OPENAI_API_KEY; or --replay) or cmd:PROGRAM (an external agent "
                    "speaking JSON lines).")]


@experiment_app.command("performance")
@llm_options(max_tokens=8192, timeout=120.0)
def experiment_performance(
    agent: AgentOption,
    directory: Directory = None,
    role: Annotated[str, typer.Option(help="The role the agent plays: customer, supplier or both.")] = "both",
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds; each is one more case per contract.")] = "42",
    setting: Annotated[Optional[list[str]], typer.Option(
        help="Play the agents' games in this setting (repeatable: catering, hotel, ai-hosting): the contracts are "
             "relabelled, money × the setting's multiplier; tables.md adds Table 11, the settings side by side "
             "(amounts in base units).")] = None,
    convention: ConventionOption = "cs19",
    workers: LlmWorkers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """Each agent in each role against RCC, RC and RE on every synthetic contract (spec §10, §15): Tables 7–10
    (macro and micro) with the rational rows of the same cases and the paper's beside them, Figure 4 (compliance
    and unilateral defection against P_sat and the number of contingencies), and the LLM agents' tokens and
    cost. Regret's RCC games are the rational experiment's, played once into the same job store. Resumable."""
    from games.contractsim.experiments import ROLES, rational_records, solving_plan
    from solver.dp import TableCache
    from games.contractsim.performance import (Case, agent_workers, check_agents, figure4, jobs_of,
                                               performance_records, report, write_report)
    from games.contractsim.metrics import CONVENTIONS, output_name

    choice(convention, tuple(CONVENTIONS), "convention")
    directory = synthetic_set(directory)
    roles = list(ROLES) if choice(role, (*ROLES, "both"), "role") == "both" else [role]
    agents = list(dict.fromkeys(agent))
    check_agents(agents)
    seed_list = list(dict.fromkeys(int_list(seeds, "seed", "--seeds")))
    if any(s < 0 for s in seed_list):
        raise InputError(f"--seeds takes seeds of 0 or more, not {seeds!r}")
    from contractlang.vocab import SETTINGS

    game_settings = tuple(choice(s, tuple(SETTINGS), "setting") for s in dict.fromkeys(setting)) if setting else (None,)
    settings = llm_settings(agents, llm_flags)
    llm_client(settings)  # a recordings file that cannot be used stops the run here, before any game
    cases = [Case(contract=ir, env=entry.env, p_sat=entry.p_sat, seed=s)
             for s in seed_list for entry, ir in _synthetic_contracts(directory)]
    rational_jobs = list(dict.fromkeys(c.rational for c in cases))
    jobs = directory / "jobs"
    tables = TableCache()
    plan = solving_plan(rational_jobs, jobs / "rational.jsonl", tables)
    if plan.to_solve and not json_out:
        typer.echo(plan.text(tables.directory), err=True)
    with runner_progress(json_out) as advance, playing():
        records, rational_now = rational_records(rational_jobs, jobs / "rational.jsonl", workers, ray, advance)
        games, played_now = performance_records(
            jobs_of(cases, agents, roles, game_settings), jobs / "performance.jsonl",
            agent_workers(workers, settings), ray, settings, advance)
    rational = dict(zip(rational_jobs, records))
    rep = report(cases, agents, roles, games, rational, game_settings, convention)
    folder = write_report(directory, rep, figure4(cases, rep, games, rational))
    if json_out:
        typer.echo(json.dumps({"ok": True, "contracts": rep.contracts, "seeds": seed_list, "agents": agents,
                               "roles": roles, "played_now": {"rational": rational_now, "agents": played_now},
                               "llm": [u.model_dump(mode="json") | {"total_tokens": u.total_tokens}
                                       for u in rep.llm],
                               "convention": convention, "tables": str(folder / output_name("tables.md", convention)),
                               "figure": str(folder / output_name("figure4.png", convention))}))
        return
    from games.contractsim.performance import markdown

    typer.echo(markdown(rep), nl=False)
    typer.echo("")
    for u in rep.llm:
        cost = "cost unknown for this model" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        typer.echo(f"{u.agent}: {u.games} games, {u.calls} LLM calls ({u.failed} failed), {u.total_tokens:,} tokens "
                   f"({u.input_tokens:,} input, {u.output_tokens:,} output, prompt cache {u.cache_read_tokens:,} "
                   f"read and {u.cache_write_tokens:,} written), {cost}")
    typer.echo(f"{rep.contracts} contracts × {len(seed_list)} seed(s) × {len(agents)} agent(s) × "
               f"{len(game_settings)} setting(s) × {len(roles)} role(s) × 3 counterparties ({played_now} agent games "
               f"and {rational_now} rational jobs played now); tables and Figure 4 in {folder}")


@experiment_app.command("frontier")
def experiment_frontier(
    directory: Directory = None,
    envs: Annotated[Optional[str], typer.Option(help="Environments (default: every one the contract set "
                                                     "covers); the panels of others drawn before are kept.")] = None,
    f2_seeds: Annotated[int, typer.Option(min=0, max=1000, help=(
        "Grim-only contracts per stochastic environment whose contingency variants join F2's pool: the most "
        "valuable of each P_sat band of width 0.05 counted down from 0.95."))] = 8,
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Pareto frontiers F1 (grim only) and F2 (all contingencies) per environment [CS-35], over contracts valued
    exactly: the `synth` searches' pool in Envs 3–6, an enumeration in Envs 1–2. Writes a Figure-2 style PNG
    per environment and the points as JSON. Resumable."""
    from games.contractsim.frontier import DETERMINISTIC, frontiers, pool_jobs, pool_records, write_report
    from games.contractsim.synth import read_manifest, search_records

    directory = synthetic_set(directory)
    manifest = read_manifest(directory)
    covered = manifest.plan.envs
    chosen = covered if envs is None else tuple(dict.fromkeys(int_list(envs, "environment", "--envs")))
    if any(e not in covered for e in chosen):
        raise InputError(f"--envs: this contract set covers environments {', '.join(map(str, covered))}")
    searched = tuple(sorted({manifest.plan.terms_env(e) for e in chosen if e not in DETERMINISTIC}))
    search = search_records(directory, manifest.plan, searched)
    jobs = pool_jobs(search, chosen, f2_seeds)
    with runner_progress(json_out) as advance:
        pools, ran = pool_records(jobs, directory / "jobs" / "frontier.jsonl", workers, ray, advance)
    found = frontiers(search, pools, chosen)
    folder = write_report(directory, found, keep=tuple(e for e in covered if e not in chosen))
    if json_out:
        typer.echo(json.dumps({"ok": True, "out": str(folder), "pool_jobs_run_now": ran,
                               "envs": [{"env": f.env, "f1": len(f.f1), "f2": len(f.f2), "pool_f1": f.pool_f1,
                                         "pool_f2": f.pool_f2} for f in found]}))
        return
    typer.echo(f"{'env':>3}  {'pool F1':>7} {'pool F2':>7}  {'|F1|':>4} {'|F2|':>4}  "
               f"{'max U_C+U_S F1':>14} {'F2':>8}")
    for f in found:
        best = [max((p.joint_utility for p in pts), default=float('nan')) for pts in (f.f1, f.f2)]
        typer.echo(f"{f.env:>3}  {f.pool_f1:>7} {f.pool_f2:>7}  {len(f.f1):>4} {len(f.f2):>4}  {best[0]:14.2f} "
                   f"{best[1]:8.2f}")
    typer.echo(f"plots and points in {folder} ({ran} pool jobs run now)")
