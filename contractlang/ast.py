"""The typed syntax tree: frozen nodes, each carrying the source span it came from."""

from __future__ import annotations

from typing import Literal, Union

from contractlang.diagnostics import Span
from contractlang.vocab import Frozen


class Node(Frozen):
    span: Span


class Name(Node):
    value: str


class IntLit(Node):
    value: int


class MoneyLit(Node):
    value: int


class Comment(Node):
    text: str


# --- expressions (assert lines) -------------------------------------------------------


class MoneyAtom(Node):
    kind: Literal["money"] = "money"
    value: int


class IntAtom(Node):
    kind: Literal["int"] = "int"
    value: int


class PriceRef(Node):
    kind: Literal["price"] = "price"
    product: Name


class TotalPay(Node):
    kind: Literal["total_pay"] = "total_pay"


class TotalDeliver(Node):
    kind: Literal["total_deliver"] = "total_deliver"
    product: Name


class TotalValue(Node):
    kind: Literal["total_value"] = "total_value"


class Budget(Node):
    kind: Literal["budget"] = "budget"


class Capital(Node):
    kind: Literal["capital"] = "capital"


class Negate(Node):
    kind: Literal["negate"] = "negate"
    operand: Expr


class Binary(Node):
    kind: Literal["binary"] = "binary"
    op: Literal["+", "-", "*"]
    left: Expr
    right: Expr


class Compare(Node):
    kind: Literal["compare"] = "compare"
    op: Literal["==", "!=", "<=", ">=", "<", ">"]
    left: Expr
    right: Expr


Expr = Union[MoneyAtom, IntAtom, PriceRef, TotalPay, TotalDeliver, TotalValue, Budget, Capital, Negate, Binary, Compare]

# --- schedule pieces -----------------------------------------------------------------


class WeekSpec(Node):
    """`week 2`, `weeks 3..9` (every week of the block's kind in range) or `weeks 2, 4, 6`."""

    form: Literal["single", "range", "list"]
    weeks: tuple[IntLit, ...]


class Quantity(Node):
    product: Name
    amount: IntLit


class PartyEntry(Node):
    role: Name
    label: str


class PriceEntry(Node):
    product: Name
    amount: MoneyLit


class DeliveryEntry(Node):
    weeks: WeekSpec
    items: tuple[Quantity, ...]


class PaymentEntry(Node):
    weeks: WeekSpec
    amount: MoneyLit


class Tile(Node):
    row: IntLit
    col: IntLit


class CoverEntry(Node):
    tile: Tile
    giver: Name
    receiver: Name
    colour: Name | None = None


class GoalEntry(Node):
    trigger: Name
    giver: Name
    amount: IntLit
    receiver: Name


# --- clauses -------------------------------------------------------------------------


class Parties(Node):
    kind: Literal["parties"] = "parties"
    entries: tuple[PartyEntry, ...]


class Prices(Node):
    kind: Literal["prices"] = "prices"
    entries: tuple[PriceEntry, ...]


class Deliver(Node):
    kind: Literal["deliver"] = "deliver"
    entries: tuple[DeliveryEntry, ...]


class Pay(Node):
    kind: Literal["pay"] = "pay"
    entries: tuple[PaymentEntry, ...]


class Assert(Node):
    kind: Literal["assert"] = "assert"
    expr: Expr


class Substitution(Node):
    kind: Literal["substitution"] = "substitution"
    minimum: tuple[Quantity, ...] | None = None


class PaymentDeduction(Node):
    kind: Literal["payment_deduction"] = "payment_deduction"
    minimum: tuple[Quantity, ...] | None = None


class Rollover(Node):
    kind: Literal["rollover"] = "rollover"
    max_deficit: IntLit | None = None


class OnBreach(Node):
    kind: Literal["on_breach"] = "on_breach"


class Cover(Node):
    kind: Literal["cover"] = "cover"
    entries: tuple[CoverEntry, ...]


class OnGoal(Node):
    kind: Literal["on_goal"] = "on_goal"
    entries: tuple[GoalEntry, ...]


Clause = Union[Parties, Prices, Deliver, Pay, Assert, Substitution, PaymentDeduction, Rollover, OnBreach, Cover, OnGoal]


class GameRef(Node):
    parts: tuple[str, ...]

    @property
    def game_id(self) -> str:
        return ".".join(self.parts)


class Contract(Node):
    name: str
    name_span: Span
    game: GameRef
    clauses: tuple[Clause, ...]


class SourceFile(Frozen):
    path: str
    contracts: tuple[Contract, ...]
    comments: tuple[Comment, ...] = ()


for _model in (Negate, Binary, Compare):
    _model.model_rebuild()
