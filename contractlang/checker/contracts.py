"""The contract half of the checker: syntax tree → contract IR against the game vocabulary, every error
reported with its code (docs/reference/diagnostics.md), nothing repaired."""

from typing import Literal

from contractlang import ast
from contractlang.diagnostics import Diagnostic, Span, did_you_mean, unsafe_characters
from contractlang.formatter import format_expr, money
from contractlang.ir import (
    AssertTerm,
    BinOp,
    CheckedContract,
    CheckedScenario,
    Contingencies,
    ContractSimIR,
    CoverageTerm,
    CTBenchIR,
    DeductionTerms,
    IrExpr,
    Lit,
    Neg,
    PointsTerm,
    Ref,
    RolloverTerms,
    SubstitutionTerms,
)
from contractlang.vocab import (
    BOARD_SET_BY_GAME_ID,
    BOARD_SIZE,
    COLOURS,
    CONTRACTSIM_ROLES,
    CTBENCH_PARTIES,
    GAME_IDS,
    MAX_DEFICIT_RANGE,
    PAYMENT_WEEKS,
    POINTS_RANGE,
    PRODUCTION_WEEKS,
    SETTING_BY_GAME_ID,
    WEEKS,
    BoardSet,
    Frozen,
    Setting,
)

MAX_NUMBER = 10**9
Unit = Literal["money", "count"]

CONTRACTSIM_ONLY = (ast.Prices, ast.Deliver, ast.Pay, ast.Assert)
CONTINGENCY_CLAUSES = (ast.Substitution, ast.PaymentDeduction, ast.Rollover, ast.OnBreach)
CTBENCH_ONLY = (ast.Cover, ast.OnGoal)
SINGLE_CLAUSES = (
    ast.Parties,
    ast.Prices,
    ast.Deliver,
    ast.Pay,
    ast.Substitution,
    ast.PaymentDeduction,
    ast.Rollover,
    ast.OnBreach,
    ast.Cover,
    ast.OnGoal,
)


class CheckResult(Frozen):
    contracts: tuple[CheckedContract, ...]
    diagnostics: tuple[Diagnostic, ...]
    scenarios: tuple[CheckedScenario, ...] = ()
    unresolved: tuple[str, ...] = ()  # contracts named by `tests for` blocks that are not in the file

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


class Reporter:
    def __init__(self, path: str):
        self.path = path
        self.items: list[Diagnostic] = []

    def error(self, code: str, span: Span, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(code=code, message=message, file=self.path, span=span, hint=hint))

    def safe_name(self, name: str, span: Span, what: str) -> None:
        """Names reach terminals and file names: control and bidi-formatting characters are refused."""
        bad = unsafe_characters(name)
        if bad:
            self.error(
                "E107",
                span,
                f"{what} contains a control or formatting character (U+{ord(bad[0]):04X})",
                "names may hold letters, digits, spaces and punctuation only",
            )


def listing(items) -> str:
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class ContractChecker:
    def __init__(self, contract: ast.Contract | None, report: Reporter):
        self.c = contract  # None while checking the tests of a contract from another file
        self.r = report
        self.spans: dict[str, Span] = {"contract": contract.span} if contract else {}

    # --- shared helpers ----------------------------------------------------------------

    def number(self, lit: ast.IntLit | ast.MoneyLit, what: str, allow_negative: bool = False) -> int:
        if abs(lit.value) > MAX_NUMBER:
            self.r.error("E003", lit.span, f"{what} is too large", f"numbers in a contract are at most {MAX_NUMBER:,}")
            return 0
        if lit.value < 0 and not allow_negative:
            self.r.error("E301", lit.span, f"{what} must not be negative", "write a whole number of 0 or more")
            return 0
        return lit.value

    def clause_once(self) -> None:
        seen: dict[type, ast.Clause] = {}
        for clause in self.c.clauses:
            if isinstance(clause, SINGLE_CLAUSES):
                if type(clause) in seen:
                    first = seen[type(clause)].span
                    self.r.error(
                        "E104",
                        clause.span,
                        f"a second `{clause.kind}` clause",
                        f"merge it with the one on line {first.line}",
                    )
                else:
                    seen[type(clause)] = clause

    def clauses(self, kind: type) -> list:
        return [c for c in self.c.clauses if isinstance(c, kind)]

    def first(self, kind: type):
        found = self.clauses(kind)
        return found[0] if found else None

    def parties(self, roles: tuple[str, ...], defaults: tuple[str, ...]) -> tuple[str, ...]:
        labels = dict(zip(roles, defaults))
        block = self.first(ast.Parties)
        if block is None:
            return tuple(labels.values())
        self.spans["parties"] = block.span
        seen: set[str] = set()
        for entry in block.entries:
            role = entry.role.value
            if role not in roles:
                self.r.error(
                    "E103",
                    entry.role.span,
                    f"unknown party role `{role}`",
                    f"{did_you_mean(role, roles)}this game's roles are {listing(roles)}",
                )
            elif role in seen:
                self.r.error("E104", entry.role.span, f"party `{role}` is named twice", "name each role once")
            else:
                seen.add(role)
                labels[role] = entry.label
                self.r.safe_name(entry.label, entry.span, f"the {role}'s name")
        return tuple(labels.values())

    # --- ContractSim -------------------------------------------------------------------

    def product(self, name: ast.Name, setting: Setting) -> int | None:
        idx = setting.product_index(name.value)
        if idx is None:
            self.r.error(
                "E102",
                name.span,
                f"unknown product `{name.value}` in {setting.title}",
                f"{did_you_mean(name.value, setting.products)}the products are {listing(setting.products)}",
            )
        return idx

    def money_amount(self, lit: ast.MoneyLit, setting: Setting, what: str) -> int:
        value = self.number(lit, what)
        if value % setting.granularity:
            self.r.error(
                "E302",
                lit.span,
                f"{what} {money(value)} is not a multiple of {money(setting.granularity)}",
                f"{setting.title} amounts are whole multiples of {money(setting.granularity)}",
            )
        return value

    def weeks(self, spec: ast.WeekSpec, kind_weeks: tuple[int, ...], kind: str, block: str) -> list[int]:
        """Expand a week spec into weeks of the block's kind; report weeks of the wrong kind or out of range."""
        other_code = "E202" if kind == "payment" else "E203"
        other_kind = "production" if kind == "payment" else "payment"
        nums = []
        for lit in spec.weeks:
            w = lit.value
            if w not in WEEKS:
                self.r.error(
                    "E201",
                    lit.span,
                    f"week {w} is outside the contract's weeks 1..11",
                    f"{kind} weeks are {listing(kind_weeks)}",
                )
            elif w not in kind_weeks:
                verb = "payment" if kind == "payment" else "delivery"
                self.r.error(
                    other_code,
                    lit.span,
                    f"{verb} scheduled in {other_kind} week {w}",
                    f"{block} entries go in {kind} weeks {listing(kind_weeks)}",
                )
            else:
                nums.append(w)
        if spec.form == "range":
            if len(nums) < 2:
                return []
            lo, hi = nums
            if lo > hi:
                self.r.error("E205", spec.span, f"empty week range {lo}..{hi}", f"write the range as {hi}..{lo}")
                return []
            return [w for w in kind_weeks if lo <= w <= hi]
        return nums

    def schedule(self, entries, kind_weeks, kind, block, value_of) -> dict[int, tuple[object, ast.Node]]:
        """Week → (value, entry) with duplicate/conflicting entries reported."""
        out: dict[int, tuple[object, ast.Node]] = {}
        for entry in entries:
            value = value_of(entry)
            for w in self.weeks(entry.weeks, kind_weeks, kind, block):
                if w in out:
                    prev_value, prev = out[w]
                    same = "again" if prev_value == value else "with different terms"
                    self.r.error(
                        "E204",
                        entry.weeks.span,
                        f"week {w} is scheduled {same} (first on line {prev.span.line})",
                        "give each week exactly one entry",
                    )
                    continue
                out[w] = (value, entry)
                self.spans[f"{block}.{w}"] = entry.span
        return out

    def items(self, items: tuple[ast.Quantity, ...], setting: Setting, what: str) -> dict[int, int]:
        got: dict[int, int] = {}
        for q in items:
            idx = self.product(q.product, setting)
            amount = self.number(q.amount, f"{what} of {q.product.value}")
            if idx is None:
                continue
            if idx in got:
                self.r.error(
                    "E104", q.span, f"{q.product.value} is listed twice in one entry", "list each product once"
                )
            got[idx] = amount
        return got

    def contractsim(self, setting: Setting) -> ContractSimIR | None:
        before = len(self.r.items)
        for clause in self.c.clauses:
            if isinstance(clause, CTBENCH_ONLY):
                self.r.error(
                    "E505",
                    clause.span,
                    f"`{clause.kind}` is a CT-Bench clause",
                    f"{setting.game_id} contracts use prices, deliver, pay and contingency clauses",
                )
        parties = self.parties(CONTRACTSIM_ROLES, (setting.customer_title, setting.supplier_title))

        prices: dict[int, int] = {}
        block = self.first(ast.Prices)
        if block is not None:
            self.spans["prices"] = block.span
            for e in block.entries:
                idx = self.product(e.product, setting)
                value = self.money_amount(e.amount, setting, f"price of {e.product.value}")
                if idx is None:
                    continue
                if idx in prices:
                    self.r.error("E104", e.span, f"{e.product.value} is priced twice", "give each product one price")
                prices[idx] = value
                self.spans[f"price.{setting.products[idx]}"] = e.span
        missing_prices = [setting.products[i] for i in range(3) if i not in prices]
        if missing_prices:
            where = block.span if block else self.c.name_span
            self.r.error(
                "E401",
                where,
                f"parse-incomplete: no price for {listing(missing_prices)}",
                "state every product's unit price, e.g. `prices { "
                + "  ".join(f"{d}: $1" for d in setting.products)
                + " }`",
            )

        deliveries, whole = self.deliveries(setting)
        payments = self.payments(setting)
        contingencies = self.contingencies(setting, deliveries)
        asserts = self.asserts(setting)
        if len(self.r.items) > before or not whole or payments is None:
            return None
        return ContractSimIR(
            name=self.c.name,
            setting=setting.key,
            parties=parties,
            prices=tuple(prices[i] for i in range(3)),
            deliveries=tuple(deliveries[w] for w in PRODUCTION_WEEKS),
            payments=tuple(payments[w] for w in PAYMENT_WEEKS),
            contingencies=contingencies,
            asserts=tuple(asserts),
        )

    def deliveries(self, setting: Setting) -> tuple[dict[int, tuple[int, int, int]], bool]:
        """The production weeks whose entry states every product, and whether that is the whole schedule (the
        known weeks are checked against the minimums even when others are missing, so one run reports both)."""
        block = self.first(ast.Deliver)
        if block is None:
            self.r.error(
                "E402",
                self.c.name_span,
                "parse-incomplete: no `deliver` schedule",
                f"add `deliver {{ weeks 2..10: {', '.join(d + ' 1' for d in setting.products)} }}`",
            )
            return {}, False
        self.spans["deliver"] = block.span
        partial: set[int] = set()

        def value_of(entry: ast.DeliveryEntry):
            got = self.items(entry.items, setting, "delivery")
            absent = [setting.products[i] for i in range(3) if i not in got]
            if absent:
                partial.add(id(entry))
                self.r.error(
                    "E404",
                    entry.span,
                    f"parse-incomplete: this delivery entry does not state {listing(absent)}",
                    "write every product, using 0 for none",
                )
            return tuple(got.get(i, 0) for i in range(3))

        sched = self.schedule(block.entries, PRODUCTION_WEEKS, "production", "deliver", value_of)
        missing = [w for w in PRODUCTION_WEEKS if w not in sched]
        if missing:
            self.r.error(
                "E402",
                block.span,
                f"parse-incomplete: no delivery for week{'s' * (len(missing) > 1)} {listing(missing)}",
                "every production week 2, 4, 6, 8, 10 needs an entry (write zeros for a week with no delivery)",
            )
        known = {w: v for w, (v, entry) in sched.items() if id(entry) not in partial}
        return known, not missing and not partial

    def payments(self, setting: Setting) -> dict[int, int] | None:
        block = self.first(ast.Pay)
        if block is None:
            self.r.error(
                "E403",
                self.c.name_span,
                "parse-incomplete: no `pay` schedule",
                "add `pay { weeks 1..11: $10 }` with the amount due in each payment week",
            )
            return None
        self.spans["pay"] = block.span
        sched = self.schedule(
            block.entries, PAYMENT_WEEKS, "payment", "pay", lambda e: self.money_amount(e.amount, setting, "payment")
        )
        missing = [w for w in PAYMENT_WEEKS if w not in sched]
        if missing:
            self.r.error(
                "E403",
                block.span,
                f"parse-incomplete: no payment for week{'s' * (len(missing) > 1)} {listing(missing)}",
                "every payment week 1, 3, 5, 7, 9, 11 needs an entry (write $0 for a week with no payment)",
            )
            return None
        return {w: v for w, (v, _) in sched.items()}

    def minimum(self, clause, setting: Setting, deliveries) -> tuple[int, int, int]:
        if clause.minimum is None:
            return (1, 1, 1)
        got = self.items(clause.minimum, setting, "minimum")
        mins = tuple(got.get(i, 0) for i in range(3))
        for q in clause.minimum:
            idx = setting.product_index(q.product.value)
            if idx is None:
                continue
            for w in sorted(deliveries):
                if mins[idx] > deliveries[w][idx]:
                    self.r.error(
                        "E502",
                        q.span,
                        f"minimum {mins[idx]} {q.product.value} is above the "
                        f"{deliveries[w][idx]} scheduled in week {w}",
                        "a minimum cannot exceed the scheduled quantity in any production week",
                    )
                    break
        return mins

    def contingencies(self, setting: Setting, deliveries) -> Contingencies:
        sub = self.first(ast.Substitution)
        ded = self.first(ast.PaymentDeduction)
        roll = self.first(ast.Rollover)
        grim = self.first(ast.OnBreach)
        terms: dict = {}
        if sub is not None:
            self.spans["substitution"] = sub.span
            terms["substitution"] = SubstitutionTerms(min_qty=self.minimum(sub, setting, deliveries))
        if ded is not None:
            self.spans["payment_deduction"] = ded.span
            terms["payment_deduction"] = DeductionTerms(min_qty=self.minimum(ded, setting, deliveries))
        if roll is not None:
            self.spans["rollover"] = roll.span
            k = 2
            if roll.max_deficit is not None:
                k = self.number(roll.max_deficit, "max_deficit", allow_negative=True)
                lo, hi = MAX_DEFICIT_RANGE
                if not lo <= k <= hi:
                    self.r.error(
                        "E501",
                        roll.max_deficit.span,
                        f"rollover max_deficit {k} is outside {lo}..{hi}",
                        f"at most {hi} missed units per product can be carried forward",
                    )
                    k = 2
            terms["rollover"] = RolloverTerms(max_deficit=k)
        if grim is not None:
            self.spans["on_breach"] = grim.span
        return Contingencies(**terms, grim_trigger=grim is not None)

    def asserts(self, setting: Setting) -> list[AssertTerm]:
        out = []
        for k, clause in enumerate(self.clauses(ast.Assert)):
            self.spans[f"assert.{k}"] = clause.span
            expr = clause.expr
            if not isinstance(expr, ast.Compare):
                self.r.error(
                    "E702",
                    expr.span,
                    "an `assert` must compare two amounts",
                    "write a comparison such as `assert total pay == $125`",
                )
                continue
            lowered_left = self.lower(expr.left, setting)
            lowered_right = self.lower(expr.right, setting)
            if lowered_left is None or lowered_right is None:
                continue
            (left, lu), (right, ru) = lowered_left, lowered_right
            if lu != ru:
                self.r.error(
                    "E701",
                    expr.span,
                    f"cannot compare {lu} with {ru}",
                    "both sides of a comparison must be money, or both counts",
                )
                continue
            out.append(AssertTerm(op=expr.op, left=left, right=right, unit=lu, text=format_expr(expr)))
        return out

    def lower(self, e: ast.Expr, setting: Setting) -> tuple[IrExpr, Unit] | None:
        """Type an assert operand: money or count; None after reporting an error."""
        if isinstance(e, ast.MoneyAtom):
            value = self.money_amount(ast.MoneyLit(value=e.value, span=e.span), setting, "amount")
            return Lit(value=value, unit="money"), "money"
        if isinstance(e, ast.IntAtom):
            return Lit(value=self.number(ast.IntLit(value=e.value, span=e.span), "number"), unit="count"), "count"
        if isinstance(e, (ast.PriceRef, ast.TotalDeliver)):
            idx = self.product(e.product, setting)
            if idx is None:
                return None
            if isinstance(e, ast.PriceRef):
                return Ref(name="price", product=idx), "money"
            return Ref(name="total_deliver", product=idx), "count"
        simple = {
            ast.TotalPay: "total_pay",
            ast.TotalValue: "total_value",
            ast.Budget: "budget",
            ast.Capital: "capital",
        }
        if type(e) in simple:
            return Ref(name=simple[type(e)]), "money"
        if isinstance(e, ast.Negate):
            inner = self.lower(e.operand, setting)
            return None if inner is None else (Neg(operand=inner[0]), inner[1])
        if isinstance(e, ast.Compare):
            self.r.error(
                "E701", e.span, "a comparison cannot be used as an amount", "an `assert` holds exactly one comparison"
            )
            return None
        assert isinstance(e, ast.Binary)
        left, right = self.lower(e.left, setting), self.lower(e.right, setting)
        if left is None or right is None:
            return None
        (le, lu), (re_, ru) = left, right
        if e.op == "*":
            if lu == ru == "money":
                self.r.error(
                    "E701",
                    e.span,
                    "cannot multiply money by money",
                    "multiply a price by a count, e.g. `price(pizza) * total deliver pizza`",
                )
                return None
            unit: Unit = "money" if "money" in (lu, ru) else "count"
        elif lu != ru:
            self.r.error(
                "E701",
                e.span,
                f"cannot {'add' if e.op == '+' else 'subtract'} {ru} {'to' if e.op == '+' else 'from'} {lu}",
                "both operands must be money, or both counts",
            )
            return None
        else:
            unit = lu
        return BinOp(op=e.op, left=le, right=re_), unit

    # --- CT-Bench ----------------------------------------------------------------------

    def player(self, name: ast.Name) -> str | None:
        if name.value not in CTBENCH_PARTIES:
            self.r.error(
                "E103",
                name.span,
                f"unknown player `{name.value}`",
                f"{did_you_mean(name.value, CTBENCH_PARTIES)}the players are red and blue",
            )
            return None
        return name.value

    def ctbench(self, board_set: BoardSet | None) -> CTBenchIR | None:
        before = len(self.r.items)
        for clause in self.c.clauses:
            if isinstance(clause, CONTINGENCY_CLAUSES):
                self.r.error(
                    "E504",
                    clause.span,
                    f"`{clause.kind}` is a ContractSim contingency clause",
                    "CT-Bench contracts hold `cover` and `on goal` clauses only",
                )
            elif isinstance(clause, CONTRACTSIM_ONLY):
                self.r.error(
                    "E506",
                    clause.span,
                    f"`{clause.kind}` is a ContractSim clause",
                    "CT-Bench contracts hold `cover` and `on goal` clauses only",
                )
        parties = self.parties(CTBENCH_PARTIES, ("P-Red", "P-Blue"))
        coverage = []
        cover = self.first(ast.Cover)
        for k, e in enumerate(cover.entries if cover else ()):
            self.spans[f"cover.{k}"] = e.span
            row = self.number(e.tile.row, "row", allow_negative=True)
            col = self.number(e.tile.col, "column", allow_negative=True)
            if not (0 <= row < BOARD_SIZE and 0 <= col < BOARD_SIZE):
                self.r.error(
                    "E601",
                    e.tile.span,
                    f"tile ({row},{col}) is off the {BOARD_SIZE}x{BOARD_SIZE} board",
                    f"rows and columns run 0..{BOARD_SIZE - 1}",
                )
            giver, receiver = self.player(e.giver), self.player(e.receiver)
            if giver and giver == receiver:
                self.r.error(
                    "E602",
                    e.span,
                    f"{giver} cannot pay for its own move",
                    "the giver and the receiver must be different players",
                )
            colour = None
            if e.colour is not None:
                colour = e.colour.value
                if colour not in COLOURS:
                    self.r.error(
                        "E105",
                        e.colour.span,
                        f"unknown chip colour `{colour}`",
                        f"{did_you_mean(colour, COLOURS)}chip colours are {listing(COLOURS)}",
                    )
            if giver and receiver:
                coverage.append((row, col, giver, receiver, colour))
        points = []
        goal = self.first(ast.OnGoal)
        seen: set[str] = set()
        for k, e in enumerate(goal.entries if goal else ()):
            self.spans[f"goal.{k}"] = e.span
            trigger, giver, receiver = self.player(e.trigger), self.player(e.giver), self.player(e.receiver)
            amount = self.number(e.amount, "points", allow_negative=True)
            lo, hi = POINTS_RANGE
            if not lo <= amount <= hi:
                self.r.error(
                    "E603",
                    e.amount.span,
                    f"{amount} points is outside {lo}..{hi}",
                    f"a player may promise {lo} to {hi} points",
                )
            if trigger and giver and trigger != giver:
                self.r.error(
                    "E604",
                    e.giver.span,
                    f"points promised on {trigger}'s finish must come from {trigger}",
                    f"write `{trigger}: {trigger} transfers ...`",
                )
            if giver and giver == receiver:
                self.r.error(
                    "E602",
                    e.span,
                    f"{giver} cannot transfer points to itself",
                    "the giver and the receiver must be different players",
                )
            if giver in seen:
                self.r.error("E104", e.span, f"a second points promise from {giver}", "merge the two promises")
            if giver:
                seen.add(giver)
            if giver and receiver:
                points.append((giver, receiver, amount))
        if len(self.r.items) > before:
            return None
        return CTBenchIR(
            name=self.c.name,
            parties=parties,
            board_set=board_set,
            coverage=tuple(CoverageTerm(tile=(r, c), giver=g, receiver=v, colour=col) for r, c, g, v, col in coverage),
            points=tuple(PointsTerm(giver=g, receiver=v, amount=a) for g, v, a in points),
        )

    def run(self) -> CheckedContract | None:
        game_id = self.c.game.game_id
        if game_id not in GAME_IDS:
            self.r.error(
                "E101",
                self.c.game.span,
                f"unknown game `{game_id}`",
                f"{did_you_mean(game_id, GAME_IDS)}use one of {listing(GAME_IDS)}",
            )
            return None
        self.clause_once()
        before = len(self.r.items)
        if game_id in SETTING_BY_GAME_ID:
            ir = self.contractsim(SETTING_BY_GAME_ID[game_id])
        else:
            ir = self.ctbench(BOARD_SET_BY_GAME_ID.get(game_id))
        if ir is None or len(self.r.items) > before:
            return None
        return CheckedContract(ir=ir, file=self.r.path, spans=self.spans)
