"""Play one CT-Bench game with agents: contract negotiation (CT-Bench paper, Sec. 2.4) → play → a typed game record."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from contractlang.errors import UnknownName
from contractlang.interpreter import ChipTransfer, Forfeit, Rules
from contractlang.ir import CTBenchIR
from contractlang.llm import LlmCall, LlmClient
from contractlang.vocab import BoardSet, RuleSet
from games.agents import AgentError, model_of, play_out, seated, spec_of
from games.ctbench.board import PLAYERS, BenchmarkBoard
from games.ctbench.game import Condition, CTBenchGame, Mode, Stats
from games.ctbench.judge import LlmJudge, OfflineJudge
from games.ctbench.llm_agents import LlmPlayer
from games.ctbench.log import CoverageHonoured, CoverageUnfulfilled, LogEvent
from games.ctbench.negotiation import NegotiationOutcome, negotiate_contract
from games.log import Record

CONDITIONS: tuple[Condition, ...] = ("none", "prog_trading", "prog_points", "nl_trading")


class GameRecord(Record):
    """Everything the metrics need from one game; the full log rides along for replay."""

    game: ClassVar[str] = "ctbench"

    board_id: int
    board_set: BoardSet = "ours"  # which 80-board set board_id indexes: ours or the authors' ("paper")
    rules: RuleSet = "paper"  # how contract entries were enforced ([CT-24a]); records from before it was
    # recorded were all played by the paper's text
    board_class: str
    condition: str
    mode: str
    red_agent: str
    blue_agent: str
    seed: int
    repeat: int = 0
    visible: bool = True
    contract_active: bool
    contract_terms: dict | None = None  # the programmable contract's terms (Prog-Trading / Prog-Points)
    transcript: str = ""  # the NL-Trading agreement the judge reads
    coverage: dict[str, dict[str, int]] = {}  # per paying player: partner coverage honoured / unfulfilled,
    # contract entries paid and contract entries forfeited
    finished: tuple[str, ...]
    forfeited: tuple[str, ...]
    raw_scores: tuple[int, int]
    scores: tuple[int, int]
    baselines: tuple[int, int]
    rounds: int
    end_reason: str
    stats: Stats
    log: tuple[LogEvent, ...] = ()
    negotiation: NegotiationOutcome | None = None  # the contract negotiation, in contract conditions
    judge: str = "rules"  # who summarises contracts and judges NL-Trading moves: rules, or an llm[:MODEL]
    llm_calls: tuple[LlmCall, ...] = ()  # every model call of the game (players and judge), in order
    llm_null_actions: dict[str, int] = {}  # per LLM player: decisions that fell back to the null action [CT-12]

    @property
    def agents(self) -> dict[str, str]:
        return {"red": self.red_agent, "blue": self.blue_agent}

    @property
    def outcome(self) -> dict[str, int]:
        return dict(zip(PLAYERS, self.scores))

    def to_json(self) -> dict:
        """The `run --json` object: the record without its log, the scores also by player."""
        payload = self.model_dump(mode="json", exclude={"log"})
        payload["scores"] = self.outcome
        return payload


def play(
    bench: BenchmarkBoard,
    condition: Condition,
    mode: Mode,
    red,
    blue,
    seed: int = 0,
    contract: CTBenchIR | None = None,
    visible: bool = True,
    keep_log: bool = False,
    repeat: int = 0,
    llm: LlmClient | None = None,
    judge: str = "rules",
    rules: RuleSet = "authors",
) -> GameRecord:
    """Run one game; `contract` (from a .contract file) replaces the negotiation. Repeat r > 0 of a seed draws
    its agents' randomness from the stream (seed, r). `llm` serves `llm[:MODEL]` players and an `llm[:MODEL]`
    judge; the game's calls are recorded under its own name, so repeats are separate recordings. `rules` says
    how the contract is enforced ([CT-24a]); the default is the authors' engine, as in every published number.
    `red` and `blue` are agent specs (games/agents.py) or Python agents."""
    rng = np.random.default_rng(seed if repeat == 0 else [seed, repeat])
    players = {"red": red, "blue": blue}
    red, blue = spec_of(red), spec_of(blue)
    board = bench.board
    client = (
        llm.for_game(
            f"ctbench/{bench.ref}/{condition}/{mode}/{red}/{blue}/seed{seed}/repeat{repeat}/"
            f"{'visible' if visible else 'hidden'}"
        )
        if llm is not None
        else None
    )
    enforced = Rules.named(rules)
    referee = OfflineJudge(enforced) if judge == "rules" else LlmJudge(_judge_client(client, judge), enforced)
    negotiation = None
    transcript = ""
    with seated(players, game="ctbench", rng=rng, contract=contract, env=bench, llm=client) as agents:
        if contract is not None:
            condition = "file"
        elif condition in ("prog_trading", "prog_points", "nl_trading"):
            negotiation = negotiate_contract(board, condition, mode, agents, referee, visible)
            contract, transcript = negotiation.contract, negotiation.transcript
        active = contract is not None or bool(transcript)
        game = CTBenchGame(
            board=board,
            mode=mode,
            condition=condition if active else "none",
            contract=contract,
            transcript=transcript,
            visible=visible,
            rules=enforced,
        )
        state = play_out(game.new_initial_state(judge=referee if game.condition == "nl_trading" else None), agents)
    return GameRecord(
        board_id=bench.id,
        board_set=bench.board_set,
        rules=rules,
        board_class=bench.board_class,
        condition=condition,
        mode=mode,
        red_agent=red,
        blue_agent=blue,
        seed=seed,
        repeat=repeat,
        visible=visible,
        contract_active=active,
        contract_terms=contract.terms_json() if contract is not None else None,
        transcript=transcript,
        coverage=coverage_counts(state.log),
        finished=state.finished,
        forfeited=state.forfeited,
        raw_scores=tuple(state.raw_score(p) for p in PLAYERS),
        scores=tuple(state.final_score(p) for p in PLAYERS),
        baselines=tuple(board.baseline(p) for p in PLAYERS),
        rounds=state.round,
        end_reason=state.end_reason,
        stats=state.stats,
        log=state.log if keep_log else (),
        negotiation=negotiation,
        judge=judge,
        llm_calls=tuple(client.calls) if client is not None else (),
        llm_null_actions={p: a.nulls for p, a in agents.items() if isinstance(a, LlmPlayer)},
    )


def coverage_counts(log: tuple[LogEvent, ...]) -> dict[str, dict[str, int]]:
    """Per paying player: partner coverage honoured / unfulfilled, contract entries paid and forfeited."""
    coverage = {p: {"honoured": 0, "unfulfilled": 0, "contract_paid": 0, "contract_forfeit": 0} for p in PLAYERS}
    for entry in log:
        if isinstance(entry, CoverageHonoured):
            coverage[entry.payer]["honoured"] += 1
        elif isinstance(entry, CoverageUnfulfilled):
            coverage[entry.payer]["unfulfilled"] += 1
        elif isinstance(entry, ChipTransfer):
            coverage[entry.giver]["contract_paid"] += 1
        elif isinstance(entry, Forfeit):
            coverage[entry.player]["contract_forfeit"] += 1
    return coverage


def check_judge(judge: str) -> str:
    """`judge` when it names a judge (rules, or an LLM); `UnknownName` otherwise."""
    if judge != "rules" and model_of(judge) is None:
        raise UnknownName(f"unknown judge {judge!r}; use rules or llm[:MODEL]")
    return judge


def _judge_client(client: LlmClient | None, judge: str) -> LlmClient:
    model = model_of(check_judge(judge))
    if client is None:
        raise AgentError(f"the judge {judge!r} is an LLM, and this run has no LLM client")
    return client.with_model(model)
