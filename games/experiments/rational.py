"""The rational-vs-rational performance experiment (ContractSim paper, App. C.6–D.3): all nine RC/RCC/RE pairings on
the synthetic contracts with seed 42, Tables 7–10 (macro and micro), the identities of docs/rules/checks.md checked on the
result, and the rows of ContractSim paper, App. D.3 beside ours.

One job per contract plays its nine games (the regret counterfactual of a pairing is the pairing with the
role played by RCC, one of the nine). Tables are summaries of the stored runs, so they can be recomputed
without playing anything.
"""

from __future__ import annotations

import math
from fnmatch import fnmatchcase
from pathlib import Path

from contractlang.files import make_folder, write_atomically
from contractlang.interpreter.rounds import DEFAULT_FLOORS, RecordedFloors
from contractlang.ir import ContractSimIR
from contractlang.vocab import Frozen
from games.contractsim.batch import play_batch
from games.contractsim.environments import PlayedIn, environment
from games.contractsim.metrics import (
    RoleSummary,
    Stat,
    convention_line,
    output_name,
    role_run,
    summarise,
)
from games.contractsim.play import RunRecord
from games.experiments.paper import PAPER_N, cell_text, paper_tables
from games.runner import Phase, Progress, run_phase, stored_records
from solver.dp import TableCache

SEED = 42
POLICIES = ("rc", "rcc", "re")
COUNTERPARTIES = ("rcc", "rc", "re")  # the paper's row blocks
PAIRINGS = tuple((c, s) for c in POLICIES for s in POLICIES)  # (customer, supplier)
ROLES = ("customer", "supplier")


class ContractSlice(Frozen):
    """Which contracts of a synthetic set an experiment plays: names matching `contracts` (a glob), in `envs`,
    of `variants`, at target `rhos` (each None: all), then the first `limit` of those in manifest order."""

    contracts: str | None = None
    envs: tuple[int, ...] | None = None
    variants: tuple[str, ...] | None = None
    rhos: tuple[float, ...] | None = None
    limit: int | None = None

    @property
    def whole(self) -> bool:
        return self == ContractSlice()

    def select(self, entries: list) -> list:
        """The manifest entries (anything with name, env, variant, rho) the slice keeps, in their order."""
        kept = [
            e
            for e in entries
            if (self.contracts is None or fnmatchcase(e.name, self.contracts))
            and (self.envs is None or e.env in self.envs)
            and (self.variants is None or e.variant in self.variants)
            and (self.rhos is None or any(math.isclose(e.rho, r) for r in self.rhos))
        ]
        return kept if self.limit is None else kept[: self.limit]

    def describe(self, kept: int, total: int) -> str:
        """One line for a table: which slice of the set it covers."""
        if self.whole:
            return f"all {total} contracts of the set"
        parts = [
            f"{name} {value if isinstance(value, (str, int)) else ','.join(map(str, value))}"
            for name, value in self.model_dump().items()
            if value is not None
        ]
        return f"a slice ({'; '.join(parts)}): {kept} of the set's {total} contracts"


class RationalJob(Frozen, PlayedIn):
    """The nine pairings on one contract, under the floor rule set `floors` ([CS-14a]): a part of the job, so a
    store never answers one rule set's job with another's games."""

    contract: ContractSimIR
    env: int
    seed: int = SEED
    floors: RecordedFloors = DEFAULT_FLOORS

    @property
    def needs_table(self) -> bool:
        """RC and RCC Suppliers play in the nine pairings: the contract's DP table is needed (ContractSim paper, App. C.1)."""
        return True


class RationalRecord(Frozen):
    job: RationalJob
    runs: tuple[RunRecord, ...]  # in PAIRINGS order

    def run(self, customer: str, supplier: str) -> RunRecord:
        return self.runs[PAIRINGS.index((customer, supplier))]


def run_rational(job: RationalJob, tables: TableCache | None = None) -> RationalRecord:
    """Tables come from the on-disk cache `synth` filled, so nothing is solved twice."""
    cache = tables or TableCache()
    runs = tuple(play_batch(job.contract, job.environment, c, s, [job.seed], cache)[0] for c, s in PAIRINGS)
    return RationalRecord(job=job, runs=runs)


QUIET_SECONDS_PER_TABLE = 3.3
"""Wall time of one synthetic contract's DP solve on an idle 2-core machine (the shipped 180 in about 10 min);
under load we measured 20-30 s (docs/explanation/fidelity.md)."""


COMPILE_SECONDS = 17
"""The DP kernels' compilation on an idle machine, before the first table where numba's cache holds none (once;
later runs load them from disk): about its CPU time, single-threaded, which bench/cold_solve.py measures beside
the wall time under the load of the day (16.5 s of CPU; the cold solve 64 s wall at a load of 19 on 2 cores)."""


def kernels_compiled() -> bool:
    """Whether numba's on-disk cache holds the DP kernels (`NUMBA_CACHE_DIR`, else beside their module)."""
    import os

    from solver.dp import kernels

    where = os.environ.get("NUMBA_CACHE_DIR")
    cache = Path(where) if where else Path(kernels.__file__).parent / "__pycache__"
    return cache.is_dir() and any(cache.rglob("kernels.solve_round-*.nbi"))


def duration(seconds: float) -> str:
    """About how long, in seconds under two minutes and in minutes above."""
    return f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.0f} min"


class SolvingPlan(Frozen):
    """What a run must solve before it plays: of the contracts with games still to play (in any phase), those whose
    DP tables are needed and not on disk, and a quiet-machine estimate of the time (the kernels' compilation
    included when they are not compiled yet)."""

    to_play: int
    to_solve: int
    compile: bool = False  # the DP kernels must be compiled first (numba's cache holds none)

    @property
    def quiet_seconds(self) -> float:
        return self.to_solve * QUIET_SECONDS_PER_TABLE + (COMPILE_SECONDS if self.compile and self.to_solve else 0)

    def text(self, cache_dir: Path) -> str:
        compiling = f", the first after the solver's kernels compile (about {COMPILE_SECONDS} s, once)"
        return (
            f"{self.to_solve} of {self.to_play} contracts to play have no solved DP table in {cache_dir}: each "
            f"is solved before its games{compiling if self.compile else ''}, {duration(self.quiet_seconds)} in all "
            f"on an idle 2-core machine ({QUIET_SECONDS_PER_TABLE} s a table), several times that under load; the "
            "progress line below keeps the running estimate"
        )


def unplayed(jobs: list, stores: list[Path], record_type: type) -> list:
    """The jobs that none of `stores` holds a record of yet (read without their locks; a missing store holds none)."""
    done: set = set()
    for path in stores:
        done |= stored_records(path, record_type, lambda r: r.job, "games").keys()
    return [j for j in jobs if j not in done]


def solving_plan(todo: list, tables: TableCache) -> SolvingPlan:
    """Over jobs still to play (anything with `contract`, `environment` and `needs_table`): how many contracts,
    each in its environment and floor rule set, they play, and how many of those need a DP solve first."""
    cases = {(j.contract, j.environment) for j in todo}
    needed = {(j.contract, j.environment) for j in todo if j.needs_table}
    to_solve = sum(not tables.holds(ir, env) for ir, env in needed)
    return SolvingPlan(to_play=len(cases), to_solve=to_solve, compile=bool(to_solve) and not kernels_compiled())


def rational_records(
    jobs: list[RationalJob],
    store_path: Path,
    workers: int | None,
    ray_address: str | None,
    progress: Progress | None = None,
    shared: Path | None = None,
) -> tuple[list[RationalRecord], int]:
    """Every job's record, from the store (or the read-only `shared` one) or played now (and appended to the
    store); and how many were played now."""
    records, ran = run_phase(*rational_phase(jobs, store_path, shared)[:5], workers, ray_address, progress, shared)
    return [records[j] for j in jobs], ran


def rational_phase(jobs: list[RationalJob], store_path: Path, shared: Path | None = None) -> Phase:
    """The rational jobs as a phase of `games.runner.run_games`: CPU work (each solves its contract's DP table,
    then plays the nine pairings)."""
    return Phase("games", store_path, RationalRecord, run_rational, jobs, shared)


class TableRow(Frozen):
    """One row of Tables 7–10: `role` played by `policy` against `counterparty`."""

    role: str
    counterparty: str
    policy: str
    summary: RoleSummary


def pairing(role: str, own: str, other: str) -> tuple[str, str]:
    """(customer, supplier) of the game in which `own` plays `role` against `other`."""
    return (own, other) if role == "customer" else (other, own)


def table_row(
    role: str,
    counterparty: str,
    policy: str,
    runs: list[RunRecord],
    counterfactual: list[RunRecord],
    convention: str = "cs19",
) -> TableRow:
    """One row over the cases' runs; `counterfactual[j]` is run j with `role` played by RCC (ContractSim paper, App. C.6)."""
    return TableRow(
        role=role, counterparty=counterparty, policy=policy, summary=summarise(runs, role, counterfactual, convention)
    )


def tables(records: list[RationalRecord], convention: str = "cs19") -> list[TableRow]:
    return [
        table_row(
            role,
            other,
            own,
            [r.run(*pairing(role, own, other)) for r in records],
            [r.run(*pairing(role, "rcc", other)) for r in records],
            convention,
        )
        for role in ROLES
        for other in COUNTERPARTIES
        for own in POLICIES
    ]


COLUMNS = ("U", "CU", "R", "CR", "Compl.", "Cond.", "Expl.", "TFT", "Def.", "Uni.", "Rec.")


def row_cells(s: RoleSummary, micro: bool) -> tuple[str, ...]:
    """The eleven cells of a row as the paper prints them: money to one decimal, rates in percent."""
    pct = 100.0
    compliance = (
        (s.compliance_micro, s.conditional_micro, s.exploited_micro, s.tft_micro)
        if micro
        else (s.compliance, s.conditional, s.exploited, s.tft)
    )
    return (
        s.utility.text(),
        s.compliant_utility.text(),
        _text(s.regret),
        _text(s.compliant_regret),
        *(c.text(pct) for c in compliance),
        s.defection.text(pct),
        s.unilateral.text(pct),
        s.reciprocal.text(pct),
    )


def _text(stat: Stat | None) -> str:
    return "–" if stat is None else stat.text()


PAPER_ROWS: dict[tuple[str, str, str], tuple[str, ...]] = {
    (t.role, r.counterparty, r.agent): tuple(cell_text(c) for c in r.cells)
    for t in paper_tables()
    if t.aggregation == "macro"
    for r in t.rows
    if r.rational
}
"""The paper's rational rows (Tables 7–8, macro; ContractSim paper, App. D.3) keyed (role, counterparty, policy), for the side-by-side
comparison."""

TITLES = {
    ("customer", False): "Table 7 — Customer, macro",
    ("supplier", False): "Table 8 — Supplier, macro",
    ("customer", True): "Table 9 — Customer, micro",
    ("supplier", True): "Table 10 — Supplier, micro",
}


LEGEND = (
    "Columns: U utility and CU compliant utility, R regret and CR compliant regret (dollars; the paper heads CU "
    'and CR "Compl." under Utility and Regret); Compl. the compliance rate, Cond. compliance before the '
    "counterparty's first breach, Expl. compliance after it, TFT tit-for-tat (%, the paper's Compliance: Rate, "
    "Cond., Exploited, TFT); Def. defection, Uni. unilateral and Rec. reciprocal defection (% of runs, the "
    "paper's Defection: Rate, Unilateral, Reciprocal). Cond., Expl., Uni. and Rec. are over the eligible runs "
    "only (ContractSim paper, App. C.6)."
)
FIDELITY = (
    "Why rows here, the rational ones included, can differ from the paper's: the fidelity page "
    "(docs/explanation/fidelity.md)."
)


def is_slice(covers: str) -> bool:
    """Whether a `ContractSlice.describe` line names a slice rather than the whole set."""
    return covers.startswith("a slice")


def table_notes(covers: str) -> tuple[str, ...]:
    """The lines under every table: the slice it covers when it is one, the legend, the fidelity page."""
    caveat = (
        (f"Not the paper's {PAPER_N} cases but {covers}: these rows describe that slice only.",)
        if is_slice(covers)
        else ()
    )
    return (*caveat, LEGEND, FIDELITY)


def table_lines(
    heading: str, role: str, left: str, rows: list[tuple[str, str, tuple[str, ...]]], notes: tuple[str, ...] = ()
) -> list[str]:
    """One table of the paper's layout: `heading`, the column heads (`left` names the counterparty column),
    one line per (counterparty, policy, cells), a blank line, then each of `notes` as a paragraph."""
    return [
        heading,
        "",
        f"| {left} | {role.capitalize()} | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
        *(f"| {other} | {own} | " + " | ".join(cells) + " |" for other, own, cells in rows),
        "",
        *(line for note in notes for line in (note, "")),
    ]


def counterparty_name(role: str) -> str:
    return "Supplier" if role == "customer" else "Customer"


def tables_markdown(
    rows: list[TableRow], convention: str = "cs19", covers: str = "", floors: str = DEFAULT_FLOORS
) -> str:
    """Tables 7–10 in the paper's layout, then the macro tables beside ContractSim paper, App. D.3 (ours / paper,
    cell by cell)."""
    out = [convention_line(convention, floors), *([f"Contracts: {covers}."] if covers else []), ""]
    for micro in (False, True):
        for role in ROLES:
            out += table_lines(
                f"## {TITLES[role, micro]}",
                role,
                f"{counterparty_name(role)} (counterparty)",
                [
                    (r.counterparty.upper(), r.policy.upper(), row_cells(r.summary, micro))
                    for r in rows
                    if r.role == role
                ],
                table_notes(covers),
            )
    out += ["## Beside the paper (ContractSim paper, App. D.3, macro): ours / paper", ""]
    for role in ROLES:
        lines = []
        for r in rows:
            if r.role != role:
                continue
            paper = PAPER_ROWS[r.role, r.counterparty, r.policy]
            cells = tuple(
                mine if _same(mine, theirs) else f"**{mine}** / {theirs}"
                for mine, theirs in zip(row_cells(r.summary, False), paper)
            )
            lines.append((r.counterparty.upper(), r.policy.upper(), cells))
        out += table_lines(f"### {role.capitalize()} side", role, counterparty_name(role), lines, table_notes(covers))
    out.append("Bold cells differ from the paper's (ours first); the others agree as printed.")
    return "\n".join(out) + "\n"


def _same(mine: str, theirs: str) -> bool:
    """Equal as printed, reading the paper's "100.0" as "100.0 ± 0.0" and -0.0 as 0.0."""

    def norm(text: str) -> str:
        return text.removesuffix(" ± 0.0").replace("-0.0", "0.0")

    return norm(mine) == norm(theirs)


# --- identities E1–E13 (docs/rules/checks.md) -------------------------------------------------------------------------------------


class Identity(Frozen):
    id: str
    statement: str
    holds: bool
    checked: int  # runs (or contracts) the identity was checked on
    failures: tuple[str, ...] = ()  # the first few cases that break it


def _check(id_: str, statement: str, cases: list[tuple[str, bool]]) -> Identity:
    bad = [name for name, ok in cases if not ok]
    return Identity(id=id_, statement=statement, holds=not bad, checked=len(cases), failures=tuple(bad[:5]))


def _trajectory(run: RunRecord) -> tuple:
    return tuple((w.week, w.compliant, w.excluded, w.paid, w.spend, w.value) for w in run.weeks)


def _close(a: float | None, b: float | None, tol: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, abs_tol=tol)


def identities(
    records: list[RationalRecord], rows: list[TableRow], p_sat: dict[str, float], convention: str = "cs19"
) -> list[Identity]:
    """Identities E1–E13 (docs/rules/checks.md), each checked on every run (or contract) it speaks about."""
    row = {(r.role, r.counterparty, r.policy): r.summary for r in rows}
    name = [r.job.contract.name for r in records]
    budget = {r.job.contract.name: environment(r.job.env).budget for r in records}
    capital = {r.job.contract.name: environment(r.job.env).capital for r in records}
    out = []
    for id_, c, s in (("E1", "re", "rcc"), ("E2", "re", "re")):
        out.append(
            _check(
                id_,
                f"{c.upper()} Customer vs {s.upper()} Supplier: U_Cust = B, U_Supp = 0 in every run",
                [
                    (n, r.run(c, s).u_customer == budget[n] and r.run(c, s).u_supplier == 0)
                    for n, r in zip(name, records)
                ],
            )
        )
    out.append(
        _check(
            "E3",
            "RE Customer: the trajectory against RCC equals the one against RE (so every "
            "Customer row but regret coincides)",
            [(n, _trajectory(r.run("re", "rcc")) == _trajectory(r.run("re", "re"))) for n, r in zip(name, records)],
        )
    )
    out.append(
        _check(
            "E4",
            "Against an RE Customer, RCC and RE Suppliers play the same game",
            [(n, _trajectory(r.run("re", "rcc")) == _trajectory(r.run("re", "re"))) for n, r in zip(name, records)],
        )
    )
    out.append(
        _check(
            "E5",
            "Against an RC Customer, RC and RCC Suppliers play the same game",
            [(n, _trajectory(r.run("rc", "rc")) == _trajectory(r.run("rc", "rcc"))) for n, r in zip(name, records)],
        )
    )
    out.append(
        _check(
            "E6",
            "Against an RE Supplier, U_Cust + U_Supp = B in every run",
            [
                (f"{n} {c}", r.run(c, "re").u_customer + r.run(c, "re").u_supplier == budget[n])
                for n, r in zip(name, records)
                for c in POLICIES
            ],
        )
    )
    e7 = []
    for n, r in zip(name, records):
        for s in POLICIES:
            run = r.run("re", s)
            spend = sum(w.spend for w in run.weeks)
            value = sum(w.value for w in run.weeks)
            e7.append(
                (
                    f"{n} {s}",
                    run.u_supplier == -spend
                    and -capital[n] <= run.u_supplier <= 0
                    and run.u_customer == budget[n] + value,
                )
            )
    out.append(
        _check("E7", "Against an RE Customer, U_Supp = -spend ∈ [-capital, 0] and U_Cust = B + value delivered", e7)
    )
    e8 = [
        (
            f"{role} vs {other}",
            s.regret is not None
            and s.regret.mean == 0
            and s.regret.sd == 0
            and s.compliant_regret.mean == 0
            and s.compliant_regret.sd == 0,
        )
        for (role, other, own), s in row.items()
        if own == "rcc"
    ]
    out.append(_check("E8", "RCC's regret and compliant regret are exactly 0", e8))
    e9 = []
    for (role, other, own), s in row.items():
        rcc = row[role, other, "rcc"]
        e9.append(
            (
                f"{role} {own} vs {other}",
                _close(s.regret.mean, rcc.utility.mean - s.utility.mean)
                and _close(s.compliant_regret.mean, rcc.compliant_utility.mean - s.compliant_utility.mean),
            )
        )
    out.append(
        _check("E9", "Mean regret of X vs Y = mean utility of RCC vs Y - mean utility of X vs Y (compliant too)", e9)
    )
    e10 = []
    for other in COUNTERPARTIES:
        rc, re_ = row["customer", other, "rc"], row["customer", other, "re"]
        e10.append(
            (f"RC vs {other}", rc.compliance.mean == 1 and rc.defection.mean == 0 and rc.exploited.mean in (None, 1.0))
        )
        e10.append(
            (
                f"RE vs {other}",
                re_.compliance.mean == 0 and re_.defection.mean == 1 and re_.unilateral.mean in (None, 1.0),
            )
        )
    out.append(
        _check(
            "E10",
            "RC Customer: compliance 100, defection 0, exploited 100 where defined; RE "
            "Customer: compliance 0, defection 100, unilateral 100",
            e10,
        )
    )
    e11, e12 = [], []
    for n, r in zip(name, records):
        for c, s in PAIRINGS:
            run = r.run(c, s)
            for role in ROLES:
                x = role_run(run, role, convention)  # as the rows were scored
                counterparty_clean = run.first_violation("supplier" if role == "customer" else "customer") is None
                if counterparty_clean and x.eval_weeks:
                    e11.append((f"{n} {c}/{s} {role}", _close(x.tft, x.compliance)))
                if not x.defected:
                    e12.append((f"{n} {c}/{s} {role}", _close(x.compliant_utility, x.utility)))
        for s in POLICIES:
            rc, rcc = (role_run(r.run(c, s), "customer", convention) for c in ("rc", "rcc"))
            if rcc.tft == 1 and rc.eval_weeks == rcc.eval_weeks and rc.eval_weeks:
                e11.append((f"{n} RC/RCC vs {s}", _close(rc.tft, rcc.compliance)))
    out.append(
        _check(
            "E11",
            "(a) TFT = compliance when the counterparty never violates; (b) an RC Customer's "
            "TFT equals the RCC Customer's compliance where RCC's TFT is 100 and the weeks coincide",
            e11,
        )
    )
    out.append(_check("E12", "A role that never violates has compliant utility = utility", e12))
    out.append(
        _check(
            "E13",
            "P_sat is 0 or 1 for every contract in Envs 1–2",
            [(n, p_sat[n] in (0.0, 1.0)) for n, r in zip(name, records) if r.job.env in (1, 2)],
        )
    )
    return out


class RationalReport(Frozen):
    contracts: int
    rows: tuple[TableRow, ...]
    identities: tuple[Identity, ...]
    convention: str = "cs19"  # how a breach bears on later weeks (metrics.CONVENTIONS)
    covers: str = ""  # which contracts of the set (`ContractSlice.describe`)
    floors: RecordedFloors = DEFAULT_FLOORS  # the floor rule set the games were played under ([CS-14a])


def report_paths(out: Path, convention: str, floors: str = DEFAULT_FLOORS) -> tuple[Path, Path]:
    """`out/rational/tables.{json,md}` (`tables.paper-tables.*` under that convention, `tables.FLOORS.*` under
    another floor rule set: `output_name`)."""
    json_path, md_path = (
        out / "rational" / output_name(name, convention, floors) for name in ("tables.json", "tables.md")
    )
    return json_path, md_path


def write_report(out: Path, report: RationalReport, markdown: str) -> Path:
    """The report at its `report_paths`; returns the .md file."""
    json_path, md_path = report_paths(out, report.convention, report.floors)
    make_folder(md_path.parent)
    # a whole-set report leaves `covers` out, so its file reads as before slices existed
    dump = report.model_dump_json(indent=1, exclude={"covers"} if not report.covers else None)
    write_atomically(json_path, dump + "\n")
    write_atomically(md_path, markdown)
    return md_path
