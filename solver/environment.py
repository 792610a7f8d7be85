"""What the solvers need of a ContractSim environment, as one value (`games` builds it; ContractSim paper, App. A.3, App. A.1).

Money is in Catering base units ([CS-01]); contracts are converted with `ContractSimIR.base_units()`.
"""

from __future__ import annotations

from typing import Literal

from contractlang.interpreter.rounds import FloorRules
from contractlang.vocab import Frozen

ReceiptLaw = Literal["exact", "three_quarters", "half"]


class SupplyEnvironment(Frozen):
    id: int
    budget: int
    capital: int
    values: tuple[int, int, int]
    price_laws: tuple[tuple[tuple[int, float], ...], ...]  # per input: (price, probability) pairs
    receipt_law: ReceiptLaw
    spoilage_max: int  # spoilage uniform on 0..spoilage_max per input and production week
    inventory_cap: int = 10
    order_cap: int = 12
    floors: FloorRules = FloorRules()  # which written minimums are hard floors ([CS-14a]); a game rule, not a term

    def receipt_low(self, ordered: int) -> int:
        """Smallest possible receipt for an order of `ordered` units (receipts are uniform up to the order)."""
        if self.receipt_law == "exact":
            return ordered
        if self.receipt_law == "three_quarters":
            return (3 * ordered) // 4
        return ordered // 2

    def price_bounds(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        lows = tuple(min(p for p, _ in law) for law in self.price_laws)
        highs = tuple(max(p for p, _ in law) for law in self.price_laws)
        return lows, highs
