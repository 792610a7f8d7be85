"""Scenario tests, clause coverage and generated tests: the verbs behind `contractlang test` and `coverage`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field

from contractlang.errors import Flag, Text, checked
from contractlang.files import RECORD_CHECK, FileError, parse_json, read_capped, read_lines_capped, write_atomically
from contractlang.ir import CheckedContract, ContractSimIR, CTBenchIR
from contractlang.scenario.generate import Dead, Found, generate, test_source
from contractlang.scenario.played import (
    Game,
    PlayCoverage,
    checked_ir,
    game_of_events,
    game_of_log,
    game_of_weeks,
    summarise,
)
from contractlang.scenario.suite import TestReport, load, run_tests
from contractlang.vocab import Frozen

Paths = str | Path | Annotated[Sequence[str | Path], Field(min_length=1)]
"""A file or folder, or one or more of them."""


class GameWorlds(Mapping):
    """The engines the games lend scenario tests (`GameType.scenario`), by contract kind, loaded on first use:
    a run whose tests expect no utility never imports a game."""

    @cached_property
    def _worlds(self) -> dict:
        from games.game import scenario_worlds

        return scenario_worlds()

    def __getitem__(self, kind: str):
        return self._worlds[kind]

    def __iter__(self):
        return iter(self._worlds)

    def __len__(self) -> int:
        return len(self._worlds)


@checked
def test(paths: Paths = (".",), coverage: Flag = False, only: Text | None = None) -> TestReport:
    """Run every scenario test in the `.contract` files under `paths` through the monitor the games use, the
    players' utilities through the game's engine; with `coverage`, which tests fired each clause and which
    clauses no event sequence can fire."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    return run_tests(paths, coverage=coverage, only=only, worlds=GameWorlds())


class Generated(Frozen):
    """The tests `generate_tests` wrote (one file per contract) and the clauses found dead."""

    written: tuple[str, ...]
    found: tuple[Found, ...]
    dead: tuple[Dead, ...]


@checked
def generate_tests(contract: str | Path, write: Flag = True) -> Generated:
    """For each clause of the contracts in `contract` that no test in its folder fires, a shortest shrunk event
    sequence that fires it, written as `tests for` blocks to `STEM.generated.contract` beside it (`contractlang
    test` on the folder finds them); a clause no sequence fires is reported dead with the reason."""
    path = Path(contract)
    report = run_tests([path.parent], worlds=GameWorlds())
    if report.diagnostics:
        from contractlang.diagnostics import ContractError

        raise ContractError(list(report.diagnostics))
    loaded = load([path])
    mine = [c for c in loaded.contracts.values() if Path(c.file) == path]
    if not mine:
        raise FileError(f"{path}: holds no contract")
    all_found, all_dead, blocks = [], [], []
    for one in mine:
        covered = {k for r in report.results if r.contract == one.ir.name for k in r.fired}
        found, dead = generate(one, covered)
        all_found.extend(found)
        all_dead.extend(dead)
        if found:
            blocks.append(test_source(one, found))
    written = []
    if write and blocks:
        out = path.with_name(path.name.removesuffix(".contract") + ".generated.contract")
        header = (
            f"// Tests written by `contractlang test --generate {path.name}`: one per clause no other test fired.\n"
        )
        write_atomically(out, header + "\n".join(blocks))
        written.append(str(out))
    return Generated(written=tuple(written), found=tuple(all_found), dead=tuple(all_dead))


@checked
def coverage(path: str | Path) -> PlayCoverage:
    """Which clauses agents triggered in the games under `path`: `run --log` files, and the game records of
    `experiment performance`/`rational`, `ctbench sweep` and `tournament` outputs (their `.jsonl` stores)."""
    root = Path(path)
    files = sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]
    sources, games = [], []
    for file in files:
        raw = read_capped(file)
        logged = game_of_log(raw, str(file))
        if logged is not None:
            sources.append(str(file))
            games.append(logged)
            continue
        found = False
        for line in read_lines_capped(file):
            try:
                data = parse_json(line)
            except ValueError:
                break
            record = stored_record(data) if isinstance(data, dict) else None
            if record is None:
                break
            found = True
            games.extend(games_of_record(record))
        if found:
            sources.append(str(file))
    if not sources:
        raise FileError(
            f"{path}: holds no game log or game record (run --log files, experiment, sweep or tournament outputs)"
        )
    return summarise(sources, games)


def stored_record(data: dict):
    """The game record a store's line holds (a performance, rational or tournament job's, a sweep's CT-Bench
    game), or None when it holds none of these."""
    from games.ctbench.play import GameRecord
    from games.experiments.performance import PerformanceRecord
    from games.experiments.rational import RationalRecord
    from games.tournament.contractsim import MatchRecord

    data = {k: v for k, v in data.items() if k != RECORD_CHECK}
    return next(
        (r for r in (_try(t, data) for t in (PerformanceRecord, RationalRecord, MatchRecord, GameRecord)) if r), None
    )


def _try(model, data):
    try:
        return model.model_validate(data)
    except ValueError:
        return None


def games_of_record(record) -> list[tuple[CheckedContract, Game]]:
    """The games a record holds, each with its contract as coverage judges it: replayed through the monitor when
    the record keeps its events, else read off its weeks and the contingencies it names."""
    from contractlang.interpreter import Rules
    from contractlang.interpreter.events import monitor_events
    from games.contractsim.play import RunRecord

    if hasattr(record, "board_id"):  # a CT-Bench game
        if not record.contract_terms:
            return []
        checked = checked_ir(CTBenchIR.from_terms_json(record.contract_terms))
        events = list(enumerate(monitor_events(record.log), start=1))
        return [(checked, game_of_events(checked, events, "<record>", rules=Rules.named(record.rules)))]
    if isinstance(record, RunRecord):  # a `run --json` record: its own terms
        if record.contract_ir is None:
            return []
        runs, ir = [record], ContractSimIR.from_json_value(record.contract_ir)
    else:  # a job's record; a rational one holds nine games
        runs, ir = (list(record.runs) if hasattr(record, "runs") else [record.run]), record.job.contract
    checked = checked_ir(ir)
    out = []
    for run in runs:
        if run.log:
            events = list(enumerate(monitor_events(run.log), start=1))
            out.append((checked, game_of_events(checked, events, "<record>", floors=run.floors)))
        else:
            firsts = (run.customer_first_violation, run.supplier_first_violation)
            out.append((checked, game_of_weeks(checked, run.weeks, firsts, run.contingencies_fired)))
    return out
