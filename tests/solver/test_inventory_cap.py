"""The inventory cap is the environment's value (issue #29 item 6): under a cap of 6 instead of 10 the DP
solves, the batch engine and the monitor-driven `play` agree game for game, nothing is ever held above 6, and
a contract that needs 7 units of an input in a week is one no Supplier can meet (ContractSim paper, Sec. 3, [CS-07],
[CS-32])."""

import numpy as np
import pytest

from contractlang.interpreter.contractsim import compile_contractsim
from contractlang.ir import Contingencies, ContractSimIR
from games.contractsim.batch import play_batch
from games.contractsim.environments import environment
from games.contractsim.log import OrderPlaced
from games.contractsim.play import play
from solver.dp import build_problem, kernels
from solver.production import choice_table

CAP = 6


def capped(env_id: int):
    return environment(env_id).model_copy(update={"inventory_cap": CAP})


def weekly(q, payments=(40, 40, 40, 40, 40, 0)) -> ContractSimIR:
    """The same delivery q every production week, GRIM."""
    return ContractSimIR(
        name=f"weekly-{'-'.join(map(str, q))}",
        setting="catering",
        parties=("Customer", "Caterer"),
        prices=(20, 10, 5),
        deliveries=(tuple(q),) * 5,
        payments=payments,
        contingencies=Contingencies(),
    )


FITS = weekly((3, 3, 1))  # uses 6, 6, 4 units: exactly the cap of inputs 1 and 2
TOO_BIG = weekly((4, 3, 1))  # uses 7, 7, 5: one more than a cap of 6 holds, well within 10


def test_the_monitor_and_the_production_rule_are_tabulated_up_to_the_cap():
    compiled = compile_contractsim(FITS, CAP)
    assert compiled.tables[0].violation.shape == (1, CAP + 1, CAP + 1, CAP + 1)
    assert choice_table(compiled, 0, 0).shape == (CAP + 1, CAP + 1, 3)
    problem = build_problem(FITS, capped(3))
    assert problem.side == CAP + 1 and problem.clamp.max() <= CAP and problem.output.shape[2] == (CAP + 1) ** 3
    # beyond the tables the monitor still evaluates a delivery, as the rules read it
    assert compiled.production(0, (0, 0, 0), (CAP + 1, 0, 0)).violation


@pytest.mark.slow
def test_a_contract_within_the_cap_is_met_and_one_beyond_it_cannot_be(tables):
    fits, _, _ = tables.solve(FITS, capped(2))
    too_big, _, _ = tables.solve(TOO_BIG, capped(2))
    roomy, _, _ = tables.solve(TOO_BIG, environment(2))
    assert (fits.p_sat, too_big.p_sat, roomy.p_sat) == (1.0, 0.0, 1.0)  # deterministic Env 2 (E13)
    run = play(TOO_BIG, capped(2), "rcc", "rcc", tables=tables)
    assert run.supplier_first_violation == 2
    assert all(max(e.inventory) <= CAP for e in run.log if isinstance(e, OrderPlaced))
    assert play(TOO_BIG, environment(2), "rcc", "rcc", tables=tables).supplier_first_violation is None


@pytest.mark.parametrize("customer,supplier", [("rcc", "rcc"), ("rc", "rc"), ("re", "rc")])
def test_the_batch_engine_and_play_agree_under_a_smaller_cap(tables, customer, supplier):
    env = capped(5)
    seeds = range(12)
    batch = play_batch(FITS, env, customer, supplier, seeds, tables=tables)
    for seed, record in zip(seeds, batch):
        played = play(FITS, env, customer, supplier, seed=seed, keep_log=True, tables=tables)
        assert all(max(e.inventory) <= CAP for e in played.log if isinstance(e, OrderPlaced))
        assert record == played.model_copy(update={"log": ()})
    outcomes = {(r.u_customer, r.u_supplier, r.supplier_first_violation) for r in batch}
    assert len(outcomes) > 1  # Env 5's shocks make the seeds differ, so the comparison has teeth
    assert len(kernels.solve_round.signatures) == 1 and len(kernels.forward_round.signatures) == 1


@pytest.mark.slow
def test_a_smaller_cap_changes_the_solution(tables):
    """The cap reaches the solver: in stochastic Env 3 a cap of 6 leaves less room to buy ahead than 10."""
    small, table, _ = tables.solve(FITS, capped(3))
    full, _, _ = tables.solve(FITS, environment(3))
    assert small.p_sat <= full.p_sat and (small.p_sat, small.u_supplier) != (full.p_sat, full.u_supplier)
    assert np.all(table.problem.clamp <= CAP)
