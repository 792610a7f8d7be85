"""Train a Supplier against the RCC Customer on a shipped contract and draw its learning curve against the exact
optimum (the DP's value of the rational Supplier, ContractSim paper, App. C.1).

The learner is the cross-entropy method, a policy search that needs only numpy: it samples policies around a
Gaussian, plays each in the vectorised environment, and refits the Gaussian to the best. A policy orders up to a
target stock of each input in each production week, one target when the input's price is at its lowest and one
when it is not, and delivers what is due as far as its inventory goes.

    python3 examples/rl/train_supplier.py --minutes 10 --out rl-curve

writes rl-curve/curve.json (the curve, the optimum, when 90 % of it was first reached) and rl-curve/curve.png.
Time is CPU time of this process (one thread), so a machine shared with other work still gives the budget.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the curve module beside this script

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
    mean = np.concatenate([np.full(TARGETS, 3.0), np.ones(ROUNDS)])
    spread = np.concatenate([np.full(TARGETS, 1.0), np.full(ROUNDS, 0.5)])
    curve, steps = Curve(args.env, "cross-entropy method over order-up-to policies (numpy)"), 0
    while curve.seconds() < args.minutes * 60:
        thetas = rng.normal(mean, spread, size=(args.population, len(mean)))
        scores = play(env, thetas, seed=int(rng.integers(2**31)), lowest=lowest)
        steps += env.num_envs * 2 * ROUNDS  # a Supplier decides twice in each of the five production weeks
        elite = thetas[np.argsort(scores)[-args.population // 8 :]]
        mean, spread = elite.mean(axis=0), elite.std(axis=0) + 0.05
        curve.measure(lambda o, m=mean: act(m, o, names, lowest), steps)
    curve.write(args.out)


if __name__ == "__main__":
    main()
