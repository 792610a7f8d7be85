"""Benchmark (analysis): whether the shipped search store leaves exact savings untaken (issue #34).

Reads the committed `jobs/search.jsonl` of the shipped synthetic set, solves nothing, and reports per search
environment:
- how many of a start's valued contracts an earlier start of the same environment had valued already, and how
  many of its rounds (a contract's quantities with the payments from some week on, what `RoundMemo` keys on)
  an earlier start had solved: what a store of valuations shared between the search jobs could save;
- for every feasible ascent end, how many quantity-lowering neighbours a quantity-capped first-best bound
  B + 5·Σ_d q_d·(v_d − ingredient cost of d at the lowest prices)⁺ would prove unable to beat the end's
  U_Cust + U_Supp, and the end's surplus over B as a share of that bound. The bound ignores losses, spoilage
  and the Supplier's incentives, and is not even valid ([CS-10] lets a Supplier deliver more than q): if it
  prunes almost nothing, a bound that prunes would have to model those, which is the DP's own work.
Usage: python3 bench/search_reuse.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result  # noqa: E402

from games.contractsim.environments import environment  # noqa: E402
from games.experiments.synth import SHIPPED, SearchRecord, SynthPlan, Terms  # noqa: E402
from games.runner import stored_records  # noqa: E402


def _capped_bound(env_id: int, terms: Terms) -> float:
    env = environment(env_id)
    low = env.price_bounds()[0]
    unit_cost = np.array(
        [low[0] + low[1] + low[2], low[0] + low[1], low[2]]
    )  # recipes A, B, C (ContractSim paper, App. A.1–A.2)
    margin = np.maximum(np.array(env.values) - unit_cost, 0)
    return env.budget + 5 * float(np.dot(terms.quantities, margin))


def _reuse(records: list[SearchRecord]) -> dict:
    seen_points: set = set()
    seen_rounds: set = set()
    points = repeated_points = rounds = repeated_rounds = 0
    for record in sorted(records, key=lambda r: r.job.start):
        keys = {(v.terms.quantities, v.terms.payments) for v in record.valued}
        suffixes = {(q, m[k:]) for q, m in keys for k in range(len(m))}
        points, repeated_points = points + len(keys), repeated_points + len(keys & seen_points)
        rounds, repeated_rounds = rounds + len(suffixes), repeated_rounds + len(suffixes & seen_rounds)
        seen_points |= keys
        seen_rounds |= suffixes
    return {
        "starts": len(records),
        "contracts_valued": points,
        "valued_by_an_earlier_start": repeated_points,
        "round_keys": rounds,
        "round_keys_of_an_earlier_start": repeated_rounds,
    }


def _neighbour_bound(env_id: int, records: list[SearchRecord]) -> dict:
    budget = environment(env_id).budget
    pruned = tried = 0
    shares = []
    for a in (a for r in records for a in r.ascents if a.feasible):
        incumbent = a.valuation.u_customer + a.valuation.u_supplier
        shares.append((incumbent - budget) / (_capped_bound(env_id, a.terms) - budget))
        for d in range(3):
            for step in (-1, -5):
                q = list(a.terms.quantities)
                q[d] += step
                if q[d] < 1:
                    continue
                tried += 1
                pruned += _capped_bound(env_id, Terms.of(q + list(a.terms.prices + a.terms.payments))) <= incumbent
    return {
        "feasible_ends": len(shares),
        "quantity_lowering_neighbours": tried,
        "bound_at_most_incumbent": pruned,
        "surplus_share_of_bound_median": round(float(np.median(shares)), 3),
    }


def main() -> None:
    stored = stored_records(SHIPPED / "jobs" / "search.jsonl", SearchRecord, lambda r: r.job, "search")
    rows = {}
    for env_id in SynthPlan().search_envs:
        records = [r for job, r in stored.items() if job.env == env_id]
        if not records:
            continue
        rows[env_id] = {**_reuse(records), **_neighbour_bound(env_id, records)}
        r = rows[env_id]
        print(
            f"Env {env_id} ({r['starts']} starts): {r['valued_by_an_earlier_start']} of {r['contracts_valued']} "
            f"valued contracts and {r['round_keys_of_an_earlier_start']} of {r['round_keys']} round keys seen by "
            f"an earlier start; the capped bound is at most the end's U_C + U_S for "
            f"{r['bound_at_most_incumbent']} of {r['quantity_lowering_neighbours']} quantity-lowering neighbours of "
            f"{r['feasible_ends']} feasible ends (median surplus {r['surplus_share_of_bound_median']:.0%} of the bound)"
        )
    write_result("search_reuse", {"envs": rows})


if __name__ == "__main__":
    main()
