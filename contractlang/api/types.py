"""What an agent sees and answers in each game: the observation and action types of the agent protocol
(docs/reference/agent-protocol.md), so a user's agent can be typed without importing the games."""

from __future__ import annotations

from games.contractsim.game import CustomerObservation, Order, Pay, Produce, SupplierObservation
from games.contractsim.negotiation import NegotiationObservation as ContractSimNegotiationObservation
from games.ctbench.game import CTBenchObservation, Honour, Move, Propose, Respond
from games.ctbench.negotiation import Confirm, Say
from games.ctbench.negotiation import NegotiationObservation as CTBenchNegotiationObservation

__all__ = [
    "CTBenchNegotiationObservation",
    "CTBenchObservation",
    "Confirm",
    "ContractSimNegotiationObservation",
    "CustomerObservation",
    "Honour",
    "Move",
    "Order",
    "Pay",
    "Produce",
    "Propose",
    "Respond",
    "Say",
    "SupplierObservation",
]
