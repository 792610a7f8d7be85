"""`contractlang synth` and `contractlang experiment …`: the ContractSim performance experiments (§12–§16)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang.cli.app import app, experiment_app
from contractlang.cli.errors import InputError
from contractlang.cli.inputs import load_one
from contractlang.cli.options import JsonFlag, Ray, Workers, float_set, int_list

app.add_typer(experiment_app, name="experiment")


@contextmanager
def _progress(quiet: bool) -> Iterator:
    """`job_progress` for the experiments, whose runner reports its failures (Ray unreachable, …) as
    RuntimeError."""
    from contractlang.progress import job_progress

    with job_progress(quiet) as advance:
        try:
            yield advance
        except RuntimeError as exc:
            raise InputError(str(exc)) from None


@app.command()
def synth(
    out: Annotated[Path, typer.Option(help="Directory for the contracts, manifest.json and the job records; a "
                                           "rerun into it resumes.")] = Path("synthetic"),
    starts: Annotated[int, typer.Option(min=1, help="Random starts per environment and target [CS-34].")] = 20,
    search_envs: Annotated[str, typer.Option(help="Environments to search in (Env 1 reuses Env 3's terms and Env "
                                                  "2 Env 4's when those are searched).")] = "3,4,5,6",
    rhos: Annotated[str, typer.Option(help="Target satisfaction levels ρ.")] = "0.9,0.8,0.7,0.6,0.5",
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Generate the 180 synthetic performance contracts (spec §12): base contracts by multi-start coordinate
    ascent in Envs 3–6, reused in Envs 1–2, six contingency variants each, every one re-solved; checks E14."""
    from games.contractsim.synth import EXCLUDED_VARIANTS, SynthPlan, synthesize

    envs = int_list(search_envs, "environment")
    if any(e not in range(1, 7) for e in envs):
        raise InputError(f"--search-envs takes environments 1..6, not {search_envs!r}")
    plan = SynthPlan(starts=starts, search_envs=tuple(dict.fromkeys(envs)), rhos=float_set(rhos, "--rhos"))
    with _progress(json_out) as advance:
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


Directory = Annotated[Path, typer.Argument(help="A directory written by `contractlang synth`.")]


@experiment_app.command("rational")
def experiment_rational(
    directory: Directory,
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """All nine RC/RCC/RE pairings on every synthetic contract with seed 42: Tables 7–10 (macro and micro), the
    §16.1 identities E1–E13 checked on the runs, and the paper's §16.2 rows beside ours. Resumable."""
    from games.contractsim.experiments import (RationalJob, RationalReport, identities, rational_records, tables,
                                               tables_markdown, write_report)

    contracts = _synthetic_contracts(directory)
    jobs = [RationalJob(contract=ir, env=entry.env) for entry, ir in contracts]
    with _progress(json_out) as advance:
        records, played = rational_records(jobs, directory / "jobs" / "rational.jsonl", workers, ray, advance)
    rows = tables(records)
    checks = identities(records, rows, {ir.name: entry.p_sat for entry, ir in contracts})
    report = RationalReport(contracts=len(records), rows=tuple(rows), identities=tuple(checks))
    markdown = tables_markdown(rows)
    write_report(directory, report, markdown)
    held = sum(i.holds for i in checks)
    if json_out:
        typer.echo(json.dumps({"ok": True, "contracts": len(records), "played_now": played,
                               "identities_hold": held, "identities": [i.model_dump(mode="json") for i in checks],
                               "tables": str(directory / "rational" / "tables.md")}))
        return
    typer.echo(markdown, nl=False)
    typer.echo("")
    for i in checks:
        status = "holds" if i.holds else "FAILS: " + ", ".join(i.failures)
        typer.echo(f"{i.id:>4}  {status:5s}  ({i.checked} checked)  {i.statement}")
    typer.echo(f"{len(records)} contracts × 9 pairings ({played} contracts played now); {held} of {len(checks)} "
               f"identities hold; tables in {directory / 'rational'}")


@experiment_app.command("frontier")
def experiment_frontier(
    directory: Directory,
    envs: Annotated[Optional[str], typer.Option(help="Environments (default: every one the contract set "
                                                     "covers).")] = None,
    f2_seeds: Annotated[int, typer.Option(min=0, help="Grim-only contracts per stochastic environment whose "
                                                      "contingency variants join F2's pool.")] = 8,
    workers: Workers = None,
    ray: Ray = None,
    json_out: JsonFlag = False,
) -> None:
    """Pareto frontiers F1 (grim only) and F2 (all contingencies) per environment [CS-35], over contracts valued
    exactly: the `synth` searches' pool in Envs 3–6, an enumeration in Envs 1–2. Writes a Figure-2 style PNG
    per environment and the points as JSON. Resumable."""
    from games.contractsim.frontier import (FrontierReport, frontiers, pool_jobs, pool_records, sweeps,
                                            write_report)
    from games.contractsim.synth import read_manifest, search_records

    manifest = read_manifest(directory)
    covered = manifest.plan.envs
    chosen = covered if envs is None else tuple(dict.fromkeys(int_list(envs, "environment")))
    if any(e not in covered for e in chosen):
        raise InputError(f"--envs: this contract set covers environments {', '.join(map(str, covered))}")
    search = search_records(directory, manifest.plan)
    jobs = pool_jobs(search, chosen, f2_seeds)
    with _progress(json_out) as advance:
        pools, ran = pool_records(jobs, directory / "jobs" / "frontier.jsonl", workers, ray, advance)
    found = frontiers(search, pools, chosen)
    report = FrontierReport(frontiers=tuple(found), sweeps=tuple(tuple(sweeps(f)) for f in found))
    folder = write_report(directory, report)
    if json_out:
        typer.echo(json.dumps({"ok": True, "out": str(folder), "pool_jobs_run_now": ran,
                               "envs": [{"env": f.env, "f1": len(f.f1), "f2": len(f.f2), "pool_f1": f.pool_f1,
                                         "pool_f2": f.pool_f2} for f in found]}))
        return
    typer.echo(f"{'env':>3}  {'pool F1':>7} {'pool F2':>7}  {'|F1|':>4} {'|F2|':>4}  "
               f"{'max U_C+U_S F1':>14} {'F2':>8}")
    for f in found:
        best = [max((p.u_customer + p.u_supplier for p in pts), default=float('nan')) for pts in (f.f1, f.f2)]
        typer.echo(f"{f.env:>3}  {f.pool_f1:>7} {f.pool_f2:>7}  {len(f.f1):>4} {len(f.f2):>4}  {best[0]:14.2f} "
                   f"{best[1]:8.2f}")
    typer.echo(f"plots and points in {folder} ({ran} pool jobs run now)")
