"""The scenario-test half of the checker: each test typed against the checked contract it names (events the
game can produce, expectations about clauses the contract has, weeks inside the scenario; E801–E807)."""

from contractlang import ast
from contractlang import ir as tir
from contractlang.checker.contracts import ContractChecker, Reporter, listing
from contractlang.diagnostics import did_you_mean
from contractlang.ir import (
    CheckedContract,
    CheckedScenario,
    ContractSimIR,
)
from contractlang.vocab import (
    BOARD_SIZE,
    COLOURS,
    CONTRACTSIM_ROLES,
    PAYMENT_WEEKS,
    PRODUCTION_WEEKS,
    WEEKS,
)

CLAUSES_OF_ROLE = {
    "customer": ("pay",),
    "supplier": ("deliver", "substitution", "payment_deduction", "rollover"),
}
NO_CHIPS = (0, 0, 0)
DEFAULT_HOLDINGS = (1, 1, 1)  # one chip of each colour: every coverage entry can pay unless a test says otherwise


class ScenarioChecker:
    """Types a test against the checked contract it names: events the game can produce, expectations about
    clauses the contract has, weeks inside the scenario."""

    def __init__(self, test: ast.ScenarioTest, contract: CheckedContract, host: ContractChecker):
        self.t, self.contract, self.h, self.r = test, contract, host, host.r

    def wrong_game(self, node: ast.Node, what: str) -> None:
        game = "a CT-Bench" if isinstance(self.contract.ir, ContractSimIR) else "a ContractSim"
        self.r.error(
            "E803",
            node.span,
            f"{what} belongs to {game} game, and {self.contract.ir.name!r} is not one",
            "ContractSim tests give weeks (`week 1: pay $15`); CT-Bench tests give moves, goals and `game ends`",
        )

    def run(self) -> CheckedScenario | None:
        before = len(self.r.items)
        if isinstance(self.contract.ir, ContractSimIR):
            steps, horizon = self.weeks()
            expects = [self.contractsim_expect(e, horizon) for e in self.t.expect]
        else:
            steps = self.moves()
            expects = [self.ctbench_expect(e) for e in self.t.expect]
        if len(self.r.items) > before:
            return None
        scenario = tir.ScenarioIR(name=self.t.name, contract=self.contract.ir.name, steps=steps, expects=expects)
        return CheckedScenario(
            ir=scenario, file=self.r.path, span=self.t.span, expect_spans=tuple(e.span for e in self.t.expect)
        )

    # --- ContractSim ---------------------------------------------------------------

    def weeks(self) -> tuple[tuple[tir.WeekStep, ...], int]:
        """One step per week 1..the last week given; a week the test leaves out goes as agreed."""
        setting = self.contract.ir.setting_info
        steps: dict[int, tuple[tir.WeekStep, ast.Node]] = {}
        for g in self.t.given:
            if not isinstance(g, ast.GivenWeek):
                self.wrong_game(g, "this event")
                continue
            if g.action == "pay":
                weeks = self.h.weeks(g.weeks, PAYMENT_WEEKS, "payment", "given pay")
                step = dict(amount=self.h.money_amount(g.amount, setting, "the payment"))
            elif g.action == "deliver":
                weeks = self.h.weeks(g.weeks, PRODUCTION_WEEKS, "production", "given deliver")
                got = self.h.items(g.items, setting, "delivery")
                step = dict(items=tuple(got.get(i, 0) for i in range(3)))
            else:
                weeks = self.h.weeks(g.weeks, WEEKS, "any", "given")
                step = {}
            for w in weeks:
                if w in steps:
                    self.r.error(
                        "E802",
                        g.span,
                        f"week {w} is given twice in this test (first on line {steps[w][1].span.line})",
                        "say once what happens in each week",
                    )
                    continue
                steps[w] = (tir.WeekStep(week=w, action=g.action, **step), g)
        horizon = max(steps, default=WEEKS[-1])
        full = tuple(
            steps[w][0] if w in steps else tir.WeekStep(week=w, action="agreed") for w in range(1, horizon + 1)
        )
        return full, horizon

    def week_in(self, lit: ast.IntLit, horizon: int) -> int | None:
        w = lit.value
        if w not in WEEKS:
            self.r.error("E201", lit.span, f"week {w} is outside the contract's weeks 1..11", "weeks run 1..11")
            return None
        if w > horizon:
            self.r.error(
                "E804",
                lit.span,
                f"week {w} is after the test's last week {horizon}",
                f"add `week {w}: as agreed` (or what happens then) to `given`",
            )
            return None
        return w

    def has_clause(self, name: ast.Name, role: str | None) -> str | None:
        c = self.contract.ir.contingencies
        present = {
            "pay": True,
            "deliver": True,
            "substitution": c.substitution is not None,
            "payment_deduction": c.payment_deduction is not None,
            "rollover": c.rollover is not None,
        }
        clause = name.value
        if clause not in present:
            self.r.error(
                "E805",
                name.span,
                f"unknown clause `{clause}`",
                f"{did_you_mean(clause, present)}a breach is by {listing(present)}",
            )
        elif not present[clause]:
            self.r.error(
                "E806",
                name.span,
                f"{self.contract.ir.name!r} has no `{clause}` clause",
                f"the contract's clauses are {listing([k for k, v in present.items() if v])}",
            )
        elif role in CLAUSES_OF_ROLE and clause not in CLAUSES_OF_ROLE[role]:
            self.r.error(
                "E806",
                name.span,
                f"the {role} cannot breach `{clause}`",
                f"the {role}'s obligations are {listing(CLAUSES_OF_ROLE[role])}",
            )
        else:
            return clause
        return None

    def role(self, name: ast.Name) -> str | None:
        if name.value not in CONTRACTSIM_ROLES:
            self.r.error(
                "E103",
                name.span,
                f"unknown party role `{name.value}`",
                f"{did_you_mean(name.value, CONTRACTSIM_ROLES)}this game's roles are customer and supplier",
            )
            return None
        return name.value

    def triple(self, items: tuple[ast.Quantity, ...], what: str) -> tuple[int, int, int]:
        setting = self.contract.ir.setting_info
        got = self.h.items(items, setting, what)
        return tuple(got.get(i, 0) for i in range(3))

    def amount_or_items(self, e, kind_of_money: bool, what: str) -> dict:
        setting = self.contract.ir.setting_info
        if kind_of_money and e.amount is None:
            self.r.error("E807", e.span, f"{what} is money here", "write an amount such as $25")
            return {}
        if not kind_of_money and e.amount is not None:
            self.r.error("E807", e.amount.span, f"{what} is goods here", "write quantities such as pizza 1, soup 2")
            return {}
        if kind_of_money:
            return {"amount": self.h.money_amount(e.amount, setting, what)}
        return {"items": self.triple(e.items, what)}

    def contractsim_expect(self, e: ast.Expect, horizon: int):
        if isinstance(e, ast.ExpectBreach):
            role = self.role(e.party)
            week = self.week_in(e.week, horizon) if e.week else None
            if role and week and week not in (PAYMENT_WEEKS if role == "customer" else PRODUCTION_WEEKS):
                self.r.error(
                    "E805",
                    e.week.span,
                    f"the {role} has no obligation in week {week}",
                    f"the {role}'s weeks are {listing(PAYMENT_WEEKS if role == 'customer' else PRODUCTION_WEEKS)}",
                )
            clause = self.has_clause(e.clause, role) if e.clause else None
            return tir.ExpectBreach(role=role or "customer", week=week, clause=clause)
        if isinstance(e, ast.ExpectNoBreach):
            return tir.ExpectNoBreach(role=self.role(e.party) if e.party else None)
        if isinstance(e, ast.ExpectOwed):
            role = self.role(e.party)
            return tir.ExpectOwed(
                role=role or "customer", **self.amount_or_items(e, role == "customer", "what is owed")
            )
        if isinstance(e, ast.ExpectDue):
            week = self.week_in(e.week, horizon)
            if week is None:
                return None
            return tir.ExpectDue(week=week, **self.amount_or_items(e, week in PAYMENT_WEEKS, "what is due"))
        if isinstance(e, ast.ExpectCarried):
            week = self.week_in(e.week, horizon)
            if self.contract.ir.contingencies.rollover is None:
                self.r.error(
                    "E806",
                    e.span,
                    f"{self.contract.ir.name!r} has no `rollover` clause, so nothing is ever carried",
                    "expect `owed supplier ...` for what a week left short",
                )
            return tir.ExpectCarried(week=week or 1, items=self.triple(e.items, "carried"))
        if isinstance(e, ast.ExpectTerminated):
            week = self.week_in(e.week, horizon) if e.week else None
            if not e.negated and not self.contract.ir.contingencies.grim_trigger:
                self.r.error(
                    "E806",
                    e.span,
                    f"{self.contract.ir.name!r} has no `on breach: terminate` clause",
                    "the grim trigger the solver falls back on is not a clause of the contract; expect the breach",
                )
            return tir.ExpectTerminated(week=week, terminated=not e.negated)
        if isinstance(e, ast.ExpectNothing):
            return tir.ExpectNothing()
        self.wrong_game(e, "this expectation")
        return None

    # --- CT-Bench ------------------------------------------------------------------

    def player(self, name: ast.Name) -> str | None:
        return self.h.player(name)

    def colour(self, name: ast.Name) -> str | None:
        if name.value not in COLOURS:
            self.r.error(
                "E105",
                name.span,
                f"unknown chip colour `{name.value}`",
                f"{did_you_mean(name.value, COLOURS)}chip colours are {listing(COLOURS)}",
            )
            return None
        return name.value

    def tile(self, t: ast.Tile) -> tuple[int, int]:
        row, col = t.row.value, t.col.value
        if not (0 <= row < BOARD_SIZE and 0 <= col < BOARD_SIZE):
            self.r.error(
                "E601",
                t.span,
                f"tile ({row},{col}) is off the {BOARD_SIZE}x{BOARD_SIZE} board",
                f"rows and columns run 0..{BOARD_SIZE - 1}",
            )
        return row, col

    def moves(self) -> tuple:
        holdings = {"red": DEFAULT_HOLDINGS, "blue": DEFAULT_HOLDINGS}
        steps = []
        for g in self.t.given:
            if isinstance(g, ast.GivenWeek):
                self.wrong_game(g, "a week")
            elif isinstance(g, ast.GivenHolds):
                player = self.player(g.player)
                chips = dict(zip(COLOURS, holdings.get(player, NO_CHIPS)))
                for q in g.chips:
                    if self.colour(q.product):
                        chips[q.product.value] = self.h.number(q.amount, f"{q.product.value} chips")
                if player:
                    holdings[player] = tuple(chips[c] for c in COLOURS)
            elif isinstance(g, ast.GivenMove):
                player, colour, tile = self.player(g.player), self.colour(g.colour), self.tile(g.tile)
                if player and colour:
                    held = (holdings["red"], holdings["blue"])
                    steps.append(tir.MoveStep(player=player, tile=tile, tile_colour=colour, holdings=held))
            elif isinstance(g, ast.GivenGoal):
                player = self.player(g.player)
                if player:
                    steps.append(tir.GoalStep(player=player))
            else:
                steps.append(tir.EndStep())
        return tuple(steps)

    def ctbench_expect(self, e: ast.Expect):
        ir = self.contract.ir
        if isinstance(e, ast.ExpectChip):
            tile, giver, receiver = self.tile(e.tile), self.player(e.giver), self.player(e.receiver)
            colour = self.colour(e.colour) if e.colour else None
            if giver and receiver and not any(c.tile == tile and c.receiver == receiver for c in ir.coverage):
                self.r.error(
                    "E806",
                    e.span,
                    f"{ir.name!r} has no cover entry paying for {receiver} at {tile}",
                    "expect a transfer the contract's `cover` clause can make",
                )
            return tir.ExpectChip(tile=tile, giver=giver or "red", receiver=receiver or "blue", colour=colour)
        if isinstance(e, ast.ExpectForfeit):
            player = self.player(e.player)
            return tir.ExpectForfeit(player=player or "red", tile=self.tile(e.tile) if e.tile else None)
        if isinstance(e, ast.ExpectPoints):
            giver, receiver = self.player(e.giver), self.player(e.receiver)
            if giver and receiver and not any(p.giver == giver and p.receiver == receiver for p in ir.points):
                self.r.error(
                    "E806",
                    e.span,
                    f"{ir.name!r} has no `on goal` entry from {giver} to {receiver}",
                    "expect a transfer the contract's `on goal` clause can make",
                )
            amount = self.h.number(e.amount, "points")
            return tir.ExpectPoints(giver=giver or "red", receiver=receiver or "blue", amount=amount)
        if isinstance(e, ast.ExpectNothing):
            return tir.ExpectNothing()
        self.wrong_game(e, "this expectation")
        return None


def check_tests(tests, contract: ast.Contract | None, checked: CheckedContract, report: Reporter) -> list:
    host = ContractChecker(contract, report)
    out, names = [], {}
    for test in tests:
        if test.name in names:
            report.error(
                "E106",
                test.name_span,
                f'a second test named "{test.name}"',
                f"the first is on line {names[test.name]}; test names are unique per contract",
            )
        names.setdefault(test.name, test.span.line)
        scenario = ScenarioChecker(test, checked, host).run()
        if scenario is not None:
            out.append(scenario)
    return out
