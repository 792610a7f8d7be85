"""Two Python agents for `py:` (no contractlang import needed): a ContractSim Customer and a CT-Bench player.

    contractlang run examples/worked-example-1.contract --env 1 --customer py:examples/agents/stingy.py:Stingy
    contractlang ctbench sweep --set paper --boards 0,1 --red py:examples/agents/stingy.py:Walker

Run as a program, the same Customer speaks the JSON-lines protocol of `cmd:` agents.
"""

import json
import sys
from types import SimpleNamespace


class Stingy:
    """Pays what is due rounded down to $10, and nothing once the Supplier has breached."""

    name = "stingy"
    roles = ("customer",)

    def act(self, observation):
        if observation.observed_breach:
            return {"kind": "pay", "amount": 0}
        due = min(observation.payment_due, observation.remaining_budget)
        return {"kind": "pay", "amount": due - due % 10}


class Walker:
    """Never trades; honours what it can; steps to the neighbour nearest the goal that it can pay for."""

    name = "walker"

    def act(self, observation):
        if observation.phase in ("negotiate", "confirm"):
            return (
                {"kind": "say", "message": "No contract is needed."}
                if observation.phase == "negotiate"
                else {"kind": "confirm", "accept": False}
            )
        if observation.phase != "move":
            return observation.legal_actions()[-1 if observation.phase == "respond" else 0]
        goal = len(observation.board_rows) - 1
        affordable = [t for t in observation.legal_moves if observation.chips.of(observation.board.colour(t)) > 0]
        best = min(affordable, key=lambda t: 2 * goal - t[0] - t[1], default=None)
        closer = best is not None and sum(best) > sum(observation.position)
        return {"kind": "move", "tile": list(best) if closer else None}


if __name__ == "__main__":
    customer = Stingy()
    for line in sys.stdin:
        observation = SimpleNamespace(**json.loads(line)["observation"])
        print(json.dumps({"action": customer.act(observation)}), flush=True)
