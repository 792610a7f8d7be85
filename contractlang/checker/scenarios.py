"""The scenario-test half of the checker: each test typed against the checked contract it names (events the
game can produce, expectations about clauses the contract has, weeks inside the scenario; E108, E801–E809)."""

from contractlang import ast
from contractlang import ir as tir
from contractlang.checker.contracts import ContractChecker, Reporter, listing
from contractlang.diagnostics import Span, did_you_mean
from contractlang.formatter import money
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
ENVIRONMENTS = tuple(range(1, 7))  # ContractSim paper, App. A.3
BOARD_IDS = tuple(range(80))  # each CT-Bench board set holds 80 boards ([CT-31])
PLAY_MODES = ("pfp", "trade")  # Pay-for-Partner or regular chip trading ([CT-16], [CT-17])
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
        self.given_spans: dict[str, Span] = {}
        self.world: tir.ContractSimWorld | None = None
        self.board_id: int | None = None
        self.mode = "trade"
        if isinstance(self.contract.ir, ContractSimIR):
            steps, horizon = self.weeks()
            expects = [self.contractsim_expect(e, horizon) for e in self.t.expect]
        else:
            steps = self.moves()
            expects = [self.ctbench_expect(e) for e in self.t.expect]
        if len(self.r.items) > before:
            return None
        scenario = tir.ScenarioIR(
            name=self.t.name,
            contract=self.contract.ir.name,
            steps=steps,
            expects=expects,
            world=self.world,
            board=self.board_id,
            mode=self.mode,
        )
        return CheckedScenario(
            ir=scenario,
            file=self.r.path,
            span=self.t.span,
            expect_spans=tuple(e.span for e in self.t.expect),
            given_spans=self.given_spans,
        )

    # --- ContractSim ---------------------------------------------------------------

    def weeks(self) -> tuple[tuple[tir.WeekStep, ...], int]:
        """One step per week 1..the last week given (all 11 when the test names its environment); a week the
        test leaves out goes as agreed. The world's lines are gathered into `self.world`."""
        setting = self.contract.ir.setting_info
        steps: dict[int, tuple[tir.WeekStep, ast.Node]] = {}
        world: dict[str, dict[int, tuple[tuple, ast.GivenWeek]]] = {a: {} for a in ast.WORLD_ACTIONS}
        env = next((g for g in self.t.given if isinstance(g, ast.GivenEnv)), None)
        for g in self.t.given:
            if isinstance(g, ast.GivenEnv):
                if g is not env:
                    self.r.error(
                        "E802",
                        g.span,
                        f"the environment is given twice in this test (first on line {env.span.line})",
                        "a test is played in one environment",
                    )
                elif self.environment(g.env) is not None:
                    self.given_spans["env"] = g.span
                continue
            if not isinstance(g, ast.GivenWeek):
                self.wrong_game(g, "this event")
                continue
            if g.action in ast.WORLD_ACTIONS:
                self.world_line(g, world)
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
                self.given_spans[f"week@{w}"] = g.span
        self.receipts_within_orders(world)
        if env is not None:
            if "env" in self.given_spans:
                self.world = self.supply(env.env.value, world)
        elif any(world.values()):
            first = min((g for lines in world.values() for _, g in lines.values()), key=lambda g: g.span)
            self.needs_environment(first, f"`{first.action}`")
        horizon = max(steps, default=WEEKS[-1]) if env is None else WEEKS[-1]
        full = tuple(
            steps[w][0] if w in steps else tir.WeekStep(week=w, action="agreed") for w in range(1, horizon + 1)
        )
        return full, horizon

    # --- the rest of the ContractSim world -------------------------------------------

    def environment(self, lit: ast.IntLit) -> int | None:
        if lit.value not in ENVIRONMENTS:
            self.r.error(
                "E808",
                lit.span,
                f"there is no environment {lit.value}",
                f"ContractSim's environments are {listing(ENVIRONMENTS)}",
            )
            return None
        return lit.value

    def needs_environment(self, node: ast.Node, what: str) -> None:
        self.r.error(
            "E809",
            node.span,
            f"{what} needs the environment the test is played in",
            "add `env 1` .. `env 6` to `given`: the environment's engine plays orders, prices, receipts and "
            "spoilage and gives the players' utilities",
        )

    def input(self, name: ast.Name) -> int | None:
        setting = self.contract.ir.setting_info
        if name.value not in setting.inputs:
            self.r.error(
                "E108",
                name.span,
                f"unknown input `{name.value}` in {setting.title}",
                f"{did_you_mean(name.value, setting.inputs)}the inputs are {listing(setting.inputs)}",
            )
            return None
        return setting.inputs.index(name.value)

    def production_weeks(self, g: ast.GivenWeek) -> list[int]:
        """The production weeks a world line names; a payment week or one outside the game is an error."""
        bad = False
        for lit in g.weeks.weeks:
            if lit.value not in WEEKS:
                self.r.error("E201", lit.span, f"week {lit.value} is outside the game's weeks 1..11", "weeks run 1..11")
                bad = True
            elif lit.value not in PRODUCTION_WEEKS:
                self.r.error(
                    "E808",
                    lit.span,
                    f"`{g.action}` in payment week {lit.value}: the Supplier orders, and inputs are priced, "
                    "received and spoil, only in production weeks",
                    f"production weeks are {listing(PRODUCTION_WEEKS)}",
                )
                bad = True
        return [] if bad else self.h.weeks(g.weeks, PRODUCTION_WEEKS, "production", f"given {g.action}")

    def world_line(self, g: ast.GivenWeek, world: dict) -> None:
        """One `order`, `prices`, `receive` or `spoil` line: per input, its value and the node it is written in."""
        setting = self.contract.ir.setting_info
        values: dict[int, tuple[int, ast.Node]] = {}
        entries = g.prices if g.action == "prices" else g.items
        for e in entries:
            idx = self.input(e.product)
            if g.action == "prices":
                amount = self.h.money_amount(e.amount, setting, f"the price of {e.product.value}")
            else:
                amount = self.h.number(e.amount, f"{g.action} of {e.product.value}")
            if idx is None:
                continue
            if idx in values:
                self.r.error("E104", e.span, f"{e.product.value} is listed twice in one line", "list each input once")
            values[idx] = (amount, e)
        for w in self.production_weeks(g):
            lines = world[g.action]
            if w in lines:
                self.r.error(
                    "E802",
                    g.span,
                    f"week {w}'s `{g.action}` is given twice in this test (first on line {lines[w][1].span.line})",
                    f"say once what the week's {g.action} is",
                )
                continue
            lines[w] = (values, g)
            self.given_spans[f"{g.action}@{w}"] = g.span

    def receipts_within_orders(self, world: dict) -> None:
        """[CS-11]: what arrives of an order is at most the order, so a receipt needs its week's order."""
        for w, (received, g) in world["receive"].items():
            ordered = world["order"].get(w)
            if ordered is None:
                self.r.error(
                    "E808",
                    g.span,
                    f"a receipt in week {w}, which gives no order",
                    f"give the order it is a receipt of: `week {w}: order ...`",
                )
                continue
            for idx, (amount, node) in received.items():
                asked = ordered[0].get(idx, (0, None))[0]
                if amount > asked:
                    name = self.contract.ir.setting_info.inputs[idx]
                    self.r.error(
                        "E808",
                        node.span,
                        f"{amount} {name} received in week {w}, more than the {asked} ordered",
                        "what arrives of an order is at most the order ([CS-11])",
                    )

    def supply(self, env: int, world: dict) -> tir.ContractSimWorld:
        def partial(action: str, w: int) -> tuple:
            got = world[action].get(w)
            return tuple(got[0][i][0] if got and i in got[0] else None for i in range(3))

        weeks = []
        for w in PRODUCTION_WEEKS:
            order = world["order"].get(w)
            weeks.append(
                tir.SupplyWeek(
                    week=w,
                    order=tuple(order[0].get(i, (0,))[0] for i in range(3)) if order else None,
                    prices=partial("prices", w),
                    receipts=partial("receive", w),
                    spoilage=tuple(v or 0 for v in partial("spoil", w)),
                )
            )
        return tir.ContractSimWorld(env=env, weeks=tuple(weeks))

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
        if isinstance(e, ast.ExpectUtility):
            role = self.role(e.party)
            amount = self.h.number(e.amount, "a utility", allow_negative=True)
            granularity = self.contract.ir.setting_info.granularity
            if amount % granularity:
                self.r.error(
                    "E302",
                    e.amount.span,
                    f"a utility of {money(amount)} is not a multiple of {money(granularity)}",
                    f"every amount of this setting is a whole multiple of {money(granularity)}, and so is a utility",
                )
            if not any(isinstance(g, ast.GivenEnv) for g in self.t.given):
                self.needs_environment(e, "a utility")
            return tir.ExpectUtility(role=role or "customer", amount=amount)
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

    def board(self) -> ast.GivenBoard | None:
        """The test's `board` line (a second one is an error), when it names a board that exists."""
        boards = [g for g in self.t.given if isinstance(g, ast.GivenBoard)]
        for g in boards[1:]:
            self.r.error(
                "E802",
                g.span,
                f"the board is given twice in this test (first on line {boards[0].span.line})",
                "a test is played on one board",
            )
        if boards and boards[0].board.value not in BOARD_IDS:
            self.r.error(
                "E808",
                boards[0].board.span,
                f"there is no board {boards[0].board.value}",
                f"CT-Bench's benchmark boards are {BOARD_IDS[0]}..{BOARD_IDS[-1]} ([CT-31])",
            )
            return None
        return boards[0] if boards else None

    def given_mode(self, board: ast.GivenBoard | None) -> str:
        """The test's `mode` line ([CT-16], [CT-17]): trade unless it says pfp, which the engine plays on a board."""
        modes = [g for g in self.t.given if isinstance(g, ast.GivenMode)]
        for g in modes[1:]:
            self.r.error(
                "E802",
                g.span,
                f"the mode is given twice in this test (first on line {modes[0].span.line})",
                "a test is played in one mode",
            )
        if not modes:
            return "trade"
        name = modes[0].mode
        if name.value not in PLAY_MODES:
            self.r.error(
                "E808",
                name.span,
                f"there is no mode `{name.value}`",
                f"{did_you_mean(name.value, PLAY_MODES)}CT-Bench is played in {listing(PLAY_MODES)}",
            )
            return "trade"
        if name.value == "pfp" and board is None:
            self.r.error(
                "E808",
                modes[0].span,
                "a Pay-for-Partner test needs the board it is played on",
                "add `board 0` .. `board 79` to `given`: the game's engine plays the arrangements there",
            )
        return name.value

    def arrangement(self, g: ast.GivenArrangement) -> tir.ArrangementStep | None:
        """[CT-17]: an accepted arrangement, the payer covering some of the partner's tiles and asking the
        partner to cover some of its own; one that promises nothing is refused."""
        payer, partner = self.player(g.payer), self.player(g.partner)
        covers, asks = self.chips(g.covers, "covered"), self.chips(g.asks, "asked")
        if payer and payer == partner:
            self.r.error("E808", g.partner.span, f"{payer} pays for itself", "an arrangement is between red and blue")
            return None
        if not sum(covers) and not sum(asks):
            self.r.error(
                "E808",
                g.span,
                "an arrangement that covers no tile",
                "an arrangement promises at least one tile ([CT-17])",
            )
            return None
        if not (payer and partner):
            return None
        return tir.ArrangementStep(payer=payer, partner=partner, covers=covers, asks=asks)

    def in_mode(self, g: ast.Given) -> bool:
        """Trades belong to trading games and arrangements and defections to Pay-for-Partner ones ([CT-16])."""
        pfp = isinstance(g, (ast.GivenArrangement, ast.GivenDefect))
        if pfp and self.mode != "pfp":
            self.r.error(
                "E808",
                g.span,
                "a Pay-for-Partner line in a trading game",
                "add `mode pfp` beside `board N` to play the test in Pay-for-Partner mode",
            )
        elif isinstance(g, ast.GivenTrade) and self.mode == "pfp":
            self.r.error(
                "E808",
                g.span,
                "a trade in a Pay-for-Partner game",
                "offer an arrangement instead: `red pays for blue red 2 and asks green 1`",
            )
        else:
            return True
        return False

    def chips(self, quantities: tuple[ast.Quantity, ...], what: str) -> tuple[int, int, int]:
        got = dict.fromkeys(COLOURS, 0)
        for q in quantities:
            amount = self.h.number(q.amount, f"{q.product.value} chips {what}")
            if self.colour(q.product):
                got[q.product.value] += amount
        return tuple(got[c] for c in COLOURS)

    def trade(self, g: ast.GivenTrade, holdings: dict) -> tir.TradeStep | None:
        """[CT-16]: a trade hands some chips each way between the two players; without a board the chips a
        player holds from here on change by it, and must cover it."""
        giver, receiver = self.player(g.giver), self.player(g.receiver)
        give, receive = self.chips(g.give, "given"), self.chips(g.receive, "received")
        if giver and giver == receiver:
            self.r.error("E808", g.receiver.span, f"{giver} trades with itself", "a trade is between red and blue")
            return None
        if not sum(give) or not sum(receive):
            self.r.error(
                "E808",
                g.span,
                "a trade that gives or receives no chip",
                "a trade hands at least one chip each way ([CT-16])",
            )
            return None
        if not (giver and receiver):
            return None
        if "board" not in self.given_spans:
            for who, out, back in ((giver, give, receive), (receiver, receive, give)):
                held = holdings[who]
                if any(o > h for o, h in zip(out, held)):
                    shown = ", ".join(f"{c} {n}" for c, n in zip(COLOURS, held))
                    self.r.error(
                        "E808",
                        g.span,
                        f"{who} cannot hand over what this trade asks: it holds {shown}",
                        f"say what it holds first: `{who} holds red 2, blue 0, green 1`",
                    )
                    return None
                holdings[who] = tuple(h - o + b for h, o, b in zip(held, out, back))
        return tir.TradeStep(giver=giver, receiver=receiver, give=give, receive=receive)

    def moves(self) -> tuple:
        holdings = {"red": DEFAULT_HOLDINGS, "blue": DEFAULT_HOLDINGS}
        steps = []
        board = self.board()
        if board is not None:
            self.board_id = board.board.value
            self.given_spans["board"] = board.span
        self.mode = self.given_mode(board)
        ended: ast.GivenEnd | None = None
        played = (ast.GivenMove, ast.GivenGoal, ast.GivenEnd, ast.GivenTrade, ast.GivenArrangement, ast.GivenDefect)
        for g in self.t.given:
            if not self.in_mode(g):
                continue
            if ended is not None and isinstance(g, played):
                self.r.error(
                    "E808",
                    g.span,
                    f"the game has ended (line {ended.span.line}): nothing happens after it",
                    "move `game ends` to the end of `given`",
                )
                continue
            if isinstance(g, ast.GivenEnd):
                ended = g
            if isinstance(g, ast.GivenWeek):
                self.wrong_game(g, "a week")
            elif isinstance(g, (ast.GivenEnv, ast.GivenBoard, ast.GivenMode)):
                if isinstance(g, ast.GivenEnv):
                    self.wrong_game(g, "an environment")
            elif isinstance(g, ast.GivenTrade):
                self.given_spans[f"step@{len(steps)}"] = g.span
                step = self.trade(g, holdings)
                if step is not None:
                    steps.append(step)
            elif isinstance(g, ast.GivenArrangement):
                self.given_spans[f"step@{len(steps)}"] = g.span
                step = self.arrangement(g)
                if step is not None:
                    steps.append(step)
            elif isinstance(g, ast.GivenDefect):
                player = self.player(g.player)
                if player:
                    self.given_spans[f"step@{len(steps)}"] = g.span
                    steps.append(tir.DefectStep(player=player))
            elif isinstance(g, ast.GivenHolds) and board is not None:
                self.r.error(
                    "E808",
                    g.span,
                    f"on board {board.board.value} the game deals the chips and the moves spend them",
                    "give chips from one player to the other with a trade: `red gives blue red 2 for blue 1`",
                )
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
                    self.given_spans[f"step@{len(steps)}"] = g.span
                    steps.append(tir.MoveStep(player=player, tile=tile, tile_colour=colour, holdings=held))
            elif isinstance(g, ast.GivenGoal):
                player = self.player(g.player)
                if player:
                    self.given_spans[f"step@{len(steps)}"] = g.span
                    steps.append(tir.GoalStep(player=player))
            else:
                self.given_spans[f"step@{len(steps)}"] = g.span
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
        if isinstance(e, ast.ExpectScore):
            player = self.player(e.player)
            amount = self.h.number(e.amount, "a score", allow_negative=True)
            if "board" not in self.given_spans and not any(isinstance(g, ast.GivenBoard) for g in self.t.given):
                self.r.error(
                    "E809",
                    e.span,
                    "a score needs the board the test is played on",
                    "add `board 0` .. `board 79` to `given`: the game's engine plays the moves there and scores them",
                )
            return tir.ExpectScore(player=player or "red", amount=amount)
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
