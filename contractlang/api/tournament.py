"""`cl.tournament`: cross-play tournaments on common random numbers, anchored to the exact optimum
(docs/explanation/tournaments.md). Every game is a job of `games.runner`, in `OUT/jobs/`, shared with the CLI."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from contractlang.api.ctbench import Board
from contractlang.api.experiments import Envs, Folder, Names, Probabilities, Share
from contractlang.api.results import Rows, flat
from contractlang.errors import MAX_SEEDS, BadArgument, Count, Flag, Seed, Text, UnknownName, Workers, checked
from contractlang.vocab import Frozen

Progress = Callable[..., None] | None
GAMES = ("contractsim", "ctbench")
MAX_GAMES = 250_000
"""The most games of one tournament: its records are held in memory and rated together (a few GB at this
size), so a larger one is split by contracts or boards, each into its own `out`."""
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A share of games, 0 to 1."""


class TournamentReport(Frozen):
    """`OUT/tournament.json`: who played, on what, and every table of docs/explanation/tournaments.md, with the
    project version and the agents' specs that produced it (the provenance the viewer's leaderboard shows)."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    game: str
    agents: tuple[str, ...]
    specs: tuple[str, ...] = ()  # each agent as given: a spec, LABEL=SPEC, or a Python agent's label
    version: str = ""  # the contractlang version that ranked the games
    roles: tuple[str, ...]
    seeds: tuple[int, ...]
    units: int
    games: int
    ratings: tuple[Any, ...]  # games.tournament.stats.Rating, per role, best first
    pairwise: tuple[Any, ...]  # games.tournament.stats.Pairwise
    cells: tuple[Any, ...]  # games.tournament.stats.Cell
    gates: tuple[Any, ...]  # games.tournament.stats.Gate
    plan: tuple[Any, ...] = ()  # games.tournament.stats.PlanRow, with `plan`
    sequential: str = ""  # the stopping rule, with `until_separated`
    errored: int = 0


class TournamentResult(Rows):
    """The report, how many games were played now, and where the store and the report are."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    report: TournamentReport
    played: int
    store: Path
    path: Path

    def rows(self) -> list[dict]:
        """One flat dict per agent and role: its rank, utility, compliant regret, regret, gap and strength with
        intervals."""
        return [flat("", r.model_dump(mode="json")) for r in self.report.ratings]


class _Game:
    """What the tournament needs of one game: its roles, its jobs, their phase and the seats of their records.
    The one place that names the game modules, so a game registry can replace it."""

    def __init__(self, name: str):
        from games.game import game_type, game_types

        module = game_type(name).tournament
        if module is None:
            played = ", ".join(t.name for t in game_types() if t.tournament)
            raise UnknownName(f"{name} plays no tournament; choose from {played}")
        self.name, self.module = name, importlib.import_module(module)
        self.roles: tuple[str, ...] = self.module.ROLES
        self.references: tuple[str, ...] = self.module.REFERENCES


def _agents(given, references: bool, game: _Game) -> tuple[list[str], dict]:
    """The field's agents (specs, and labels of Python objects) in their order, with the objects by label."""
    from games.agents import AgentError, agent_name

    chosen = list(given) + ([r for r in game.references if r not in given] if references else [])
    if not chosen:
        raise BadArgument("tournament(agents=()): name the agents: agents=[...] (or references=True)", "agents")
    objects = {agent_name(a): a for a in chosen if not isinstance(a, str)}
    names = list(dict.fromkeys(a if isinstance(a, str) else agent_name(a) for a in chosen))
    labels = [agent_name(a) for a in names]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise AgentError(f"two agents are labelled {twice!r}; give each its own LABEL=SPEC")
    return names, objects


def _seated(names: list[str], objects: dict, game: _Game) -> dict[str, list[str]]:
    """The agents of each role: every agent in the roles it declares (all when it declares none)."""
    from games.agents import check, roles_of

    out: dict[str, list[str]] = {}
    for role in game.roles:
        out[role] = []
        for name in names:
            declared = roles_of(objects.get(name, name), game.name)
            if declared is None or role in declared:
                if name not in objects:
                    check(name, game.name, role if game.module.CONTRACT_SET else None, "agent")
                out[role].append(name)
    return out


@checked
def tournament(
    agents: list[Any] | tuple[Any, ...] = (),
    game: Text = "contractsim",
    directory: Folder | None = None,
    out: Folder | None = None,
    references: Flag = False,
    seeds: Annotated[int, Field(ge=1, le=MAX_SEEDS, strict=True)] = 3,
    seed: Seed = 0,
    contracts: Text | None = None,
    envs: Envs | None = None,
    variants: Names | None = None,
    rhos: Probabilities | None = None,
    limit: Count | None = None,
    floors: Text = "cs14",
    boards: Literal["all"] | Annotated[Sequence[Board], Field(min_length=1)] | None = None,
    board_set: Text | None = None,
    conditions: Names = ("none",),
    modes: Names = ("pfp",),
    rules: Text = "authors",
    workers: Workers | None = None,
    ray: Text | None = None,
    llm: Any = None,
    progress: Progress = None,
    notice: Callable[[str], None] | None = None,
    fail_on_error: Share | None = None,
    estimate: Flag = False,
    plan: Flag = False,
    detect: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None,
    until_separated: Flag = False,
    looks: Count = 5,
    alpha: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] = 0.05,
    max_fallback: Fraction = 0.2,
    max_errors: Fraction = 0.1,
    resamples: Annotated[int, Field(ge=1, le=1_000_000, strict=True)] = 1000,
) -> TournamentResult:
    """Every agent (a spec, `LABEL=SPEC`, a registered name or a Python agent; `references` adds the game's
    built-in ones) against every other in each role it declares, `seeds` seeds (from `seed`) per cell, on common
    random numbers. ContractSim: every Customer against every Supplier on the contracts of the set `directory`
    (the shipped one by default) or its slice, with compliant regret and regret against RCC in the same seat on
    the same seed; CT-Bench: every ordered pair, self-play included, on `boards` × `conditions` × `modes`.
    Ratings per role with paired-bootstrap intervals, pairwise probabilities, a Bradley–Terry fit; LLM cells past the quality
    gates (`max_fallback`, `max_errors`) are marked and left out. `plan`: the seeds each pair needs for 80 %
    power to detect `detect` (default its observed difference); `until_separated`: play the seeds in `looks`
    batches and stop a pair's games once it is separated (Bonferroni α-spending at `alpha`). `estimate`: the
    run's `games.runner.RunEstimate`, playing nothing. Resumable, and a rerun with more agents plays only their
    games: the games are jobs in `OUT/jobs/`."""
    from contractlang import __version__
    from contractlang.api.experiments import check_choices, contract_slice, output_dir, sliced_contracts, synthetic_set
    from contractlang.files import check_outputs, write_atomically
    from games.agents import agent_name
    from games.runner import RunOptions, run_games
    from games.runner import estimate as run_estimate
    from games.tournament import stats

    chosen_game = _Game(game)
    module = chosen_game.module
    if not module.CONTRACT_SET and directory is not None:
        raise UnknownName(f"{directory}: a contract set is ContractSim's; CT-Bench plays boards (--boards)")
    names, objects = _agents(agents, references, chosen_game)
    seated = _seated(names, objects, chosen_game)
    if seeds < 1 or seed < 0:
        raise ValueError(f"a tournament plays 1 or more seeds from seed 0 or more, not {seeds} from {seed}")
    seed_list = list(range(seed, seed + seeds))
    out = output_dir(out, directory, "tournament")
    store = out / "jobs" / module.STORE
    if module.CONTRACT_SET:
        check_choices("cs19", floors)
        units, _ = sliced_contracts(synthetic_set(directory), contract_slice(contracts, envs, variants, rhos, limit))

        def jobs_for(batch: list[int], units: list = units) -> list:
            cases = [module.Case(contract=ir, env=e.env, seed=s, floors=floors) for e, ir in units for s in batch]
            return module.matches(cases, seated["customer"], seated["supplier"])

    else:
        from contractlang.api.ctbench import chosen_boards
        from games.ctbench.sweep import check_names

        check_names([(n, n) for n in names if n not in objects], "rules", objects)
        units = [(b.board_set, b.id) for b in chosen_boards(boards or "all", board_set, conditions, modes, rules)]

        def jobs_for(batch: list[int], units: list = units) -> list:
            return module.matches(units, list(conditions), list(modes), names, batch, rules)

    # counted on one unit (a contract, a board) and one seed: the jobs alone would take minutes and gigabytes
    games = len(jobs_for(seed_list[:1], units[:1])) * len(units) * len(seed_list)
    if games > MAX_GAMES:
        raise BadArgument(
            f"seeds {seeds} make a tournament of {games:,} games, more than {MAX_GAMES:,}: play fewer seeds or a "
            "slice of the contracts or boards",
            "seeds",
        )
    if estimate:
        return run_estimate(module.phase(jobs_for(seed_list), store, objects), module.decisions, llm)
    report_path = out / "tournament.json"
    check_outputs([report_path])  # refused now, not after the games
    options = RunOptions(workers=workers, ray=ray, llm=llm, fail_on_error=fail_on_error)
    rule = stats.Sequential(alpha=alpha, looks=max(1, min(looks, len(seed_list))))
    batches = [seed_list[i :: rule.looks] for i in range(rule.looks)] if until_separated else [seed_list]
    jobs: list = []
    played_now = 0
    needed = None
    for batch in batches:
        batch_jobs = jobs_for(batch)
        jobs = list(dict.fromkeys([*jobs, *(batch_jobs if needed is None else module.select(batch_jobs, needed))]))
        [played] = run_games([module.phase(jobs, store, objects)], options, progress, notice)
        played_now += played.played
        if until_separated:
            needed = rule.needed(module.seats(played.records, jobs, seated), chosen_game.roles)
            if not any(needed.values()):
                break
    seats = module.seats(played.records, jobs, seated)
    errored: dict[tuple[str, str, str], int] = {}
    for job, left in played.unfinished.items():
        if left.status == "errored":
            for role, agent, opponent in module.cells_of(job):
                key = (role, agent_name(agent), agent_name(opponent))
                errored[key] = errored.get(key, 0) + 1
    gates = stats.Gates(max_fallback=max_fallback, max_errors=max_errors).check(seats, errored)
    shut = {(g.role, g.agent, g.opponent) for g in gates}
    rated = [s for s in seats if (s.role, s.agent, s.opponent) not in shut]
    ratings, pairwise, planned = [], [], []
    for role in chosen_game.roles:
        r, p = stats.ratings(rated, role, seed=0, resamples=resamples)
        ratings += r
        pairwise += p
        if plan:
            planned += stats.plan(rated, role, len(seed_list), detect, alpha)
    report = TournamentReport(
        game=game,
        agents=tuple(agent_name(n) for n in names),
        specs=tuple(names),
        version=__version__,
        roles=chosen_game.roles,
        seeds=tuple(seed_list),
        units=len({s.unit for s in seats}),
        games=len([j for j in jobs if j in played.records]),
        ratings=tuple(ratings),
        pairwise=tuple(pairwise),
        cells=tuple(stats.cells(seats, gates)),
        gates=tuple(gates),
        plan=tuple(planned),
        sequential=rule.name if until_separated else "",
        errored=sum(u.status == "errored" for u in played.unfinished.values()),
    )
    write_atomically(report_path, json.dumps(report.model_dump(mode="json"), indent=1) + "\n")
    return TournamentResult(report=report, played=played_now, store=store, path=report_path)
