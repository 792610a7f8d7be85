"""CT-Bench's engine for scenario tests (`contractlang.scenario.world.World`): a test that names its board is
played on the game's own `State` in the test's mode, its trades or Pay-for-Partner arrangements, moves and goals
in the order written, each player passing when the test says nothing of it and honouring each promise it is
asked to pay unless the test says it defects ([CT-18]); at `game ends`, and after the last line, both players
pass until the game ends by its own rules ([CT-13]–[CT-15]). The final scores are the game's own ([CT-27]), and
the monitor's events are those the engine made.
"""

from __future__ import annotations

from contractlang.interpreter.events import ChipCounts, EventBase, monitor_events
from contractlang.ir import (
    ArrangementStep,
    CTBenchIR,
    DefectStep,
    EndStep,
    GoalStep,
    MoveStep,
    ScenarioIR,
    TradeStep,
)
from contractlang.scenario.world import Fault, Outcome
from contractlang.vocab import COLOURS
from games.ctbench.board import CHIP_VALUE, GOAL, GOAL_BONUS, benchmark_board
from games.ctbench.game import CTBenchGame, Honour, Move, Propose, Respond, State, total
from games.ctbench.log import Arrangement, Trade


class _Stop(Exception):
    def __init__(self, step: int, message: str):
        super().__init__(message)
        self.fault = Fault(given=(f"step@{step}",), message=message)


def _counts(chips) -> ChipCounts:
    return ChipCounts(**dict(zip(COLOURS, chips)))


def _waiting(state: State):
    """What a player the test says nothing of does now: no offer, decline, pass, honour a promise."""
    return {"propose": Propose(offer=None), "respond": Respond(accept=False), "move": Move(tile=None)}.get(
        state.phase, Honour(honour=True)
    )


class CTBenchScenarios:
    """Plays a CT-Bench test on its board with the game's engine."""

    def play(self, contract: CTBenchIR, scenario: ScenarioIR, events: tuple[EventBase, ...]) -> Outcome:
        bench = benchmark_board(scenario.board, contract.board_set or "ours")
        game = CTBenchGame(board=bench.board, mode=scenario.mode, condition="file", contract=contract)
        state = game.new_initial_state()
        defects: list[tuple[int, str]] = []  # (line, player): refusals still to come, in the order written ([CT-18])
        try:
            for k, step in enumerate(scenario.steps):
                if isinstance(step, DefectStep):
                    defects.append((k, step.player))
                elif isinstance(step, EndStep):
                    state = self._finished(state)
                else:
                    state = self._step(state, k, step, bench.ref, defects)
            state = self._finished(state)
            if defects:
                k, player = defects[0]
                raise _Stop(k, f"{player} is never asked to pay for a covered move after this line")
        except _Stop as stop:
            return Outcome(rows=self._rows(state), fault=stop.fault)
        scores = state.returns()
        rows = self._rows(state) + tuple(self._score_row(state, p, scores[p]) for p in ("red", "blue"))
        return Outcome(utilities=scores, rows=rows, events=tuple(monitor_events(state.log)))

    @staticmethod
    def _finished(state: State) -> State:
        """The game played out: both players pass until it ends by its own rules ([CT-13]–[CT-15])."""
        while not state.is_terminal():
            state = state.apply_action(_waiting(state))
        return state

    @staticmethod
    def _until(state: State, k: int, player: str, phase: str) -> State:
        """The state once `player` is to act in `phase`, everyone before passing."""
        while not (state.phase == phase and state.current_player() == player):
            if state.is_terminal():
                raise _Stop(k, f"the game is over ({state.end_reason}) before this line")
            if player in state.finished:
                raise _Stop(k, f"{player} has reached the goal and plays no more")
            state = state.apply_action(_waiting(state))
        return state

    def _step(self, state: State, k: int, step, board: str, defects: list[tuple[int, str]]) -> State:
        if isinstance(step, ArrangementStep):
            state = self._until(state, k, step.payer, "propose")
            state = state.apply_action(
                Propose(offer=Arrangement(i_cover=_counts(step.covers), you_cover=_counts(step.asks)))
            )
            return state.apply_action(Respond(accept=True))
        if isinstance(step, TradeStep):
            state = self._until(state, k, step.giver, "propose")
            state = state.apply_action(Propose(offer=Trade(give=_counts(step.give), receive=_counts(step.receive))))
            state = state.apply_action(Respond(accept=True))
            if not state.log[-1].executed:
                raise _Stop(k, f"the chips held cannot cover this trade: {self._held(state)}")
            return state
        if isinstance(step, MoveStep):
            colour = state.game.board.colour(step.tile)
            if colour != step.tile_colour:
                raise _Stop(k, f"tile {step.tile} is {colour} on board {board}, not {step.tile_colour}")
            state = self._until(state, k, step.player, "move")
            why = state.why_illegal(Move(tile=step.tile))
            if why is not None:
                raise _Stop(k, f"{step.player} {why}")
            state = state.apply_action(Move(tile=step.tile))
            while state.phase == "honour":
                refusal = next((d for d in defects if d[1] == state.current_player()), None)
                if refusal is not None:
                    defects.remove(refusal)
                state = state.apply_action(Honour(honour=refusal is None))
            return state
        assert isinstance(step, GoalStep)
        if step.player not in state.finished:
            raise _Stop(k, f"{step.player} is on {state.position(step.player)}, not on the goal {GOAL}")
        return state

    @staticmethod
    def _held(state: State) -> str:
        return "; ".join(
            f"{p} holds " + ", ".join(f"{c} {state.chips(p).of(c)}" for c in COLOURS) for p in ("red", "blue")
        )

    @staticmethod
    def _rows(state: State) -> tuple[str, ...]:
        """The game as the engine played it: each round's events but the passes and declined offers."""
        return tuple(
            f"round {e.round}: {e.describe()}" if hasattr(e, "round") else e.describe()
            for e in state.log
            if e.type not in ("pass", "move_attempt") and hasattr(e, "describe")
        )

    @staticmethod
    def _score_row(state: State, player: str, score: int) -> str:
        """[CT-27]: 20 + 5 per chip on the goal, else 0; a forfeit scores 0; then the contract's points."""
        if player in state.forfeited:
            return f"score {player} 0: forfeited"
        chips = total(state.chips(player))
        raw = (
            f"{GOAL_BONUS} + {CHIP_VALUE} x {chips} chips" if state.position(player) == GOAL else "0 (not on the goal)"
        )
        moved = score - state.raw_score(player)
        return f"score {player} {score} = {raw}" + (
            f" {'+' if moved >= 0 else '-'} {abs(moved)} points" if moved else ""
        )


WORLD = CTBenchScenarios()
"""What `GameType.scenario` names: CT-Bench's engine for scenario tests."""
