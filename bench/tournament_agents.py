"""The two Python agents of bench/tournament.py (`py:bench/tournament_agents.py:Greedy`, `…:Halfway`): both roles
of ContractSim, plain objects returning action dicts, so their games go through `play` like any user's agent."""


def _inputs(due):
    """Inputs I1, I2, I3 that make the products due: pizza takes all three, pasta I1 and I2, soup I3."""
    pizza, pasta, soup = due
    return (pizza + pasta, pizza + pasta, pizza + soup)


def _produce(due, inventory):
    pizza = min(due[0], *inventory)
    pasta = min(due[1], inventory[0] - pizza, inventory[1] - pizza)
    soup = min(due[2], inventory[2] - pizza)
    return {"kind": "produce", "quantities": [pizza, pasta, soup]}


def _order(o, share):
    need = [max(0, -(-n * share[0] // share[1]) - have) for n, have in zip(_inputs(o.delivery_due), o.inventory)]
    cash, out = o.cash, []
    for q, price in zip(need, o.prices):
        q = min(q, o.order_cap, cash // price if price else o.order_cap)
        cash -= q * price
        out.append(q)
    return {"kind": "order", "quantities": out}


class Greedy:
    """Pays what is due; orders and makes what is due, whatever the other side did."""

    name = "greedy"
    share = (1, 1)

    def act(self, o):
        if o.role == "customer":
            return {"kind": "pay", "amount": min(o.payment_due, o.remaining_budget) * self.share[0] // self.share[1]}
        return _order(o, self.share) if o.phase == "order" else _produce(o.delivery_due, o.inventory)


class Halfway(Greedy):
    """Pays half of what is due and buys the inputs for half of it."""

    name = "halfway"
    share = (1, 2)
