"""Many ContractSim games between rational policies at once (RC, RCC, RE on both sides), compiled.

`run.play` is the reference engine (immutable states, the interpreter's monitor, full logs); this
path plays the same rules on plain arrays for the sweeps that need thousands of games, reading the
same tables — the interpreter's week verdicts, the DP's order table and production rule — and the
same [CS-11] shocks, so every game it plays is identical to `play`'s (a test checks that game by game).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from contractlang.interpreter.contractsim import CompiledContractSim
from contractlang.interpreter.rounds import DEDUCTED, contingency_names
from contractlang.ir import ContractSimIR
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS
from games.contractsim.play import SESSION_TABLES, RunRecord, WeekRecord
from games.contractsim.shocks import draw_shocks
from solver.dp import TableCache
from solver.dp.induction import scenario_index
from solver.dp.problem import ORDER_SIDE
from solver.environment import SupplyEnvironment

POLICIES = ("rc", "rcc", "re")
_NEVER = 99


@njit(cache=True)
def _play(
    customer,
    supplier,
    spoil,
    prices,
    scenario,
    uniform,
    policies,
    boxes,
    cash_max,
    receipt_low,
    output,
    violation,
    new_memory,
    deduction,
    required,
    payments,
    values,
    budget,
    capital,
    inventory_cap,
    out_week,
    out_u,
    out_first,
    fires,
    out_fired,
):
    """out_week[g, w-1] = (compliant, excluded, observed_breach, paid, spend, value); out_u[g] = (U_c, U_s);
    out_first[g] = the first violation weeks (Customer, Supplier), 0 for none; out_fired[g] = the contingencies
    fired, as bits (`fires` tabulates a production week's)."""
    side = inventory_cap + 1
    for g in range(spoil.shape[0]):
        cash = capital
        left = budget
        inv = np.zeros(3, dtype=np.int64)
        mu = 0
        pending = 0
        first_c = _NEVER
        first_s = _NEVER
        paid_total = 0
        spend_total = 0
        value_total = 0
        for w in range(1, 12):
            if w % 2 == 1:
                nominal = payments[w // 2]
                due = nominal - min(pending, nominal)
                if customer == 2 or (customer == 1 and first_s < w):
                    pay = 0
                else:
                    pay = min(left, due)
                left -= pay
                cash += pay
                paid_total += pay
                ok = pay >= due
                if due < nominal:
                    out_fired[g] |= DEDUCTED
                if not ok and first_c == _NEVER:
                    first_c = w
                out_week[g, w - 1, 0] = ok
                out_week[g, w - 1, 1] = due == 0
                out_week[g, w - 1, 2] = first_s < w
                out_week[g, w - 1, 3] = pay
                pending = 0
                continue
            t = w // 2 - 1
            for x in range(3):
                inv[x] -= min(spoil[g, t, x], inv[x])
            y = np.zeros(3, dtype=np.int64)
            cost = 0
            if not (supplier == 2 or (supplier == 1 and first_c < w)):
                box = boxes[t]
                o = policies[t][
                    mu,
                    min(inv[0], box[0]),
                    min(inv[1], box[1]),
                    min(inv[2], box[2]),
                    min(cash, cash_max[t]),
                    scenario[g, t],
                ]
                if o < 0:
                    raise ValueError("a game reached a state the order table does not solve")
                order = (o // (ORDER_SIDE * ORDER_SIDE), (o // ORDER_SIDE) % ORDER_SIDE, o % ORDER_SIDE)
                for x in range(3):
                    q = order[x]
                    cost += q * prices[g, t, x]
                    lo = receipt_low[q]
                    inv[x] = min(inventory_cap, inv[x] + lo + int(uniform[g, t, x] * (q - lo + 1)))
                rule = output[t, mu, (inv[0] * side + inv[1]) * side + inv[2]]  # [CS-24], as the DP tabulated it
                y[0], y[1], y[2] = rule[0], rule[1], rule[2]
                inv[0] -= y[0] + y[1]
                inv[1] -= y[0] + y[1]
                inv[2] -= y[0] + y[2]
            cash -= cost
            spend_total += cost
            bad = violation[t, mu, y[0], y[1], y[2]]
            pending = deduction[t, mu, y[0], y[1], y[2]]
            need = required[t, mu]
            out_fired[g] |= fires[t, mu, y[0], y[1], y[2]]
            value = values[0] * y[0] + values[1] * y[1] + values[2] * y[2]
            value_total += value
            if bad and first_s == _NEVER:
                first_s = w
            out_week[g, w - 1, 0] = not bad
            out_week[g, w - 1, 1] = need[0] == 0 and need[1] == 0 and need[2] == 0
            out_week[g, w - 1, 2] = first_c < w
            out_week[g, w - 1, 4] = cost
            out_week[g, w - 1, 5] = value
            mu = new_memory[t, mu, y[0], y[1], y[2]]
        out_u[g, 0] = budget + value_total - paid_total
        out_u[g, 1] = paid_total - spend_total
        out_first[g, 0] = 0 if first_c == _NEVER else first_c
        out_first[g, 1] = 0 if first_s == _NEVER else first_s


def verdicts(compiled: CompiledContractSim) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The monitor's week tables as `_play` reads them, stacked over the five rounds: violation, next memory,
    deduction δ and required quantities."""
    return tuple(
        np.stack([getattr(rt, name) for rt in compiled.tables])
        for name in ("violation", "new_memory_index", "deduction", "required")
    )


def play_batch(
    ir: ContractSimIR, env: SupplyEnvironment, customer: str, supplier: str, seeds, tables: TableCache = SESSION_TABLES
) -> list[RunRecord]:
    """One `RunRecord` (without a log) per seed, equal to `play(ir, env, customer, supplier, seed)`."""
    for role, name in (("customer", customer), ("supplier", supplier)):
        if name not in POLICIES:
            raise KeyError(f"the batch engine plays {', '.join(POLICIES)}; {role} {name!r} needs `play`")
    seeds = list(seeds)
    shocks = [draw_shocks(env, np.random.default_rng(seed)) for seed in seeds]
    spoil = np.array([[w.spoilage for w in s.weeks] for s in shocks], dtype=np.int64).reshape(-1, 5, 3)
    price = np.array([[w.prices for w in s.weeks] for s in shocks], dtype=np.int64).reshape(-1, 5, 3)
    uniform = np.array([[w.receipt_uniform for w in s.weeks] for s in shocks]).reshape(-1, 5, 3)
    _, table, _ = tables.solve(ir, env)
    problem = table.problem
    scenario = np.array([[scenario_index(problem, p) for p in g] for g in price], dtype=np.int64).reshape(-1, 5)
    out_week = np.zeros((len(seeds), 11, 6), dtype=np.int64)
    out_u = np.zeros((len(seeds), 2), dtype=np.int64)
    out_first = np.zeros((len(seeds), 2), dtype=np.int64)
    out_fired = np.zeros(len(seeds), dtype=np.int64)
    _play(
        POLICIES.index(customer),
        POLICIES.index(supplier),
        spoil,
        price,
        scenario,
        uniform,
        table.policies,
        np.array([problem.state_box(t) for t in range(5)], dtype=np.int64),
        problem.cash_max.astype(np.int64),
        np.array([env.receipt_low(o) for o in range(ORDER_SIDE)], dtype=np.int64),
        problem.output,
        *verdicts(problem.compiled),
        problem.payments,
        np.array(env.values, dtype=np.int64),
        env.budget,
        env.capital,
        env.inventory_cap,
        out_week,
        out_u,
        out_first,
        np.stack([rt.fires for rt in problem.compiled.tables]),
        out_fired,
    )
    terms = ir.model_dump(mode="json")  # one copy shared by every record of the batch
    return [
        RunRecord(
            contract=ir.name,
            env=env.id,
            customer=customer,
            supplier=supplier,
            seed=seed,
            u_customer=int(u[0]),
            u_supplier=int(u[1]),
            budget=env.budget,
            multiplier=ir.setting_info.multiplier,
            contract_ir=terms,
            floors=env.floors.name,
            customer_first_violation=int(first[0]) or None,
            supplier_first_violation=int(first[1]) or None,
            contingencies_fired=contingency_names(int(fired)),
            weeks=tuple(
                WeekRecord(
                    week=w,
                    role="customer" if w in PAYMENT_WEEKS else "supplier",
                    compliant=bool(row[w - 1, 0]),
                    excluded=bool(row[w - 1, 1]),
                    observed_breach=bool(row[w - 1, 2]),
                    paid=int(row[w - 1, 3]),
                    spend=int(row[w - 1, 4]),
                    value=int(row[w - 1, 5]),
                )
                for w in sorted(PAYMENT_WEEKS + PRODUCTION_WEEKS)
            ),
        )
        for seed, row, u, first, fired in zip(seeds, out_week, out_u, out_first, out_fired)
    ]
