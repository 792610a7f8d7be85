"""Train a Supplier against the RCC Customer on a shipped contract and draw its learning curve against the exact
optimum (the DP's value of the rational Supplier, ContractSim paper, App. C.1).

The learner is CMA-ES from pycma (the `cma` package), a gradient-free policy search: it samples policies from a
Gaussian, plays each in the vectorised environment, and adapts the Gaussian's mean, step size and covariance to the
better ones. A policy orders up to a target stock of each input in each production week, one target when the
input's price is at its lowest and one when it is not, and delivers what is due as far as its inventory goes.

    python3 examples/rl/train_supplier.py --minutes 10 --out rl-curve

writes rl-curve/curve.json (the curve, the optimum, when 90 % of it was first reached) and rl-curve/curve.png.
Time is CPU time of this process (one thread), so a machine shared with other work still gives the budget; an
interrupt (Ctrl-C) ends training early and still writes the curve so far.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the curve module beside this script

import cma  # noqa: E402
import numpy as np  # noqa: E402
from curve import CONTRACT, Curve  # noqa: E402

from contractlang.api.rl import contractsim_vector_env  # noqa: E402

SIDE = 13  # order quantities 0..12 per input
ROUNDS = 5
TARGETS = ROUNDS * 3 * 2  # a target stock per round, input and price level (lowest or not)


def act(theta: np.ndarray, observation: dict, names: tuple[str, ...], lowest: np.ndarray) -> np.ndarray:
    """One action per game: order up to `theta`'s target stock for this round and price level, cut back until
    affordable; deliver what is due as far as the inventory goes, unless `theta` says to deliver nothing."""
    f = observation["observation"].astype(np.int64)
    mask = observation["action_mask"]
    n = len(f)
    col = {name: i for i, name in enumerate(names)}
    t = np.clip(f[:, col["round_index"]], 0, ROUNDS - 1)
    inventory = f[:, [col[k] for k in names if k.startswith("inventory[")]]
    due = f[:, [col[k] for k in names if k.startswith("delivery_due[")]]
    prices = f[:, [col[k] for k in names if k.startswith("price[")]]
    targets = np.clip(np.rint(theta[:TARGETS].reshape(ROUNDS, 3, 2)), 0, SIDE - 1).astype(np.int64)
    level = (prices > lowest).astype(np.int64)
    order = np.clip(targets[t[:, None], np.arange(3)[None, :], level] - inventory, 0, SIDE - 1)
    rows = np.arange(n)
    for _ in range(SIDE):  # cut the order back, one unit of every input at a time, until it is legal
        index = (order[:, 0] * SIDE + order[:, 1]) * SIDE + order[:, 2]
        short = mask[rows, index] == 0
        if not short.any():
            break
        order[short] = np.maximum(order[short] - 1, 0)
    both, third = np.minimum(inventory[:, 0], inventory[:, 1]), inventory[:, 2]
    y0 = np.minimum.reduce([due[:, 0], both, third])
    make = np.stack([y0, np.minimum(due[:, 1], both - y0), np.minimum(due[:, 2], third - y0)], axis=1)
    make = np.where((theta[TARGETS:][t] > 0)[:, None], np.maximum(make, 0), 0)
    triple = np.where(f[:, col["producing"]][:, None] == 1, make, order)
    return (triple[:, 0] * SIDE + triple[:, 1]) * SIDE + triple[:, 2]


def play(env, thetas: np.ndarray, seed: int, lowest: np.ndarray) -> np.ndarray:
    """Each policy's mean utility over the environment's games, split evenly among the policies."""
    per = env.num_envs // len(thetas)
    owner = np.repeat(np.arange(len(thetas)), per)
    observation, _ = env.reset(seed=seed)
    names = env.feature_names
    done = np.zeros(env.num_envs, dtype=bool)
    while not done.all():
        actions = np.zeros(env.num_envs, dtype=np.int64)
        for k, theta in enumerate(thetas):
            rows = slice(k * per, (k + 1) * per)
            actions[rows] = act(theta, {key: v[rows] for key, v in observation.items()}, names, lowest)
        observation, _, done, _, infos = env.step(actions)
    return np.bincount(owner, weights=infos["utilities"][:, 1], minlength=len(thetas)) / per


def search(x0: np.ndarray, stds: np.ndarray, population: int, rng: np.random.Generator) -> cma.CMAEvolutionStrategy:
    """pycma's CMA-ES around `x0` with per-coordinate step sizes `stds`, within the targets' range and the delivery
    switch's; its normal draws come from `rng`, so a run is seeded without numpy's global generator."""
    lower = np.concatenate([np.zeros(TARGETS), np.full(ROUNDS, -1.0)])
    upper = np.concatenate([np.full(TARGETS, SIDE - 1.0), np.ones(ROUNDS)])
    options = {
        "popsize": population,
        "bounds": [lower.tolist(), upper.tolist()],
        "CMA_stds": stds.tolist(),
        "randn": lambda *shape: rng.standard_normal(shape),
        "seed": float("nan"),  # pycma would otherwise seed numpy's global generator
        "verbose": -9,
        "verb_log": 0,  # no outcmaes/ folder in the working directory
        "verb_disp": 0,
    }
    return cma.CMAEvolutionStrategy(x0.tolist(), 1.0, options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=int, default=3, help="ContractSim environment (1..6)")
    parser.add_argument("--minutes", type=float, default=10.0, help="training time budget")
    parser.add_argument("--population", type=int, default=64, help="policies sampled per generation")
    parser.add_argument("--games", type=int, default=128, help="games each sampled policy plays")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("rl-curve"), help="folder for curve.json and curve.png")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    env = contractsim_vector_env(CONTRACT, args.env, args.population * args.games, role="supplier", opponent="rcc")
    names = env.feature_names
    lowest = np.array(env.core.env.price_bounds()[0])
    x0 = np.concatenate([np.full(TARGETS, 3.0), np.ones(ROUNDS)])
    es = search(x0, np.concatenate([np.full(TARGETS, 1.0), np.full(ROUNDS, 0.5)]), args.population, rng)
    curve, steps = Curve(args.env, f"CMA-ES (pycma {cma.__version__})"), 0
    curve.measure(lambda o: act(x0, o, names, lowest), steps)  # the starting policy
    try:
        while steps == 0 or curve.seconds() < args.minutes * 60:  # at least one generation
            thetas = np.array(es.ask())
            scores = play(env, thetas, seed=int(rng.integers(2**31)), lowest=lowest)
            steps += env.num_envs * 2 * ROUNDS  # a Supplier decides twice in each of the five production weeks
            es.tell(list(thetas), list(-scores))  # CMA-ES minimises
            curve.measure(lambda o, m=np.array(es.result.xfavorite): act(m, o, names, lowest), steps)
    except KeyboardInterrupt:  # a run cut short still leaves its curve so far
        print("interrupted: the curve so far")
    settings = {
        "budget_cpu_minutes": args.minutes,
        "population": args.population,
        "games": args.games,
        "seed": args.seed,
        "generations": es.countiter,
    }
    curve.write(args.out, **settings)


if __name__ == "__main__":
    main()
