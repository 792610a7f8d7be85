"""The two games as the environments see them: each role's named features, its discrete actions and their mask,
its running utility, the opponent's seat and the story so far. Every environment class (AEC, Parallel,
single-agent) steps a game through one of these, so the three cannot disagree about a game."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import get_args

import numpy as np

from contractlang.api.language import as_checked
from contractlang.api.rl.checks import EnvInputError, board_of, choice_of, flag_of, whole_of
from contractlang.ir import ContractSimIR, CTBenchIR
from contractlang.vocab import Frozen, RuleSet

INF = float("inf")


class Feature(Frozen):
    """One entry of an observation vector: its name, the unit it counts in, and the range it stays in."""

    name: str
    unit: str
    low: float
    high: float


def _triple(stem: str, names: tuple[str, ...], unit: str, low: float, high: float) -> list[Feature]:
    return [Feature(name=f"{stem}[{n}]", unit=unit, low=low, high=high) for n in names]


class ContractSimCore:
    """ContractSim (ContractSim paper, Sec. 3; [CS-05]-[CS-07]): the Customer pays an amount 0..budget; the
    Supplier orders or produces a triple, each quantity 0..order cap, as one index q1·(cap+1)² + q2·(cap+1) + q3.
    Money in Catering base units ([CS-01]); the running utility is U_Cust = B + value − paid, U_Supp = paid −
    spend (ContractSim paper, Sec. 3)."""

    game_name = "contractsim"
    roles = ("customer", "supplier")

    def __init__(self, contract, env: int, floors: str):
        from games.contractsim.environments import FLOOR_RULES, environment
        from games.contractsim.game import ContractSimGame

        ir = as_checked(contract).ir
        if not isinstance(ir, ContractSimIR):
            raise EnvInputError(f"contract: {ir.name!r} is a CT-Bench contract; ContractSim needs a ContractSim one")
        self.ir = ir
        self.env = environment(whole_of("env", env), choice_of("floors", floors, tuple(FLOOR_RULES)))
        self.game = ContractSimGame.make(ir, self.env)
        side = self.env.order_cap + 1
        self.triples = np.array(list(itertools.product(range(side), repeat=3)))
        self.sizes = {"customer": self.env.budget + 1, "supplier": side**3}
        self.features = self._features()

    def _features(self) -> dict[str, tuple[Feature, ...]]:
        e, s = self.env, self.ir.setting_info
        money = "base $"
        cash_high = e.capital + e.budget
        compiled = self.game.compiled
        memory = compiled.memory_states
        due_high = max(int(t.required.max()) for t in compiled.tables)
        customer = [
            Feature(name="week", unit="week", low=1, high=12),
            Feature(name="paid_total", unit=money, low=0, high=e.budget),
            Feature(name="budget_left", unit=money, low=0, high=e.budget),
            Feature(name="payment_due", unit=money, low=0, high=INF),
            Feature(name="observed_breach", unit="0/1", low=0, high=1),
        ]
        supplier = [
            Feature(name="week", unit="week", low=1, high=12),
            Feature(name="producing", unit="0/1 (0: order phase)", low=0, high=1),
            Feature(name="round_index", unit="round (−1: not a production week)", low=-1, high=4),
            Feature(name="cash", unit=money, low=0, high=cash_high),
            *_triple("inventory", s.inputs, "units", 0, e.inventory_cap),
            *_triple("price", s.inputs, money, 0, max(e.price_bounds()[1])),
            *_triple("spoiled", s.inputs, "units", 0, e.inventory_cap),
            *_triple("received", s.inputs, "units", 0, e.order_cap),
            Feature(name="order_cap", unit="units", low=0, high=e.order_cap),
            *_triple("delivery_due", s.products, "units", 0, due_high),
            *_triple("memory", ("0", "1", "2"), "contract memory", int(memory.min()), int(memory.max())),
            Feature(name="observed_breach", unit="0/1", low=0, high=1),
            Feature(name="paid_total", unit=money, low=0, high=e.budget),
            Feature(name="spend_total", unit=money, low=0, high=cash_high),
        ]
        return {"customer": tuple(customer), "supplier": tuple(supplier)}

    def initial(self, seed: int):
        from games.contractsim.shocks import draw_shocks

        return self.game.new_initial_state(draw_shocks(self.env, np.random.default_rng(seed)))

    def observation(self, s, role: str) -> np.ndarray:
        if role == "customer":
            due = s.monitor.payment_due() if s.phase == "pay" else 0
            breach = s.observed_breach("customer") if not s.is_terminal() else 0
            return np.array([s.week, s.paid_total, s.budget_left, due, breach], np.float64)
        acting = s.phase in ("order", "produce")  # the due and the prices exist only in a production week
        prices, due = (s.prices, s.monitor.delivery_due()) if acting else ((0, 0, 0), (0, 0, 0))
        return np.array(
            [
                s.week,
                s.phase == "produce",
                s.round_index if acting else -1,
                s.cash,
                *s.inventory,
                *prices,
                *s.spoiled,
                *s.received,
                self.env.order_cap,
                *due,
                *s.monitor.memory,
                s.observed_breach("supplier") if not s.is_terminal() else 0,
                s.paid_total,
                s.spend_total,
            ],
            np.float64,
        )

    def mask(self, s, role: str) -> np.ndarray:
        mask = np.zeros(self.sizes[role], np.int8)
        if s.is_terminal() or s.current_player() != role:
            return mask
        if s.phase == "pay":
            mask[: s.budget_left + 1] = 1
        elif s.phase == "order":
            mask[:] = self.triples @ np.array(s.prices) <= s.cash
        else:
            q, n = self.triples, s.inventory
            mask[:] = (q[:, 0] + q[:, 1] <= min(n[0], n[1])) & (q[:, 0] + q[:, 2] <= n[2])
        return mask

    def decode(self, s, role: str, index: int):
        from games.contractsim.game import Order, Pay, Produce

        if role == "customer":
            return Pay(amount=index)
        triple = tuple(int(x) for x in self.triples[index])
        return Order(quantities=triple) if s.phase == "order" else Produce(quantities=triple)

    def fallback(self, s, role: str) -> int:
        """The zero action (pay $0, order or produce nothing), always legal: what a masked action falls back to."""
        return 0

    def utility(self, s, role: str) -> float:
        return float(s.returns()[role])

    def seat(self, opponent, role: str, seed: int):
        """`opponent` (a registered agent's name or spec, or a Python agent) seated at `role` as `cl.play` seats
        it, its randomness drawn from the game's seed as there ([CS-11])."""
        from games.agents import Seat, make_agent
        from games.contractsim.play import SESSION_TABLES

        ir, env = self.ir, self.env
        seat = Seat(
            game=self.game_name,
            role=role,
            rng=np.random.default_rng([seed, 1]),
            contract=ir,
            env=env,
            tables=lambda cover: SESSION_TABLES.solve(ir, env, cover)[1],
        )
        return make_agent(opponent, seat)

    def story(self, s, seed: int, agents: dict[str, str]) -> str:
        """The game so far as `run` tells it (games/contractsim/story.py)."""
        from games.contractsim.story import story

        u = s.returns()
        told = SimpleNamespace(
            env=self.env.id,
            seed=seed,
            log=s.log,
            customer=agents["customer"],
            supplier=agents["supplier"],
            u_customer=u["customer"],
            u_supplier=u["supplier"],
        )
        return story(told, self.ir)


MOVES = ("no proposal", "accept", "reject", "honour", "refuse", "pass", "up", "down", "left", "right")
STEPS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
COLOURS = ("red", "blue", "green")
MOST_OFFERED = 4
"""Each side of a learner's offer names one colour and 1..MOST_OFFERED chips (or tiles to cover), so the
offers are a finite list a discrete action can index; agents that are not learners may offer any counts."""


def _chips(colour: str | None, count: int):
    from contractlang.interpreter.events import ChipCounts

    return ChipCounts(**({colour: count} if colour else {}))


def _offers() -> tuple[tuple[str, object], ...]:
    """Every trade of `a` chips of one colour for `b` of another ([CT-16]), then every Pay-for-Partner
    arrangement covering up to MOST_OFFERED tiles of one colour each way, one side possibly nothing ([CT-17])."""
    from games.ctbench.log import Arrangement, Trade

    counts = range(1, MOST_OFFERED + 1)
    trades = [
        (f"trade: give {a} {x} for {b} {y}", Trade(give=_chips(x, a), receive=_chips(y, b)))
        for x in COLOURS
        for a in counts
        for y in COLOURS
        if y != x
        for b in counts
    ]
    side = [(None, 0)] + [(c, n) for c in COLOURS for n in counts]
    arrangements = [
        (
            f"arrangement: I cover {n or 'nothing'}{f' {c}' if c else ''}, you cover {m or 'nothing'}"
            + (f" {d}" if d else ""),
            Arrangement(i_cover=_chips(c, n), you_cover=_chips(d, m)),
        )
        for c, n in side
        for d, m in side
        if n or m
    ]
    return tuple(trades + arrangements)


OFFERS = _offers()
CTBENCH_ACTIONS = MOVES + tuple(label for label, _ in OFFERS)
"""Every CT-Bench action a learner can take, by index: the ten moves and answers, then the offers."""


class CTBenchCore:
    """CT-Bench under a programmable contract ([CT-15]-[CT-28]): no proposal, answers, honours, moves to a
    neighbour or pass, and the offers of OFFERS (trades in trading mode, arrangements in Pay-for-Partner mode), as
    indices into CTBENCH_ACTIONS. The utility is the final score ([CT-33]), known when the game ends."""

    game_name = "ctbench"
    roles = ("red", "blue")

    def __init__(self, contract, board: int | str, mode: str, rules: str, visible: bool):
        from contractlang.interpreter import Rules
        from games.ctbench.board import INITIAL_CHIPS, board_ref
        from games.ctbench.game import MAX_ROUNDS, CTBenchGame, Mode

        checked = as_checked(contract)
        if not isinstance(checked.ir, CTBenchIR):
            raise EnvInputError(
                f"contract: {checked.ir.name!r} is a ContractSim contract; CT-Bench needs a CT-Bench one"
            )
        self.bench = board_ref(board_of(board), header=checked.ir.board_set)
        self.ir = checked.ir
        self.game = CTBenchGame(
            board=self.bench.board,
            mode=choice_of("mode", mode, get_args(Mode)),
            condition="file",
            contract=checked.ir,
            visible=flag_of("visible", visible),
            rules=Rules.named(choice_of("rules", rules, get_args(RuleSet))),
        )
        rows = self.bench.board.rows()
        size = len(rows)
        self.colours = np.array(
            [
                [("red", "blue", "green").index(self.bench.board.colour((r, c))) for c in range(size)]
                for r in range(size)
            ],
            np.float64,
        ).ravel()
        from games.ctbench.game import Propose, why_illegal

        n = len(CTBENCH_ACTIONS)
        self.sizes = {"red": n, "blue": n}
        # which offers the mode allows ([CT-16], [CT-17]): the rules' own test, asked once per game
        self.offer_mask = np.array([why_illegal("propose", mode, (), Propose(offer=o)) is None for _, o in OFFERS])
        chips = sum(sum(c.values()) for c in INITIAL_CHIPS.values())
        hidden = -1 if not visible else 0
        features = [
            Feature(name="round", unit="round", low=0, high=MAX_ROUNDS + 1),
            *(Feature(name=f"phase={p}", unit="0/1", low=0, high=1) for p in ("propose", "respond", "move", "honour")),
            Feature(name="row", unit="tile", low=0, high=size - 1),
            Feature(name="column", unit="tile", low=0, high=size - 1),
            *_triple("chips", ("red", "blue", "green"), "chips", 0, chips),
            Feature(name="partner_row", unit="tile (−1: hidden)", low=hidden, high=size - 1),
            Feature(name="partner_column", unit="tile (−1: hidden)", low=hidden, high=size - 1),
            *_triple("partner_chips", ("red", "blue", "green"), "chips (−1: hidden)", hidden, chips),
            Feature(name="finished", unit="0/1", low=0, high=1),
            *_triple("offer_gain", COLOURS, "chips or tiles covered (respond phase)", 0, chips),
            *_triple("offer_cost", COLOURS, "chips or tiles covered (respond phase)", 0, chips),
            *(
                Feature(name=f"colour[{r},{c}]", unit="0 red, 1 blue, 2 green", low=0, high=2)
                for r in range(size)
                for c in range(size)
            ),
        ]
        self.features = {"red": tuple(features), "blue": tuple(features)}

    def initial(self, seed: int):
        return self.game.new_initial_state()

    def observation(self, s, role: str) -> np.ndarray:
        from games.ctbench.game import other

        partner = other(role)
        phase = [s.phase == p for p in ("propose", "respond", "move", "honour")]
        mine, theirs = s.chips(role), s.chips(partner)
        seen = self.game.visible
        return np.array(
            [
                s.round,
                *phase,
                *s.position(role),
                mine.red,
                mine.blue,
                mine.green,
                *(s.position(partner) if seen else (-1, -1)),
                *((theirs.red, theirs.blue, theirs.green) if seen else (-1, -1, -1)),
                role in s.finished,
                *_offer_sides(s),
                *self.colours,
            ],
            np.float64,
        )

    def _moves(self, s) -> list:
        from games.ctbench.game import Honour, Move, Propose, Respond

        here = s.position(s.current_player()) if s.phase == "move" else (0, 0)
        return [
            Propose(offer=None),
            Respond(accept=True),
            Respond(accept=False),
            Honour(honour=True),
            Honour(honour=False),
            Move(tile=None),
            *(Move(tile=(here[0] + dr, here[1] + dc)) for dr, dc in STEPS.values()),
        ]

    def mask(self, s, role: str) -> np.ndarray:
        mask = np.zeros(len(CTBENCH_ACTIONS), np.int8)
        if s.is_terminal() or s.current_player() != role:
            return mask
        mask[: len(MOVES)] = [s.why_illegal(a) is None for a in self._moves(s)]
        if s.phase == "propose":
            mask[len(MOVES) :] = self.offer_mask
        return mask

    def decode(self, s, role: str, index: int):
        from games.ctbench.game import Propose

        if index < len(MOVES):
            return self._moves(s)[index]
        return Propose(offer=OFFERS[index - len(MOVES)][1])

    def fallback(self, s, role: str) -> int:
        """Doing nothing (no proposal, reject, refuse, pass), the lowest such index legal now: what a masked action
        falls back to."""
        legal = self.mask(s, role)
        return next(i for i in (0, 2, 4, 5) if legal[i])

    def utility(self, s, role: str) -> float:
        return float(s.returns()[role]) if s.is_terminal() else 0.0

    def seat(self, opponent, role: str, seed: int):
        """`opponent` seated at `role` as `cl.ctbench` seats it, its randomness drawn from the seed."""
        from games.agents import Seat, make_agent

        seat = Seat(game=self.game_name, role=role, rng=np.random.default_rng(seed), contract=self.ir, env=self.bench)
        return make_agent(opponent, seat)

    def story(self, s, seed: int, agents: dict[str, str]) -> str:
        """The game so far, one sentence per event as the CT-Bench story tells it (games/ctbench/story.py)."""
        from games.ctbench.story import told

        head = f"Board {self.bench.ref}, {self.game.mode} mode, P-Red {agents['red']} vs P-Blue {agents['blue']}"
        lines = [head, *(line for e in s.log if (line := told(e)))]
        if s.is_terminal():
            r = s.returns()
            lines.append(f"scores: P-Red {r['red']}, P-Blue {r['blue']}")
        return "\n".join(lines)


def _offer_sides(s) -> tuple[int, ...]:
    """The pending offer from the responder's side: what it would get (chips, or its tiles covered) and what it
    would give; zeros outside the respond phase."""
    from games.ctbench.log import Trade

    offer = s.pending_offer.offer if s.phase == "respond" and s.pending_offer is not None else None
    if offer is None:
        return (0,) * 6
    gain, cost = (offer.give, offer.receive) if isinstance(offer, Trade) else (offer.i_cover, offer.you_cover)
    return (gain.red, gain.blue, gain.green, cost.red, cost.blue, cost.green)
