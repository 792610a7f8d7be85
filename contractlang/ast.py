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


# --- scenario tests ------------------------------------------------------------------


class GivenWeek(Node):
    """`week 1: pay $15`, `week 2: deliver pizza 1, ...`, `week 3: nothing`, `weeks 4..11: as agreed`; and what
    the rest of the world does in a production week: `week 2: order mozzarella 2, ...` (the Supplier's order),
    `week 2: prices mozzarella $3, ...`, `week 2: receive mozzarella 1` (what of the order arrived),
    `week 4: spoil basil 1` (the spoilage shock) ([CS-06], [CS-11])."""

    kind: Literal["given_week"] = "given_week"
    weeks: WeekSpec
    action: Literal["pay", "deliver", "nothing", "agreed", "order", "prices", "receive", "spoil"]
    amount: MoneyLit | None = None
    items: tuple[Quantity, ...] = ()  # deliver: products; order, receive, spoil: inputs
    prices: tuple[PriceEntry, ...] = ()  # prices: inputs


WORLD_ACTIONS = ("order", "prices", "receive", "spoil")
"""The `given` week lines that say what the rest of the world does, not what the contract's parties do."""


class GivenMove(Node):
    """`blue moves onto red tile (0,1)`."""

    kind: Literal["given_move"] = "given_move"
    player: Name
    colour: Name
    tile: Tile


class GivenHolds(Node):
    """`red holds red 14, blue 0, green 2`: the chips a player holds from here on."""

    kind: Literal["given_holds"] = "given_holds"
    player: Name
    chips: tuple[Quantity, ...]


class GivenGoal(Node):
    kind: Literal["given_goal"] = "given_goal"
    player: Name


class GivenEnd(Node):
    kind: Literal["given_end"] = "given_end"


class GivenEnv(Node):
    """`env 5`: the ContractSim environment the test is played in (ContractSim paper, App. A.3)."""

    kind: Literal["given_env"] = "given_env"
    env: IntLit


class GivenBoard(Node):
    """`board 24`: the CT-Bench benchmark board the test is played on ([CT-31])."""

    kind: Literal["given_board"] = "given_board"
    board: IntLit


class GivenTrade(Node):
    """`red gives blue red 2 for blue 1`: an executed trade, `giver` handing `give` to `receiver` for `receive`
    ([CT-16])."""

    kind: Literal["given_trade"] = "given_trade"
    giver: Name
    receiver: Name
    give: tuple[Quantity, ...]
    receive: tuple[Quantity, ...]


class GivenMode(Node):
    """`mode pfp`: the CT-Bench mode the test is played in, Pay-for-Partner or trade ([CT-16], [CT-17])."""

    kind: Literal["given_mode"] = "given_mode"
    mode: Name


class GivenArrangement(Node):
    """`red pays for blue red 2 and asks green 1`: an accepted Pay-for-Partner arrangement, `payer` covering
    `covers` of `partner`'s tiles and asking the partner to cover `asks` of its own ([CT-17])."""

    kind: Literal["given_arrangement"] = "given_arrangement"
    payer: Name
    partner: Name
    covers: tuple[Quantity, ...]
    asks: tuple[Quantity, ...] = ()


class GivenDefect(Node):
    """`blue defects`: the next time `player` is asked to pay for a covered move it refuses ([CT-18])."""

    kind: Literal["given_defect"] = "given_defect"
    player: Name


Given = Union[
    GivenWeek,
    GivenMove,
    GivenHolds,
    GivenGoal,
    GivenEnd,
    GivenEnv,
    GivenBoard,
    GivenTrade,
    GivenMode,
    GivenArrangement,
    GivenDefect,
]


class ExpectBreach(Node):
    """`breach customer week 3 by pay`."""

    kind: Literal["expect_breach"] = "expect_breach"
    party: Name
    week: IntLit | None = None
    clause: Name | None = None


class ExpectNoBreach(Node):
    """`no breach` or `no breach by supplier`."""

    kind: Literal["expect_no_breach"] = "expect_no_breach"
    party: Name | None = None


class ExpectOwed(Node):
    """`owed customer $25` or `owed supplier pizza 1, pasta 0, soup 0`."""

    kind: Literal["expect_owed"] = "expect_owed"
    party: Name
    amount: MoneyLit | None = None
    items: tuple[Quantity, ...] = ()


class ExpectDue(Node):
    """`due week 5 $15` or `due week 4 pizza 3, pasta 1, soup 1`."""

    kind: Literal["expect_due"] = "expect_due"
    week: IntLit
    amount: MoneyLit | None = None
    items: tuple[Quantity, ...] = ()


class ExpectCarried(Node):
    """`carried after week 4: pizza 1, pasta 0, soup 0`: the rollover memory."""

    kind: Literal["expect_carried"] = "expect_carried"
    week: IntLit
    items: tuple[Quantity, ...]


class ExpectTerminated(Node):
    """`terminated week 3`, `terminated`, or `not terminated`."""

    kind: Literal["expect_terminated"] = "expect_terminated"
    week: IntLit | None = None
    negated: bool = False


class ExpectChip(Node):
    """`(0,1): red pays for blue with red chip`: a coverage entry's chip transfer happened."""

    kind: Literal["expect_chip"] = "expect_chip"
    tile: Tile
    giver: Name
    receiver: Name
    colour: Name | None = None


class ExpectForfeit(Node):
    kind: Literal["expect_forfeit"] = "expect_forfeit"
    player: Name
    tile: Tile | None = None


class ExpectPoints(Node):
    kind: Literal["expect_points"] = "expect_points"
    giver: Name
    amount: IntLit
    receiver: Name


class ExpectNothing(Node):
    kind: Literal["expect_nothing"] = "expect_nothing"


class ExpectScore(Node):
    """`score red 85`: the player's final score after the contract's transfers ([CT-27])."""

    kind: Literal["expect_score"] = "expect_score"
    player: Name
    amount: IntLit


class ExpectUtility(Node):
    """`utility customer $212`: the party's realised utility over the whole game (ContractSim paper, eq. 33)."""

    kind: Literal["expect_utility"] = "expect_utility"
    party: Name
    amount: MoneyLit


Expect = Union[
    ExpectBreach,
    ExpectNoBreach,
    ExpectOwed,
    ExpectDue,
    ExpectCarried,
    ExpectTerminated,
    ExpectChip,
    ExpectForfeit,
    ExpectPoints,
    ExpectNothing,
    ExpectUtility,
    ExpectScore,
]


class ScenarioTest(Node):
    """`test "NAME" { given { ... } expect { ... } }`."""

    name: str
    name_span: Span
    given: tuple[Given, ...] = ()
    given_span: Span | None = None
    expect: tuple[Expect, ...] = ()
    expect_span: Span | None = None


class ScenarioSuite(Node):
    """`tests for "CONTRACT" { test ... }`: tests kept apart from the contract they name."""

    contract: str
    contract_span: Span
    tests: tuple[ScenarioTest, ...] = ()


class Contract(Node):
    name: str
    name_span: Span
    game: GameRef
    clauses: tuple[Clause, ...]
    tests: tuple[ScenarioTest, ...] = ()


class SourceFile(Frozen):
    path: str
    contracts: tuple[Contract, ...]
    comments: tuple[Comment, ...] = ()
    suites: tuple[ScenarioSuite, ...] = ()


for _model in (Negate, Binary, Compare):
    _model.model_rebuild()
