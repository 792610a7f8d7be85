"""ContractSim in a tournament: every Customer against every Supplier on each contract × seed, and the RCC games
in each seat that anchor regret (ContractSim paper, App. C.6: τ^RCC, the same contract, environment, counterparty
and seed with the seat played by RCC). The shocks come from the seed alone ([CS-11]), so every game on one
seed faces the same prices, receipts and spoilage draws whoever plays."""

from __future__ import annotations

from functools import lru_cache, partial
from pathlib import Path

from contractlang.interpreter.rounds import DEFAULT_FLOORS, RecordedFloors
from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient
from contractlang.vocab import Frozen
from games.agents import agent_name, model_of
from games.contractsim.batch import POLICIES, play_batch
from games.contractsim.environments import PlayedIn
from games.contractsim.game import DECISIONS
from games.contractsim.metrics import role_run
from games.contractsim.play import RunRecord, play
from games.experiments.frontier import read_frontiers
from games.experiments.performance import process_tables
from games.experiments.synth import SHIPPED
from games.runner import Phase
from games.tournament.seats import SeatOutcome, seat_of
from solver.dp import TableCache
from solver.dp.problem import Cover
from solver.environment import SupplyEnvironment

ROLES = ("customer", "supplier")
ANCHOR = "rcc"
"""The rational policy of both seats (ContractSim paper, App. C.1): its games are the optimum regret is measured from."""
REFERENCES = ("rcc", "rc", "re", "random")
STORE = "contractsim.jsonl"  # the jobs file of OUT/jobs/, the one `experiment performance` keeps too
CONTRACT_SET = True  # it plays the contracts of a set, each agent in the role it declares (a regret against RCC)


class Case(Frozen):
    """One contract in its environment under one seed: the world every game of the case shares."""

    contract: ContractSimIR
    env: int
    seed: int
    floors: RecordedFloors = DEFAULT_FLOORS

    @property
    def unit(self) -> str:
        return f"{self.contract.name}/env{self.env}/seed{self.seed}"


class Match(Frozen, PlayedIn):
    """One game of a tournament: `customer` against `supplier` (agent specs, or labels of Python agents)."""

    contract: ContractSimIR
    env: int
    seed: int
    customer: str
    supplier: str
    floors: RecordedFloors = DEFAULT_FLOORS

    @classmethod
    def of(cls, case: Case, customer: str, supplier: str) -> Match:
        return cls(
            contract=case.contract,
            env=case.env,
            seed=case.seed,
            customer=customer,
            supplier=supplier,
            floors=case.floors,
        )

    @property
    def case(self) -> Case:
        return Case(contract=self.contract, env=self.env, seed=self.seed, floors=self.floors)

    def __hash__(self) -> int:
        # a run looks every game up by its job many times: hashing the contract's whole terms each time cost more
        # than the lookups' purpose; equal jobs still hash equal, these fields being among those compared
        return hash((self.contract.name, self.env, self.seed, self.customer, self.supplier, self.floors))


class MatchRecord(Frozen):
    """A game, and with the RCC–RCC game of a case the DP's exact figures for it (`exact`), solved in the worker
    that played it so that the process ranking the agents never runs the solver."""

    job: Match
    run: RunRecord
    exact: dict[str, float | None] | None = None


def calls_model(job: Match) -> bool:
    """Whether the game waits on an LLM (one of its players is one)."""
    return _is_model(job.customer) or _is_model(job.supplier)


@lru_cache(maxsize=1024)
def _is_model(spec: str) -> bool:
    """Whether the agent `spec` names is an LLM: asked of every job, and a spec's answer never changes."""
    return model_of(spec) is not None


def play_match(job: Match, client: LlmClient | None = None, objects: dict | None = None) -> MatchRecord:
    """The game of `job` (`play_matches` of it alone), its LLM players on `client`."""
    return play_matches([job], objects, client)[0]


class HeldTables:
    """The DP tables of one batch's games, each read once for the whole batch (through the process's cache). A
    contract's schedule and budget tables together can outgrow what that cache keeps (Env 5: 0.27 and 0.45 GB),
    and a rational Supplier that turns from one to the other mid-game would have both read again every game."""

    def __init__(self, tables: TableCache):
        self.tables, self.held = tables, {}

    def solve(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule", progress=None) -> tuple:
        """`TableCache.solve`, kept for the batch."""
        key = (ir, env, cover)
        if key not in self.held:
            self.held[key] = self.tables.solve(ir, env, cover, progress)
        return self.held[key]


def play_matches(jobs: list[Match], objects: dict | None = None, client: LlmClient | None = None) -> list[MatchRecord]:
    """The games of `jobs`, in order: those of two rational players by the batch engine, every seed of a pairing
    on one contract in one call (the same games `play` plays, [CS-11] shocks per seed), the others by `play`;
    `objects` are Python agents by label."""
    tables = HeldTables(process_tables())
    records: dict[Match, MatchRecord] = {}
    batched: dict[tuple, list[Match]] = {}
    for job in jobs:
        customer, supplier = ((objects or {}).get(s, s) for s in (job.customer, job.supplier))
        if customer in POLICIES and supplier in POLICIES:
            batched.setdefault((job.contract, job.env, job.floors, customer, supplier), []).append(job)
            continue
        llm = client if calls_model(job) else None
        run = play(
            job.contract, job.environment, customer, supplier, seed=job.seed, keep_log=False, tables=tables, llm=llm
        )
        records[job] = MatchRecord(job=job, run=run)
    for (contract, *_, customer, supplier), same in batched.items():
        env = same[0].environment
        runs = play_batch(contract, env, customer, supplier, [job.seed for job in same], tables)
        best = exact(contract, env, tables) if customer == supplier == ANCHOR else None
        records.update((job, MatchRecord(job=job, run=run, exact=best)) for job, run in zip(same, runs))
    return [records[job] for job in jobs]


def matches(cases: list[Case], customers: list[str], suppliers: list[str]) -> list[Match]:
    """Every Customer against every Supplier on every case, and RCC against each in the other seat and against
    itself (the anchors of regret and of the exact figures), the games of one case together so a worker reads
    its DP table once."""
    return list(
        dict.fromkeys(
            Match.of(case, c, s)
            for case in cases
            for c, s in [
                *((c, s) for c in customers for s in suppliers),
                *((ANCHOR, s) for s in suppliers),
                *((c, ANCHOR) for c in customers),
                (ANCHOR, ANCHOR),
            ]
        )
    )


def phase(jobs: list[Match], store: Path, objects: dict | None = None) -> Phase:
    """The tournament's games as one phase of `games.runner.run_games`: a worker plays the games of one contract
    in its environment together (`play_matches`), reading its DP table once; an LLM game is a job on its own."""
    return Phase(
        "tournament games",
        store,
        MatchRecord,
        partial(play_match, objects=objects),
        jobs,
        network=calls_model,
        calls=lambda record: record.run.llm_calls,
        what="tournament game",
        batch=partial(play_matches, objects=objects),
        group=lambda job: (job.contract.name, job.env, job.floors),
    )


def decisions(job: Match) -> list:
    """(model, calls) of each LLM player: its role's `DECISIONS`."""
    models = ((model_of(spec), role) for role, spec in zip(ROLES, (job.customer, job.supplier)))
    return [(model, DECISIONS[role]) for model, role in models if model is not None]


def frontier_welfare() -> dict[int, float]:
    """Per environment, the most welfare u_Cust + u_Supp any contract of its formalised space gives two rational
    players at P_sat ≥ 0.95: the top of its Pareto frontier F2 (ContractSim paper, App. C.5), as shipped."""
    return {f.env: max(p.u_customer + p.u_supplier for p in f.f2) for f in read_frontiers(SHIPPED) if f.f2}


def exact(contract: ContractSimIR, env: SupplyEnvironment, tables: TableCache | HeldTables) -> dict[str, float]:
    """The DP's exact figures of the contract with both seats rational (ContractSim paper, App. C.1): P_sat and
    each seat's expected utility."""
    result = tables.solve(contract, env)[0]
    return {"p_sat": result.p_sat, "customer": result.u_customer, "supplier": result.u_supplier}


def select(jobs: list[Match], needed: dict[str, set[str]]) -> list[Match]:
    """The games of `jobs` that an agent still `needed` in its seat (by label) plays, with their regret anchors."""
    kept = [
        j for j in jobs if agent_name(j.customer) in needed["customer"] or agent_name(j.supplier) in needed["supplier"]
    ]
    anchors = [
        anchor
        for j in kept
        for anchor in (
            *([Match.of(j.case, ANCHOR, j.supplier)] if agent_name(j.customer) in needed["customer"] else []),
            *([Match.of(j.case, j.customer, ANCHOR)] if agent_name(j.supplier) in needed["supplier"] else []),
            Match.of(j.case, ANCHOR, ANCHOR),
        )
    ]
    return list(dict.fromkeys([*kept, *anchors]))


def cells_of(job: Match) -> list[tuple[str, str, str]]:
    """(role, agent, opponent) of both seats of the game."""
    return [("customer", job.customer, job.supplier), ("supplier", job.supplier, job.customer)]


def seats(records: dict[Match, MatchRecord], jobs: list[Match], seated: dict[str, list[str]]) -> list[SeatOutcome]:
    """Both seats of every tournament game among `jobs` (anchors played only for regret are left out), with
    regret and compliant regret (ContractSim paper, App. C.6, eqs. 35–36) against the RCC game in the same seat,
    against the same opponent, on the same seed."""
    field = {role: set(seated[role]) for role in ROLES}
    frontier = frontier_welfare()
    out = []
    for job in jobs:
        rational = Match.of(job.case, ANCHOR, ANCHOR)
        if job not in records or rational not in records:
            continue
        if job.customer not in field["customer"] or job.supplier not in field["supplier"]:
            continue
        run = records[job].run
        best = records[rational].exact
        welfare = run.u_customer + run.u_supplier
        firsts = {r: run.first_violation(r) for r in ROLES}
        for role, agent, opponent in (
            ("customer", job.customer, job.supplier),
            ("supplier", job.supplier, job.customer),
        ):
            anchor = Match.of(job.case, *((ANCHOR, opponent) if role == "customer" else (opponent, ANCHOR)))
            utility = run.u_customer if role == "customer" else run.u_supplier
            seen = role_run(run, role)
            regret = compliant_regret = None
            if anchor in records:
                counterfactual = records[anchor].run
                regret = float(
                    (counterfactual.u_customer if role == "customer" else counterfactual.u_supplier) - utility
                )
                compliant_regret = float(role_run(counterfactual, role).compliant_utility - seen.compliant_utility)
            other = "supplier" if role == "customer" else "customer"
            mine, theirs = firsts[role], firsts[other]
            out.append(
                seat_of(
                    role,
                    agent,
                    opponent,
                    job.case.unit,
                    DECISIONS[role],
                    utility=float(utility),
                    regret=regret,
                    compliant_regret=compliant_regret,
                    # the DP solves RCC against RCC: only against an RCC opponent is RCC's game the optimum
                    optimum_regret=compliant_regret if opponent == ANCHOR else None,
                    gap=None if best[role] is None or opponent != ANCHOR else best[role] - utility,
                    metrics={
                        "exact_utility": best[role],
                        "satisfied": float(mine is None and theirs is None),
                        "p_sat_exact": best["p_sat"],
                        "welfare": float(welfare),
                        "welfare_exact": best["customer"] + best["supplier"] if best["customer"] is not None else None,
                        "welfare_frontier": frontier.get(job.env),
                        "breached": float(mine is not None),
                        "breached_first": float(mine is not None and (theirs is None or mine < theirs)),
                        "compliant_utility": seen.compliant_utility,
                        "compliance": seen.compliance,
                    },
                    fallbacks=run.llm_defaults.get(role, 0),
                )
            )
    return out
