#!/usr/bin/env python3
"""An external agent for both games, speaking contractlang's JSON-lines agent protocol.

Each line on stdin is one decision: {"game", "role", "request", "observation"}. Answer each with one line
on stdout: {"action": {...}}. Try it:

    AGENT="cmd:python3 examples/agents/external_agent.py"
    contractlang run examples/worked-example-1.contract --env 5 --customer "$AGENT"
    contractlang run examples/ctbench-board-24-swap.contract --board 24 --red "$AGENT"
    contractlang negotiate --env 3 --supplier "$AGENT"

ContractSim: the Customer pays what the contract asks; the Supplier orders the inputs that this week's
delivery needs and delivers as much of it as its inventory allows. Negotiation: the Supplier
offers one fixed Catering contract and then waits; the Customer accepts any offer it may accept.
CT-Bench: in a contract negotiation it asks the partner to pay for the tiles of its best path that are in
the partner's colour and agrees to whatever is on the table, and it accepts the judge's contract; in play it
never trades, honours a coverage when it holds the chip, and walks a shortest route to the goal over tiles it
can pay for itself or that the contract pays for.
"""

import json
import re
import sys

COLOUR = {"R": "red", "B": "blue", "G": "green"}
GOAL = (3, 3)


OFFER = """Catering supply agreement "external-offer"

Prices: Margherita Pizza $12 each, Pesto Pasta $6 each and Tomato Soup $4 each.

Deliveries: In weeks 2, 4, 6, 8 and 10 the Caterer delivers 1 Margherita Pizza, 1 Pesto Pasta and 1 Tomato Soup each week.

Payments: In weeks 1, 3, 5, 7 and 9 the Customer pays $20 each week. In week 11 the Customer pays $10.
"""


def negotiation(role: str, o: dict) -> dict:
    """One turn of the negotiation (ContractSim paper, Sec. 3): the reply is the turn's object itself, not wrapped in "action"."""
    if role == "customer":
        return {"response": "I accept.", "accept": True} if o["can_accept"] else {"response": "Your offer?"}
    if o["round"] == 1:
        return {"response": "Here is my offer.", "contract": OFFER}
    return {"response": "My offer stands."}


def contractsim(role: str, o: dict) -> dict:
    if role == "customer":
        return {"kind": "pay", "amount": min(o["payment_due"], o["remaining_budget"])}
    due, inv = o["delivery_due"], o["inventory"]
    if o["phase"] == "order":
        # products 1 and 2 use inputs 1 and 2; products 1 and 3 use input 3
        need = [due[0] + due[1], due[0] + due[1], due[0] + due[2]]
        order = [max(0, min(o["order_cap"], n - have)) for n, have in zip(need, inv)]
        while sum(q * p for q, p in zip(order, o["prices"])) > o["cash"]:
            order[order.index(max(order))] -= 1
        return {"kind": "order", "quantities": order}
    first = min(due[0], inv[0], inv[1], inv[2])
    second = min(due[1], min(inv[0], inv[1]) - first)
    third = min(due[2], inv[2] - first)
    return {"kind": "produce", "quantities": [first, second, third]}


def ctbench(o: dict) -> dict:
    phase = o["phase"]
    if phase == "confirm":
        return {"kind": "confirm", "accept": True}
    if phase == "negotiate":
        me, partner = ("P-Red", "P-Blue") if o["player"] == "red" else ("P-Blue", "P-Red")
        colour = "blue" if o["player"] == "red" else "red"
        tiles = [t for t in o["best_path"]["path"][1:] if COLOUR[o["board_rows"][t[0]][t[1]]] == colour]
        asks = [f"{partner} pays for {me}'s move onto ({r},{c}) with a {colour} chip." for r, c in tiles]
        missing = [a for a in asks if not any(a in m for m in o["messages"])]
        if not missing:
            return {"kind": "say", "message": "agree"}
        # first to speak: ask and agree at once; later: add what is missing, and agree on the partner's next turn
        return {"kind": "say", "message": " ".join(missing) + ("" if o["messages"] else " agree")}
    if phase == "propose":
        return {"kind": "propose", "offer": None}
    if phase == "respond":
        return {"kind": "respond", "accept": False}
    if phase == "honour":
        return {"kind": "honour", "honour": o["chips"][o["pending_colour"]] > 0}
    covered = {tuple(c["tile"]) for c in o["open_coverage"] if c["receiver"] == o["player"]}
    # NL-Trading: the judge pays what the agreement names; count the tiles asked for here, less those used
    me = "P-Red" if o["player"] == "red" else "P-Blue"
    used = {tuple(tile) for tile, player in o["nl_executed"] if player == o["player"]}
    covered |= {(int(r), int(c)) for r, c in re.findall(me + r"'s move onto \((\d),(\d)\)", o["transcript"])} - used

    def payable(tile) -> bool:
        return tile in covered or o["chips"][COLOUR[o["board_rows"][tile[0]][tile[1]]]] > 0

    # breadth-first search from the goal back over payable tiles; step to the neighbour nearest the goal
    distance = {GOAL: 0}
    frontier = [GOAL]
    while frontier:
        following = []
        for r, c in frontier:
            for tile in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= tile[0] < 4 and 0 <= tile[1] < 4 and tile not in distance and payable((r, c)):
                    distance[tile] = distance[(r, c)] + 1
                    following.append(tile)
        frontier = following
    steps = [tuple(t) for t in o["legal_moves"] if tuple(t) in distance and payable(tuple(t))]
    if not steps:
        return {"kind": "move", "tile": None}
    best = min(steps, key=lambda t: distance[t])
    return {"kind": "move", "tile": list(best)}


for line in sys.stdin:
    request = json.loads(line)
    observation = request["observation"]
    if request["game"] == "contractsim-negotiation":
        print(json.dumps(negotiation(request["role"], observation)), flush=True)
        continue
    if request["game"] == "contractsim":
        action = contractsim(request["role"], observation)
    else:
        action = ctbench(observation)
    print(json.dumps({"action": action}), flush=True)
