"""Train a Supplier against the RCC Customer with sb3-contrib's MaskablePPO and draw its learning curve against
the exact optimum (the DP's value of the rational Supplier, ContractSim paper, App. C.1).

The games are stepped by the vectorised environment through the Stable-Baselines3 adapter (`sb3_vec_env`): one
call of the compiled engine steps them all, the masks reach MaskablePPO through `action_masks()`, and the
features are scaled to [0, 1] by their stated ranges. Needs the `rl-train` extra (PyTorch's CPU build first).

    python3 examples/rl/train_supplier_ppo.py --minutes 10 --out rl-curve-ppo

writes rl-curve-ppo/curve.json and curve.png, as examples/rl/train_supplier.py does. Time is CPU time of this
process (PyTorch held to `--threads` threads), so a machine shared with other work still gives the budget; an
interrupt (Ctrl-C) ends training early and still writes the curve so far.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the curve module beside this script

from curve import CONTRACT, Curve  # noqa: E402

from contractlang.api.rl import contractsim_vector_env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=int, default=3, help="ContractSim environment (1..6)")
    parser.add_argument("--minutes", type=float, default=10.0, help="training time budget (CPU minutes)")
    parser.add_argument("--games", type=int, default=256, help="games stepped at once (SB3's n_envs)")
    parser.add_argument("--n-steps", type=int, default=20, help="steps per game in each rollout (2 games)")
    parser.add_argument("--batch", type=int, default=1280, help="minibatch size")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each rollout")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    parser.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus: keeps the policy exploring")
    parser.add_argument("--net", default="64,64", help="hidden layer widths of the policy and value networks")
    parser.add_argument("--reward-scale", type=float, default=0.1, help="rewards (base $) are multiplied by it")
    parser.add_argument("--measure-every", type=int, default=4, help="rollouts between points of the curve")
    parser.add_argument(
        "--factored", action="store_true", help="one head per quantity (MultiDiscrete) instead of 2,197 actions"
    )
    parser.add_argument("--threads", type=int, default=1, help="PyTorch's threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("rl-curve-ppo"), help="folder for curve.json and curve.png")
    args = parser.parse_args()
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback

        from contractlang.api.rl.sb3 import sb3_vec_env
    except ImportError as exc:
        parser.exit(1, f"{exc}\nthis example needs sb3-contrib: see docs/how-to/rl.md (Libraries)\n")

    torch.set_num_threads(args.threads)
    # the masked distribution's argument checks cost as much as its sampling over 2,197 actions
    torch.distributions.Distribution.set_default_validate_args(False)
    vector = contractsim_vector_env(
        CONTRACT, args.env, args.games, role="supplier", opponent="rcc", reward_scale=args.reward_scale, seed=args.seed
    )
    side = vector.core.env.order_cap + 1
    games = sb3_vec_env(vector, factors=(side, side, side) if args.factored else None)
    width = [int(w) for w in args.net.split(",")]
    curve = Curve(args.env, "MaskablePPO (sb3-contrib)")

    def policy(observations: dict):
        features, masks = games.features_of(observations), games.masks_of(observations)
        return games.actions_of(model.predict(features, action_masks=masks, deterministic=True)[0])

    class Measure(BaseCallback):
        """A point of the curve every `--measure-every` rollouts; training stops when the budget is spent."""

        def __init__(self):
            super().__init__()
            self.rollouts = 0

        def _on_step(self) -> bool:
            return curve.seconds() < args.minutes * 60

        def _on_rollout_end(self) -> None:
            self.rollouts += 1
            if self.rollouts % args.measure_every == 0:
                curve.measure(policy, self.num_timesteps)

    model = MaskablePPO(
        "MlpPolicy",
        games,
        learning_rate=args.lr,
        n_steps=args.n_steps,
        batch_size=args.batch,
        n_epochs=args.epochs,
        ent_coef=args.ent_coef,
        gamma=1.0,  # a game is ten decisions and its utility is what counts: no discount
        policy_kwargs={"net_arch": width},
        seed=args.seed,
        device="cpu",
    )
    curve.measure(policy, 0)
    try:
        model.learn(total_timesteps=10**12, callback=Measure())
    except KeyboardInterrupt:  # a run cut short still leaves its curve so far
        print("interrupted: the curve so far")
    curve.measure(policy, model.num_timesteps)
    settings = {
        "budget_cpu_minutes": args.minutes,
        "games": args.games,
        "n_steps": args.n_steps,
        "batch": args.batch,
        "epochs": args.epochs,
        "lr": args.lr,
        "ent_coef": args.ent_coef,
        "net": width,
        "reward_scale": args.reward_scale,
        "factored": args.factored,
        "threads": args.threads,
        "seed": args.seed,
    }
    curve.write(args.out, **settings)


if __name__ == "__main__":
    main()
