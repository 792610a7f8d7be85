"""Play one ContractSim performance game and keep a typed, replayable record of it."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import ValidationError

from contractlang.errors import BadData, UnknownName
from contractlang.files import FileError, parse_json
from contractlang.interpreter.rounds import DEFAULT_FLOORS, Contingency, RecordedFloors
from contractlang.ir import ContractSimIR
from contractlang.llm import LlmCall, LlmClient
from contractlang.progress import Advance as Progress
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, WEEKS, Frozen
from games.agents import (
    PY_PREFIX,
    AgentError,
    choices,
    model_of,
    names_code,
    play_out,
    refuse_code,
    resolve,
    seated,
    spec_of,
    split_label,
)
from games.contractsim.environments import ENVIRONMENTS, PlayedIn, environment
from games.contractsim.game import ContractSimGame, State
from games.contractsim.llm_agents import LlmPerformer
from games.contractsim.log import LogEntry
from games.contractsim.shocks import draw_shocks
from games.log import Record
from solver.dp.cache import TableCache
from solver.environment import SupplyEnvironment

SESSION_TABLES = TableCache(directory=None)  # solved once per process, kept in memory


class WeekRecord(Frozen):
    """One week of a run, in base units: what the metrics of ContractSim paper, App. C.6 are computed from."""

    week: int
    role: str
    compliant: bool
    excluded: bool
    observed_breach: bool
    paid: int = 0
    spend: int = 0
    value: int = 0


def money_unit(multiplier: int) -> dict:
    """The unit of each amount of a `run --json` object (see `RunRecord.to_json`)."""
    return {
        "record": "base",
        "weeks": "base",
        "dollars": "setting dollars",
        "contract_ir": "setting dollars",
        "trajectory": "setting dollars",
        "multiplier": multiplier,
    }


class RunRecord(Record, PlayedIn):
    """One game, every amount in Catering base units (the paper's tables are in them for all settings);
    `multiplier` turns them into the contract's own dollars."""

    game: ClassVar[str] = "contractsim"

    contract: str
    env: int
    customer: str
    supplier: str
    seed: int
    u_customer: int
    u_supplier: int
    budget: int
    weeks: tuple[WeekRecord, ...]
    customer_first_violation: (
        int | None
    )  # f_i (ContractSim paper, App. C.6) as the monitor recorded it; None: never violated
    supplier_first_violation: int | None
    multiplier: int = 1
    contract_ir: dict | None = None  # the contract's terms, so a counterfactual run can be re-played
    floors: RecordedFloors = DEFAULT_FLOORS  # the floor rule set it was played under ([CS-14a]), for its replays
    log: tuple[LogEntry, ...] = ()
    llm_calls: tuple[LlmCall, ...] = ()  # every model call of an LLM agent, in order: the game's transcript
    llm_defaults: dict[str, int] = {}  # per LLM role: requests that ran out of attempts and defaulted to zero
    # what clause coverage reads of a game whose log is not kept; None: not recorded
    contingencies_fired: tuple[Contingency, ...] | None = None

    @property
    def agents(self) -> dict[str, str]:
        return {"customer": self.customer, "supplier": self.supplier}

    @property
    def outcome(self) -> dict[str, int]:
        return {"customer": self.u_customer, "supplier": self.u_supplier}

    def first_violation(self, role: str) -> int | None:
        return self.customer_first_violation if role == "customer" else self.supplier_first_violation

    def counterparty(self, role: str) -> str:
        return self.supplier if role == "customer" else self.customer

    def counterfactual(self, role: str, tables: TableCache = SESSION_TABLES) -> RunRecord:
        """τ^RCC (ContractSim paper, App. C.6): the same contract, environment, counterparty policy and seed, with `role` played by RCC."""
        if self.contract_ir is None:
            raise ValueError(f"the record of {self.contract!r} holds no contract terms; re-run it to get regret")
        ir = ContractSimIR.from_json_value(self.contract_ir)
        customer, supplier = ("rcc", self.supplier) if role == "customer" else (self.customer, "rcc")
        return play(ir, self.environment, customer, supplier, seed=self.seed, keep_log=False, tables=tables)

    def violation_count(self, role: str) -> int:
        """The weeks in which `role` was not compliant (c = 0, ContractSim paper, App. C.6; a week that owes nothing never is)."""
        return sum(w.role == role and not w.compliant for w in self.weeks)

    def to_json(self, p_sat: float | None) -> dict:
        """The `run --json` object: the record in base units (what `metrics` reads back) with its trajectory,
        the floor rule set it was played under ([CS-14a], named even when it is the default), the utilities in
        the contract's dollars, the contract's `p_sat`, and per role its first violation week
        (f_i of ContractSim paper, App. C.6, null for none) and how many weeks it violated. `money_unit` says which amounts are in
        which unit: the record's own (`u_customer`, `weeks`, `budget`) in Catering base units, as the paper's
        tables; `dollars`, `contract_ir` and the trajectory (the interpreter's events) in the setting's dollars,
        `multiplier` × base (ContractSim paper, App. A.1–A.2)."""
        payload = self.model_dump(exclude={"log"})
        payload.update(
            floors=self.floors,
            money_unit=money_unit(self.multiplier),
            dollars={"u_customer": self.u_customer * self.multiplier, "u_supplier": self.u_supplier * self.multiplier},
            p_sat=p_sat,
            first_violation={role: self.first_violation(role) for role in ("customer", "supplier")},
            violation_counts={role: self.violation_count(role) for role in ("customer", "supplier")},
            trajectory=[e.model_dump() for e in self.log],
            llm_usage=self.llm_usage.model_dump(),
        )
        return payload


def checked_terms(terms: dict) -> ContractSimIR:
    """A record's contract terms, held to the checker's rules: they must read back unchanged through the
    formatter and the checker, so a record can never carry terms no contract file could state."""
    from contractlang.formatter import format_ir
    from contractlang.source import check_source

    try:
        ir = ContractSimIR.from_json_value(terms)
    except ValidationError as exc:
        raise ValueError(_first_error(exc)) from None
    if ir.setting not in SETTINGS:
        raise ValueError(f"setting: unknown setting {ir.setting[:40]!r}; one of {', '.join(SETTINGS)}")
    result = check_source(format_ir(ir), "<contract_ir>")
    if not result.ok:
        raise ValueError(result.diagnostics[0].message)
    if result.contracts[0].ir != ir:
        raise ValueError("the terms do not read back unchanged through the checker")
    return ir


def run_record(obj: object) -> RunRecord:
    """One record from its JSON (`run --json` output; keys of its own beyond the record's are ignored), each
    field held to what `play` can write: seed ≥ 0, a known environment and policies, checkable terms."""
    if not isinstance(obj, dict):
        raise ValueError("a line must be one JSON object")
    try:
        record = RunRecord.from_json_value({k: v for k, v in obj.items() if k in RunRecord.model_fields})
    except ValidationError as exc:
        raise ValueError(_first_error(exc)) from None
    if record.seed < 0:
        raise ValueError(f"seed: {record.seed} is negative; seeds are 0 or more")
    if record.env not in ENVIRONMENTS:
        raise ValueError(f"env: no environment {record.env}; there are {min(ENVIRONMENTS)}..{max(ENVIRONMENTS)}")
    # play writes every week once, in order, with the role due in it; the ContractSim paper, App. C.6 metrics sum over these weeks, so a
    # record with weeks missing (or `"weeks": []`) gave a compliant utility of a shorter game
    roles = tuple(("customer" if w in PAYMENT_WEEKS else "supplier", w) for w in WEEKS)
    if tuple((w.role, w.week) for w in record.weeks) != roles:
        raise ValueError(
            "weeks: a record holds weeks 1..11 in order, each once, the customer's in payment weeks "
            "and the supplier's in production weeks"
        )
    for role, name in (("customer", record.customer), ("supplier", record.supplier)):
        if not known_agent(name, role):
            raise ValueError(
                f"{role}: unknown policy {name[:40]!r}; a record names {', '.join(choices('contractsim', role))}"
            )
    if record.contract_ir is not None:
        try:
            ir = checked_terms(record.contract_ir)
        except ValueError as exc:
            raise ValueError(f"contract_ir: {str(exc).splitlines()[0]}") from None
        if record.multiplier != SETTINGS[ir.setting].multiplier:
            raise ValueError(
                f"multiplier: {record.multiplier} is not the {ir.setting} setting's {SETTINGS[ir.setting].multiplier}"
            )
    _check_amounts(record, record.environment)
    return record


def known_agent(name: str, role: str) -> bool:
    """Whether a record's agent names one the registry knows; a `py:` agent is taken at its word (importing it
    would run the code a data file names)."""
    spec = split_label(name)[1]
    if spec.startswith(PY_PREFIX):
        return True
    try:
        resolve(spec, "contractsim", role)
    except (UnknownName, AgentError):
        return False
    return True


def _check_amounts(record: RunRecord, env: SupplyEnvironment) -> None:
    """The week amounts within what `play` can write in `env` ([CS-05]-[CS-07]): the Customer pays at most
    its budget in all and nothing else; the Supplier buys at most `order_cap` of each input at the highest
    prices and delivers at most what an inventory of `inventory_cap` per input makes; spending stays within
    capital plus payments; the utilities are the weeks' sums (U_Cust = B + value − paid, U_Supp = paid − spend)."""
    highs = env.price_bounds()[1]
    most_spend = env.order_cap * sum(highs)
    cap, v = env.inventory_cap, env.values
    most_value = max(v[0] * a + (v[1] + v[2]) * (cap - a) for a in range(cap + 1))
    for w in record.weeks:
        if w.role == "customer":
            bad = w.paid < 0 or w.spend != 0 or w.value != 0
        else:
            bad = w.paid != 0 or not 0 <= w.spend <= most_spend or not 0 <= w.value <= most_value
        if bad:
            raise ValueError(
                f"weeks: week {w.week}'s amounts (paid {w.paid}, spend {w.spend}, value {w.value}) are "
                f"beyond what a game in Env {env.id} can write (the {w.role} "
                + (
                    "pays within the budget and spends nothing)"
                    if w.role == "customer"
                    else f"pays nothing, spends 0..{most_spend} and delivers a value of 0..{most_value})"
                )
            )
    paid, spend, value = (sum(getattr(w, k) for w in record.weeks) for k in ("paid", "spend", "value"))
    if record.budget != env.budget or paid > env.budget or spend > env.capital + paid:
        raise ValueError(
            f"weeks: payments of {paid} and spending of {spend} do not fit Env {env.id}'s budget "
            f"{env.budget} and capital {env.capital}"
        )
    if (record.u_customer, record.u_supplier) != (env.budget + value - paid, paid - spend):
        raise ValueError(
            f"u_customer, u_supplier: ({record.u_customer}, {record.u_supplier}) are not the weeks' "
            f"sums ({env.budget + value - paid}, {paid - spend})"
        )


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"


def read_run_records(data: bytes, name: str) -> list[RunRecord]:
    """Every record of a runs file (JSON lines of `run --json`; blank lines skipped); the first line that is not
    one is a `FileError` naming `name:line`."""
    runs = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            runs.append(run_record(parse_json(line)))
        except ValueError as exc:
            raise FileError(f"{name}:{number}: not a run record ({str(exc).splitlines()[0]})") from None
    return runs


def regret_replays(
    runs: list[RunRecord],
    roles: list[str],
    tables: TableCache,
    allow_commands: bool = False,
    progress: Progress | None = None,
) -> dict[str, list[RunRecord]]:
    """Each run's counterfactual (ContractSim paper, App. C.6) for every role in `roles`. Replaying a recorded
    external or Python agent runs the code the record names, so it happens only when `allow_commands` says the
    user asked for it; else nothing is replayed and `CommandRefused` names the code."""
    if not allow_commands:
        refuse_code(r.counterparty(role) for role in roles for r in runs)
    again = [_check_replays(r, tables) if roles else None for r in runs]
    replays, done = len(roles) * len(runs), 0
    out: dict[str, list[RunRecord]] = {}
    if progress is not None:
        progress("counterfactual RCC runs", 0, replays)
    for role in roles:
        out[role] = []
        for r, same in zip(runs, again):
            # a role RCC played already: its counterfactual is the game itself, replayed as it stands
            rcc = same is not None and split_label(getattr(r, role))[1] == "rcc"
            out[role].append(same if rcc else r.counterfactual(role, tables))
            done += 1
            if progress is not None:
                progress("counterfactual RCC runs", done, replays)
    return out


def _check_replays(run: RunRecord, tables: TableCache) -> RunRecord | None:
    """A record of two built-in agents that call no model is replayed as it stands (returned; None for any other
    record): the game its terms, seed and environment give must be the game its weeks hold, else its terms were
    edited after the game and a counterfactual under them (App. C.6) would measure a game nobody played.
    `BadData` naming the record."""
    if not all(_replayable(getattr(run, role), role) for role in ("customer", "supplier")):
        return None
    again = play(
        ContractSimIR.from_json_value(run.contract_ir),
        run.environment,
        run.customer,
        run.supplier,
        seed=run.seed,
        keep_log=False,
        tables=tables,
    )
    if again.weeks != run.weeks:
        week = next(a.week for a, b in zip(again.weeks, run.weeks) if a != b)
        raise BadData(
            f"the record of {run.contract!r} (seed {run.seed}) does not replay: its contract_ir gives another week "
            f"{week} than it holds, so its terms were changed after the game; regret cannot be computed from it"
        )
    return again


def _replayable(name: str, role: str) -> bool:
    """A built-in agent that names no code and calls no model: replaying it runs nothing of the user's and costs
    nothing but time."""
    if names_code(name) or model_of(name) is not None:
        return False
    try:
        return resolve(split_label(name)[1], "contractsim", role).builtin
    except (UnknownName, AgentError):
        return False


class PlayedRun(Frozen):
    """A game of `run`, and the contract's P_sat in its environment when the Supplier is rational."""

    record: RunRecord
    p_sat: float | None = None


def play_run(
    ir: ContractSimIR,
    env_id: int,
    customer: str,
    supplier: str,
    seed: int,
    tables: TableCache,
    llm: LlmClient | None = None,
    guidance: tuple[str, ...] = (),
    floors: str = DEFAULT_FLOORS,
) -> PlayedRun:
    """One game in environment `env_id` under the floor rule set `floors` (see `play`); a rational (rc, rcc)
    Supplier solved the contract's DP table for it, so its P_sat comes with the game."""
    env = environment(env_id, floors)
    record = play(ir, env, customer, supplier, seed=seed, tables=tables, llm=llm, guidance=guidance)
    p_sat = tables.solve(ir, env)[0].p_sat if supplier in ("rc", "rcc") else None
    return PlayedRun(record=record, p_sat=p_sat)


def play(
    ir: ContractSimIR,
    env: SupplyEnvironment,
    customer,
    supplier,
    seed: int = 42,
    keep_log: bool = True,
    tables: TableCache = SESSION_TABLES,
    llm: LlmClient | None = None,
    guidance: tuple[str, ...] = (),
) -> RunRecord:
    """Shocks come from `seed` alone ([CS-11]); policy randomness from a separate stream. `customer` and
    `supplier` are agent specs (games/agents.py) or Python agents. The rational Suppliers' DP tables come from
    `tables` (by default solved once per process and kept in memory). An `llm[:MODEL]` role is played by a fresh
    LLM agent on `llm` (ContractSim paper, App. B.2), with the prompt `guidance` clauses."""
    shocks = draw_shocks(env, np.random.default_rng(seed))
    policy_rng = np.random.default_rng([seed, 1])
    names = {"customer": spec_of(customer), "supplier": spec_of(supplier)}
    game_client = (
        llm.for_game(f"contractsim/{ir.name}/env{env.id}/seed{seed}/{names['customer']}/{names['supplier']}")
        if llm is not None
        else None
    )
    state: State = ContractSimGame.make(ir, env).new_initial_state(shocks)
    spend_by_week: dict[int, int] = {}
    value_by_week: dict[int, int] = {}

    def account(before: State, after: State) -> None:
        week = before.week
        spend_by_week[week] = spend_by_week.get(week, 0) + after.spend_total - before.spend_total
        value_by_week[week] = value_by_week.get(week, 0) + after.value_delivered - before.value_delivered

    with seated(
        {"customer": customer, "supplier": supplier},
        game="contractsim",
        rng=policy_rng,
        contract=ir,
        env=env,
        tables=lambda cover: tables.solve(ir, env, cover)[1],
        llm=game_client,
        guidance=guidance,
    ) as policies:
        state = play_out(state, policies, account)
    weeks = tuple(
        WeekRecord(
            week=s.week,
            role=s.role,
            compliant=s.compliant,
            excluded=s.excluded,
            observed_breach=s.observed_breach,
            paid=s.paid or 0,
            spend=spend_by_week.get(s.week, 0),
            value=value_by_week.get(s.week, 0),
        )
        for s in state.monitor.weeks
    )
    returns = state.returns()
    return RunRecord(
        contract=ir.name,
        env=env.id,
        customer=names["customer"],
        supplier=names["supplier"],
        seed=seed,
        u_customer=returns["customer"],
        u_supplier=returns["supplier"],
        budget=env.budget,
        weeks=weeks,
        customer_first_violation=state.monitor.first_violation("customer"),
        supplier_first_violation=state.monitor.first_violation("supplier"),
        multiplier=ir.setting_info.multiplier,
        contract_ir=ir.model_dump(mode="json"),
        floors=env.floors.name,
        contingencies_fired=state.monitor.contingencies_fired,
        log=state.log if keep_log else (),
        llm_calls=tuple(game_client.calls) if game_client is not None else (),
        llm_defaults={r: p.defaulted for r, p in policies.items() if isinstance(p, LlmPerformer)},
    )


def week_utility_deltas(run: RunRecord) -> dict[str, dict[int, int]]:
    """Δu per role and week (ContractSim paper, Sec. 3): Customer in payment weeks, Supplier in production weeks."""
    by_week = {w.week: w for w in run.weeks}
    cust = {
        w: by_week[w + 1].value - by_week[w].paid if w + 1 in by_week else -by_week[w].paid
        for w in PAYMENT_WEEKS
        if w in by_week
    }
    supp = {
        w: by_week[w - 1].paid + (by_week[11].paid if w == 10 and 11 in by_week else 0) - by_week[w].spend
        for w in PRODUCTION_WEEKS
        if w in by_week
    }
    return {"customer": cust, "supplier": supp}
