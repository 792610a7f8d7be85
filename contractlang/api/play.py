"""`cl.play`: one game of either game under a contract, agents given as objects, names or specs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contractlang.api.language import Board, ContractLike, Environment, as_checked
from contractlang.api.results import Rows, flat
from contractlang.errors import Flag, Seed, Text, checked

DEFAULT_AGENTS = {
    "contractsim": {"customer": "rcc", "supplier": "rcc"},
    "ctbench": {"red": "planner", "blue": "planner"},
}


class Played(Rows):
    """One game's record (`RunRecord` for ContractSim, `GameRecord` for CT-Bench) and, for a rational
    Supplier, the contract's P_sat."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    game: str
    record: Any
    p_sat: float | None = None

    def rows(self) -> list[dict]:
        """ContractSim: one row per week; CT-Bench: one row per player."""
        r = self.record
        if self.game == "contractsim":
            return [flat("", w.model_dump()) for w in r.weeks]
        return [
            {"player": p, "agent": a, "score": s, "raw_score": raw, "baseline": b, "finished": p in r.finished}
            for p, a, s, raw, b in zip(
                ("red", "blue"), (r.red_agent, r.blue_agent), r.scores, r.raw_scores, r.baselines
            )
        ]


@checked
def play(
    contract: ContractLike,
    env: Environment | None = None,
    board: Board | None = None,
    agents: dict[str, Any] | None = None,
    seed: Seed | None = None,
    mode: Text = "pfp",
    visible: Flag = True,
    rules: Text = "authors",
    llm: Any = None,
    guidance: Sequence[Text] = (),
    floors: Text = "cs14",
) -> Played:
    """Play `contract` (a file or a checked contract) in ContractSim environment `env` or on CT-Bench board
    `board`, with `agents` {role: agent} where an agent is an object with `act`, a class, a factory, a built-in
    name or a spec (`py:`, `cmd:`, `llm:`); unnamed roles are RCC (ContractSim) or the planner (CT-Bench). The
    seed defaults as `contractlang run`'s (42 and 0). `llm` is an `LlmClient` for `llm:` agents; a ContractSim
    game is played under the floor rule set `floors` ([CS-14a])."""
    checked = as_checked(contract)
    kind = checked.ir.kind
    if (env is None) == (board is None) or (kind == "contractsim") != (env is not None):
        raise ValueError(f"a {kind} contract plays with {'env=N' if kind == 'contractsim' else 'board=ID'}")
    seats = {**DEFAULT_AGENTS[kind], **(agents or {})}
    unknown = set(seats) - set(DEFAULT_AGENTS[kind])
    if unknown:
        raise ValueError(f"{kind} has the roles {', '.join(DEFAULT_AGENTS[kind])}, not {', '.join(sorted(unknown))}")
    if kind == "contractsim":
        from games.contractsim.play import play_run
        from solver.dp import TableCache

        played = play_run(
            checked.ir,
            env,
            seats["customer"],
            seats["supplier"],
            42 if seed is None else seed,
            TableCache(),
            llm,
            tuple(guidance),
            floors,
        )
        return Played(game=kind, record=played.record, p_sat=played.p_sat)
    from games.ctbench.board import board_ref
    from games.ctbench.play import play as play_ctbench

    bench = board_ref(str(board), header=checked.ir.board_set)
    record = play_ctbench(
        bench,
        "file",
        mode,
        seats["red"],
        seats["blue"],
        seed=seed or 0,
        contract=checked.ir,
        visible=visible,
        keep_log=True,
        llm=llm,
        rules=rules,
    )
    return Played(game=kind, record=record)
