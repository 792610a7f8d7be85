"""CT-Bench as a registered game ([CT-01]): its type, its setup (a board, a contract, the trading mode, the rules
its contract is enforced by) and the loaded game `load_game("ctbench", contract=..., board=24)` returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Union

import numpy as np
from pydantic import Field, field_validator, model_validator

from contractlang.diagnostics import ContractError
from contractlang.interpreter.events import EventBase
from contractlang.ir import CheckedContract, CTBenchIR
from contractlang.vocab import BoardSet, Frozen, RuleSet
from games.agents import Seat, make_agent
from games.ctbench.board import PLAYERS, board_ref
from games.ctbench.game import (
    Action,
    Arrangement,
    CTBenchGame,
    CTBenchObservation,
    Mode,
    Move,
    Propose,
    Respond,
    State,
    Trade,
)
from games.ctbench.game import total as chips
from games.ctbench.log import LogEvent
from games.ctbench.negotiation import Confirm, NegotiationObservation, Say
from games.game import GameType, PlayRecord, register_game


class CTBenchSetup(Frozen):
    """A CT-Bench game: the board (`ID` or `SET:ID`, [CT-02]), the contract (a checked contract or its IR; None
    plays without one), the trading mode ([CT-16], [CT-17]), whether each player sees the other's state, and the
    rules the contract is enforced by ([CT-24a])."""

    board: int | str
    contract: CTBenchIR | None = None
    board_set: BoardSet | None = None
    mode: Mode = "pfp"
    visible: bool = True
    rules: RuleSet = "authors"

    @model_validator(mode="before")
    @classmethod
    def _fits_the_board(cls, data):
        """A checked contract's `with ... chip` colours must match its tiles on the board (`ContractError` with
        the diagnostics, located in the contract's source)."""
        if isinstance(data, dict) and isinstance(data.get("contract"), CheckedContract) and "board" in data:
            from contractlang.checker import check_board

            checked = data["contract"]
            bench = _bench(data["board"], checked.ir.board_set, data.get("board_set"))
            problems = check_board(checked, bench.board.colour, f"board {data['board']}")
            if problems:
                raise ContractError(list(problems))
            data = {**data, "contract": checked.ir}
        return data

    @field_validator("contract", mode="before")
    @classmethod
    def _ir(cls, value):
        return getattr(value, "ir", value)


_OBSERVATION = Union[CTBenchObservation, NegotiationObservation]  # noqa: UP007 - a type for the schema
_ACTION = Annotated[Union[Action, Say, Confirm], Field(discriminator="kind")]  # noqa: UP007 - as AnyAction
GAME_TYPE = GameType(
    name="ctbench",
    title="CT-Bench",
    roles=PLAYERS,
    observations=dict.fromkeys(PLAYERS, _OBSERVATION),
    actions=dict.fromkeys(PLAYERS, _ACTION),
    setup=CTBenchSetup,
    ir_kind="ctbench",
    default_agents=dict.fromkeys(PLAYERS, "planner"),
    agent_modules=("games.ctbench.agents",),
    summary="Colored Trails on a 4x4 board: trade chips, pay for tiles, reach the goal",
    events=LogEvent,
    tournament="games.tournament.ctbench",
    scenario="games.ctbench.scenario",
)


class CTBench:
    """One board under one contract: the initial state ([CT-06]: the same for every seed) and whole games."""

    game_type = GAME_TYPE

    def __init__(self, setup: CTBenchSetup):
        self.setup = setup
        self.bench = _bench(setup.board, setup.contract.board_set if setup.contract else None, setup.board_set)
        self.base = CTBenchGame(
            board=self.bench.board,
            mode=setup.mode,
            condition="file" if setup.contract is not None else "none",
            contract=setup.contract,
            visible=setup.visible,
            rules=_rules(setup.rules),
        )

    def new_initial_state(self, seed: int) -> State:
        return self.base.new_initial_state()

    def play(self, agents: Mapping[str, Any], seed: int | None = None, *, llm=None) -> PlayRecord:
        """One game, each player's agent a spec or a Python agent; `seed` (default 0) seeds the agents'
        randomness."""
        from games.ctbench.play import play

        s = self.setup
        record = play(
            self.bench,
            "file" if s.contract is not None else "none",
            s.mode,
            agents["red"],
            agents["blue"],
            seed=seed or 0,
            contract=s.contract,
            visible=s.visible,
            keep_log=True,
            llm=llm,
            rules=s.rules,
        )
        return self.record(record)

    def record(self, game) -> PlayRecord:
        """The one record of a played game, from CT-Bench's own (`GameRecord`)."""
        return PlayRecord(
            game=GAME_TYPE.name,
            setup={
                "board": game.board_id,
                "board_set": game.board_set,
                "mode": game.mode,
                "visible": game.visible,
                "rules": game.rules,
            },
            seed=game.seed,
            agents=game.agents,
            outcome=game.outcome,
            events=game.log,
            llm_calls=game.llm_calls,
            rows=tuple(
                {"player": p, "agent": a, "score": s, "raw_score": raw, "baseline": b, "finished": p in game.finished}
                for p, a, s, raw, b in zip(PLAYERS, game.agents.values(), game.scores, game.raw_scores, game.baselines)
            ),
            facts={"usage_note": _nulls_note(game)},
            detail=game,
        )

    def describe(self, event: EventBase) -> str | None:
        return event.describe()

    def story(self, record: PlayRecord) -> str:
        """The game round by round, each event in its own words, and the scores ([CT-27])."""
        from games.ctbench.story import story

        return story(record.detail, self.bench)

    def to_json(self, record: PlayRecord) -> dict:
        return record.detail.to_json()

    # --- what check_game_api needs beyond the state API ----------------------------------------------------

    def random_action(self, state: State, rng: np.random.Generator):
        role = state.current_player()
        return make_agent("random", Seat(game=GAME_TYPE.name, role=role, rng=rng)).act(state.observe(role))

    def probes(self, state: State) -> list:
        """A proposal of nothing, an answer to no proposal, a move off the path, a pass, an offer of each kind."""
        one = {"red": 1, "blue": 0, "green": 0}
        return [
            Propose(offer=None),
            Respond(accept=True),
            Move(tile=(3, 3)),
            Move(tile=None),
            Propose(offer=Trade(give=one, receive=one)),
            Propose(offer=Arrangement(i_cover=one, you_cover=one)),
        ]

    def conserved(self, state: State) -> int:
        """Chips: those held and those spent on moves ([CT-08])."""
        return chips(state.red_chips) + chips(state.blue_chips) + state.stats.chips_spent


def _bench(board: int | str, header: BoardSet | None, board_set: BoardSet | None):
    """The board `board` names (ID or SET:ID), with the sets the contract's header and the setup may name."""
    return board_ref(str(board), **{"the contract's game header": header, "--set": board_set})


def _rules(name: RuleSet):
    from contractlang.interpreter import Rules

    return Rules.named(name)


def _nulls_note(game) -> str:
    """What an LLM player's usage line adds: its invalid replies, each taken as the null action [CT-12]."""
    if not game.llm_calls:
        return ""
    nulls = ", ".join(f"{player} {n}" for player, n in game.llm_null_actions.items())
    return f"invalid replies taken as the null action: {nulls}"


register_game(GAME_TYPE, CTBench)
