"""The contract IR: the checked, normalised value every later stage consumes.

ContractSim terms are the paper's constraint tuple C = (prices, deliveries, payments, contingencies)
(ContractSim paper, Sec. 3); CT-Bench terms are coverage and points entries (CT-Bench paper, Sec. 2.4).
Money is kept in the setting's own dollars; `base_units` gives the Catering-unit view of [CS-01].
"""

from __future__ import annotations

import operator
from typing import Literal, Union

from contractlang.diagnostics import Span
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, BoardSet, Frozen, Setting

Triple = tuple[int, int, int]
Mode = Literal["GRIM", "PD", "RO", "PDRO"]


# --- assert expressions (no spans: equal IR means equal meaning) -------------------------


class Lit(Frozen):
    kind: Literal["lit"] = "lit"
    value: int
    unit: Literal["money", "count"]


class Ref(Frozen):
    """A contract or environment quantity: price(d), total pay, total deliver d, total value, budget, capital."""

    kind: Literal["ref"] = "ref"
    name: Literal["price", "total_pay", "total_deliver", "total_value", "budget", "capital"]
    product: int | None = None


class Neg(Frozen):
    kind: Literal["neg"] = "neg"
    operand: IrExpr


class BinOp(Frozen):
    kind: Literal["binop"] = "binop"
    op: Literal["+", "-", "*"]
    left: IrExpr
    right: IrExpr


IrExpr = Union[Lit, Ref, Neg, BinOp]
Neg.model_rebuild()
BinOp.model_rebuild()

CompareOp = Literal["==", "!=", "<=", ">=", "<", ">"]
RELATIONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}


class AssertTerm(Frozen):
    """A stated relation (`assert total pay == $125`): checked by the verifier, never repaired."""

    op: CompareOp
    left: IrExpr
    right: IrExpr
    unit: Literal["money", "count"]
    text: str

    @property
    def uses_environment(self) -> bool:
        return _mentions_env(self.left) or _mentions_env(self.right)

    def decide(self, ir: ContractSimIR, budget: int | None = None, capital: int | None = None) -> tuple[bool, int, int]:
        """(holds, left, right), exactly, from the contract's terms and, when it mentions them, the environment's
        budget and capital in the setting's dollars."""
        left, right = evaluate(self.left, ir, budget, capital), evaluate(self.right, ir, budget, capital)
        return RELATIONS[self.op](left, right), left, right


def evaluate(e: IrExpr, ir: ContractSimIR, budget: int | None = None, capital: int | None = None) -> int:
    """The value of an assert's side ([CS-31] totals: Σ payments, Σ_w q_{w,d}, Σ p_d q_{w,d})."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Neg):
        return -evaluate(e.operand, ir, budget, capital)
    if isinstance(e, BinOp):
        a, b = evaluate(e.left, ir, budget, capital), evaluate(e.right, ir, budget, capital)
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    if e.name in ("budget", "capital"):
        value = budget if e.name == "budget" else capital
        if value is None:
            raise ValueError(f"{e.name} is an environment's value; give one to decide this assert")
        return value
    if e.name == "price":
        return ir.prices[e.product]
    if e.name == "total_deliver":
        return sum(row[e.product] for row in ir.deliveries)
    return ir.total_pay if e.name == "total_pay" else ir.total_value


def _mentions_env(e: IrExpr) -> bool:
    if isinstance(e, Ref):
        return e.name in ("budget", "capital")
    if isinstance(e, Neg):
        return _mentions_env(e.operand)
    if isinstance(e, BinOp):
        return _mentions_env(e.left) or _mentions_env(e.right)
    return False


# --- ContractSim ---------------------------------------------------------------------


class SubstitutionTerms(Frozen):
    """Substitution above named minimums at 4:2:1 ([CS-13]); default minimum (1,1,1)."""

    min_qty: Triple = (1, 1, 1)


class DeductionTerms(Frozen):
    """Payment deduction with a hard per-dish floor ([CS-14]); default floor (1,1,1)."""

    min_qty: Triple = (1, 1, 1)


class RolloverTerms(Frozen):
    """Rollover of missed units with at most `max_deficit` carried per dish (ContractSim paper, App. C.1; default 2)."""

    max_deficit: int = 2


class Contingencies(Frozen):
    substitution: SubstitutionTerms | None = None
    payment_deduction: DeductionTerms | None = None
    rollover: RolloverTerms | None = None
    grim_trigger: bool = False

    @property
    def mode(self) -> Mode:
        """Primary contingency mode of ContractSim paper, App. C.1."""
        if self.payment_deduction and self.rollover:
            return "PDRO"
        if self.payment_deduction:
            return "PD"
        if self.rollover:
            return "RO"
        return "GRIM"

    @property
    def explicit_count(self) -> int:
        """Contingency count CC(ω) of ContractSim paper, App. C.5: deduction, rollover and substitution clauses."""
        return sum(x is not None for x in (self.substitution, self.payment_deduction, self.rollover))


class ContractSimIR(Frozen):
    kind: Literal["contractsim"] = "contractsim"
    name: str
    setting: str
    parties: tuple[str, str]
    prices: Triple
    deliveries: tuple[Triple, Triple, Triple, Triple, Triple]
    payments: tuple[int, int, int, int, int, int]
    contingencies: Contingencies = Contingencies()
    asserts: tuple[AssertTerm, ...] = ()

    @property
    def setting_info(self) -> Setting:
        return SETTINGS[self.setting]

    @property
    def implicit_grim_trigger(self) -> bool:
        """[CS-12]: grim trigger is the solver's fallback whenever the contract does not state it."""
        return not self.contingencies.grim_trigger

    def delivery(self, week: int) -> Triple:
        return self.deliveries[PRODUCTION_WEEKS.index(week)]

    def payment(self, week: int) -> int:
        return self.payments[PAYMENT_WEEKS.index(week)]

    def base_units(self) -> ContractSimIR:
        """The same contract with money divided by the setting's multiplier ([CS-01])."""
        m = self.setting_info.multiplier
        if m == 1:
            return self
        return self.model_copy(
            update={
                "prices": tuple(p // m for p in self.prices),
                "payments": tuple(p // m for p in self.payments),
            }
        )

    @property
    def total_pay(self) -> int:
        return sum(self.payments)

    @property
    def total_value(self) -> int:
        """Price-implied total Σ_w Σ_d p_d q_{w,d} ([CS-31])."""
        return sum(p * q for row in self.deliveries for p, q in zip(self.prices, row))

    def terms_json(self) -> dict:
        s = self.setting_info
        c = self.contingencies
        explicit: dict = {}
        if c.substitution:
            explicit["substitution"] = {"min_qty": dict(zip(s.products, c.substitution.min_qty))}
        if c.payment_deduction:
            explicit["payment_deduction"] = {"min_qty": dict(zip(s.products, c.payment_deduction.min_qty))}
        if c.rollover:
            explicit["rollover"] = {"max_deficit": c.rollover.max_deficit}
        if c.grim_trigger:
            explicit["grim_trigger"] = {}
        return {
            "setting": self.setting,
            "name": self.name,
            "parties": {"customer": self.parties[0], "supplier": self.parties[1]},
            "prices": dict(zip(s.products, self.prices)),
            "deliveries": {str(w): dict(zip(s.products, q)) for w, q in zip(PRODUCTION_WEEKS, self.deliveries)},
            "payments": {str(w): m for w, m in zip(PAYMENT_WEEKS, self.payments)},
            "contingencies": explicit,
            "implicit_contingencies": ["grim_trigger"] if self.implicit_grim_trigger else [],
            "params": {
                "mode": c.mode,
                "substitution": c.substitution is not None,
                "max_deficit": c.rollover.max_deficit if c.rollover else None,
                "multiplier": s.multiplier,
                "granularity": s.granularity,
            },
            "asserts": [a.text for a in self.asserts],
        }


# --- CT-Bench ------------------------------------------------------------------------

Player = Literal["red", "blue"]
Colour = Literal["red", "blue", "green"]


class CoverageTerm(Frozen):
    """Prog-Trading entry: `giver` pays the `receiver`'s move onto `tile` ([CT-22]); colour None = tile colour."""

    tile: tuple[int, int]
    giver: Player
    receiver: Player
    colour: Colour | None = None


class PointsTerm(Frozen):
    """Prog-Points entry: `amount` points move from giver to receiver if the giver finishes ([CT-26])."""

    giver: Player
    receiver: Player
    amount: int


class CTBenchIR(Frozen):
    kind: Literal["ctbench"] = "ctbench"
    name: str
    parties: tuple[str, str]
    board_set: BoardSet | None = None  # `game ctbench.SET`: the board set its tiles refer to ([CT-31])
    coverage: tuple[CoverageTerm, ...] = ()
    points: tuple[PointsTerm, ...] = ()

    def terms_json(self) -> dict:
        return {
            "name": self.name,
            "parties": {"red": self.parties[0], "blue": self.parties[1]},
            "coverage": [
                {"tile": list(c.tile), "giver": c.giver, "receiver": c.receiver, "color": c.colour}
                for c in self.coverage
            ],
            "points": [{"giver": p.giver, "receiver": p.receiver, "amount": p.amount} for p in self.points],
        }

    @classmethod
    def from_terms_json(cls, terms: dict) -> CTBenchIR:
        """The inverse of `terms_json` (run records keep contracts in that form)."""
        return cls(
            name=terms["name"],
            parties=(terms["parties"]["red"], terms["parties"]["blue"]),
            coverage=tuple(
                CoverageTerm(tile=tuple(c["tile"]), giver=c["giver"], receiver=c["receiver"], colour=c["color"])
                for c in terms["coverage"]
            ),
            points=tuple(PointsTerm(**p) for p in terms["points"]),
        )


ContractIR = Union[ContractSimIR, CTBenchIR]


class CheckedContract(Frozen):
    """A checked contract: its IR plus where each clause came from (for verifier and trace messages)."""

    ir: ContractIR
    file: str
    spans: dict[str, Span]

    def span(self, key: str) -> Span:
        return self.spans.get(key) or self.spans["contract"]


# --- scenario tests (`test "..." { given { ... } expect { ... } }`) ----------------------


class WeekStep(Frozen):
    """What happens in one ContractSim week: `agreed` pays or delivers exactly what is due then."""

    kind: Literal["week"] = "week"
    week: int
    action: Literal["pay", "deliver", "nothing", "agreed"]
    amount: int | None = None  # pay
    items: Triple | None = None  # deliver


class MoveStep(Frozen):
    """A CT-Bench move attempt with the chips both players hold at that moment."""

    kind: Literal["move"] = "move"
    player: Player
    tile: tuple[int, int]
    tile_colour: Colour
    holdings: tuple[tuple[int, int, int], tuple[int, int, int]]  # red's, blue's (red, blue, green chips)


class GoalStep(Frozen):
    kind: Literal["goal"] = "goal"
    player: Player


class EndStep(Frozen):
    kind: Literal["end"] = "end"


class TradeStep(Frozen):
    """An executed CT-Bench trade: `giver` hands `give` to `receiver` for `receive` (red, blue, green chips)."""

    kind: Literal["trade"] = "trade"
    giver: Player
    receiver: Player
    give: Triple
    receive: Triple


class ArrangementStep(Frozen):
    """An accepted Pay-for-Partner arrangement: `payer` covers `covers` of `partner`'s tiles and asks it to cover
    `asks` of its own (red, blue, green tiles; [CT-17])."""

    kind: Literal["arrangement"] = "arrangement"
    payer: Player
    partner: Player
    covers: Triple
    asks: Triple


class DefectStep(Frozen):
    """`player` refuses the next covered move it is asked to pay for ([CT-18])."""

    kind: Literal["defect"] = "defect"
    player: Player


Step = Union[WeekStep, MoveStep, GoalStep, EndStep, TradeStep, ArrangementStep, DefectStep]

Partial = tuple[int | None, int | None, int | None]
"""One value per input, None where the test leaves it to its default."""


class SupplyWeek(Frozen):
    """What the rest of the world does in one production week ([CS-06], [CS-07], [CS-11]), in the setting's
    dollars: the Supplier's input order (None: the inputs the week's delivery needs beyond its stock), the
    input prices (None: the environment's lowest), the receipts (None: all of the order arrives) and the
    spoilage shock (the loss is the smaller of it and the stock)."""

    week: int
    order: Triple | None = None
    prices: Partial = (None, None, None)
    receipts: Partial = (None, None, None)
    spoilage: Triple = (0, 0, 0)


class ContractSimWorld(Frozen):
    """The environment a ContractSim test is played in (ContractSim paper, App. A.3) and its production weeks."""

    env: int
    weeks: tuple[SupplyWeek, ...]  # production weeks 2, 4, 6, 8, 10 in order


class ExpectBreach(Frozen):
    """`role` breached first in `week` (None: at some week), through `clause` (None: any)."""

    kind: Literal["breach"] = "breach"
    role: str
    week: int | None = None
    clause: str | None = None


class ExpectNoBreach(Frozen):
    kind: Literal["no_breach"] = "no_breach"
    role: str | None = None


class ExpectOwed(Frozen):
    """What `role` still owes of its last closed week: unpaid money, or required minus credited units."""

    kind: Literal["owed"] = "owed"
    role: str
    amount: int | None = None
    items: Triple | None = None


class ExpectDue(Frozen):
    """What fell due in `week`: the payment after deduction, or the units required with carried deficits."""

    kind: Literal["due"] = "due"
    week: int
    amount: int | None = None
    items: Triple | None = None


class ExpectCarried(Frozen):
    kind: Literal["carried"] = "carried"
    week: int
    items: Triple


class ExpectTerminated(Frozen):
    kind: Literal["terminated"] = "terminated"
    week: int | None = None
    terminated: bool = True


class ExpectChip(Frozen):
    kind: Literal["chip"] = "chip"
    tile: tuple[int, int]
    giver: Player
    receiver: Player
    colour: Colour | None = None


class ExpectForfeit(Frozen):
    kind: Literal["forfeit"] = "forfeit"
    player: Player
    tile: tuple[int, int] | None = None


class ExpectPoints(Frozen):
    kind: Literal["points"] = "points"
    giver: Player
    receiver: Player
    amount: int


class ExpectNothing(Frozen):
    kind: Literal["nothing"] = "nothing"


class ExpectScore(Frozen):
    """`player`'s final CT-Bench score after the contract's transfers ([CT-27])."""

    kind: Literal["score"] = "score"
    player: Player
    amount: int


class ExpectUtility(Frozen):
    """`role`'s realised utility over the game, in the setting's dollars (ContractSim paper, eqs. 31–33)."""

    kind: Literal["utility"] = "utility"
    role: str
    amount: int


Expectation = Union[
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


class ScenarioIR(Frozen):
    """A checked scenario test: the steps that happen and what the contract is expected to say of them."""

    name: str
    contract: str
    steps: tuple[Step, ...]
    expects: tuple[Expectation, ...]
    world: ContractSimWorld | None = None  # a ContractSim test that names its environment
    board: int | None = None  # a CT-Bench test that names its board: the game's engine plays it
    mode: Literal["pfp", "trade"] = "trade"  # the CT-Bench mode a board test is played in ([CT-16], [CT-17])


class CheckedScenario(Frozen):
    """A scenario test with where it and each of its expectations came from (failures point at them)."""

    ir: ScenarioIR
    file: str
    span: Span
    expect_spans: tuple[Span, ...]
    given_spans: dict[str, Span] = {}  # `env`, and `ACTION@WEEK` for each week a `given` line names

    def given_span(self, keys: tuple[str, ...]) -> Span:
        """Where the first of the `given` lines `keys` the test writes is; the environment's line, else the test,
        when it writes none of them."""
        found = [self.given_spans[k] for k in keys if k in self.given_spans]
        return found[0] if found else self.given_spans.get("env") or self.span
