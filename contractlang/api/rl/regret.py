"""A policy's expected utility on a contract against the exact value of the rational seat (the DP of ContractSim
paper, App. C.1, through the facade's `solve`), so a learning curve is read as regret in dollars."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from contractlang.api.rl.checks import EnvInputError
from contractlang.vocab import Frozen

REFERENCES = {
    ("supplier", "rcc"): ("u_supplier", "the RCC Supplier against the RCC Customer ([CS-28])"),
    ("supplier", "rc"): ("v_supplier", "the RC Supplier against the RC Customer (V_1(s_1), eq. 12)"),
    ("customer", "rcc"): ("u_customer", "the RCC Customer against the RCC Supplier ([CS-28])"),
}
"""Which exact value of the DP a seat against an opponent is measured against, and what it is the value of."""


class PolicyValue(Frozen):
    """A policy's mean utility over seeded games with its 95 % interval, beside the DP's exact value for the seat;
    money in base dollars ([CS-01])."""

    contract: str
    env: int
    role: str
    opponent: str
    games: int
    mean: float
    low: float  # mean − 1.96 s/√n
    high: float
    optimum: float  # exact: no sampling, no interval
    optimum_of: str
    regret: float  # optimum − mean; negative when the policy beats the rational seat (e.g. by breaching at a profit)
    ratio: float | None  # mean / optimum, when the optimum is positive
    breaches: float  # the share of games in which the seat breached the contract (f_i of App. C.6 set)


def evaluate_policy(
    contract,
    env: int,
    policy: Callable[[dict], np.ndarray],
    role: str = "supplier",
    opponent: str = "rcc",
    games: int = 1000,
    seed: int = 0,
    floors: str = "cs14",
) -> PolicyValue:
    """`policy` (a batch of observations `{"observation": (n, features), "action_mask": (n, actions)}` → one
    action index per game) played in `games` games, seeds `seed`.. on, of the vectorised environment, and the
    DP's exact expected utility of the rational seat against the same opponent. That value is the optimum among
    policies that keep the contract first (eq. 12's selection); a policy that profits from breaching can exceed
    it, and then its regret is negative."""
    from contractlang.api.language import as_checked, solve
    from contractlang.api.rl.vector import MAX_ENVS, contractsim_vector_env

    if (role, opponent) not in REFERENCES:
        known = ", ".join(f"{r} against {o}" for r, o in REFERENCES)
        raise EnvInputError(
            f"role, opponent: no exact value for the {role} against {opponent!r}; there is one for {known}"
        )
    if isinstance(games, bool) or not isinstance(games, int) or not 2 <= games <= MAX_ENVS:
        raise EnvInputError(f"games: {games!r}; a whole number of games, 2 to {MAX_ENVS:,}")
    if not callable(policy):
        raise EnvInputError(f"policy: {policy!r:.60}; a function of a batch of observations to an action per game")
    vector = contractsim_vector_env(contract, env, games, role=role, opponent=opponent, floors=floors)
    observation, _ = vector.reset(seed=list(range(seed, seed + games)))
    done = np.zeros(games, dtype=bool)
    while not done.all():
        observation, _, done, _, infos = vector.step(np.asarray(policy(observation)))
    index = 0 if role == "customer" else 1
    utilities = infos["utilities"][:, index].astype(float)
    mean, spread = float(utilities.mean()), float(utilities.std(ddof=1))
    half = 1.96 * spread / math.sqrt(games)
    field, what = REFERENCES[(role, opponent)]
    checked = as_checked(contract)
    exact = getattr(solve(checked, env, floors=floors), field) / checked.ir.setting_info.multiplier
    return PolicyValue(
        contract=checked.ir.name,
        env=env,
        role=role,
        opponent=opponent,
        games=games,
        mean=mean,
        low=mean - half,
        high=mean + half,
        optimum=exact,
        optimum_of=what,
        regret=exact - mean,
        ratio=mean / exact if exact > 0 else None,
        breaches=float((infos["first_violations"][:, index] > 0).mean()),
    )
