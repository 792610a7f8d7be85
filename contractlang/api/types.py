"""What an agent sees and answers in each game: the observation and action types of the agent protocol
(docs/reference/agent-protocol.md), so a user's agent can be typed without importing the games. The names are
`contractlang.api.TYPES`."""

from __future__ import annotations

from contractlang.api import TYPES
from games.contractsim.game import CustomerObservation as CustomerObservation
from games.contractsim.game import Order as Order
from games.contractsim.game import Pay as Pay
from games.contractsim.game import Produce as Produce
from games.contractsim.game import SupplierObservation as SupplierObservation
from games.contractsim.negotiation import NegotiationObservation as ContractSimNegotiationObservation  # noqa: F401
from games.ctbench.game import CTBenchObservation as CTBenchObservation
from games.ctbench.game import Honour as Honour
from games.ctbench.game import Move as Move
from games.ctbench.game import Propose as Propose
from games.ctbench.game import Respond as Respond
from games.ctbench.negotiation import Confirm as Confirm
from games.ctbench.negotiation import NegotiationObservation as CTBenchNegotiationObservation  # noqa: F401
from games.ctbench.negotiation import Say as Say

__all__ = list(TYPES)
