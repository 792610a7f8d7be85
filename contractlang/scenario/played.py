"""Which clauses agents triggered in play: game logs and stored game records, replayed through the monitor.

A game whose record keeps its events (a `run --log` file, a record with its log) is replayed event by event and
every clause can be judged. A ContractSim record that keeps only its weeks (the batch engine's games) says which
scheduled entries fell due, whether the termination was given and which contingencies the game fired; a record
that does not name its contingencies leaves them not observable, and the report says so rather than guessing.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from contractlang import check_source
from contractlang.formatter import format_ir
from contractlang.interpreter.trace import header_contract, read_events, read_header, replay
from contractlang.ir import CheckedContract, ContractIR
from contractlang.scenario.clauses import Clause, clauses, fired, terms_key
from contractlang.vocab import Frozen


class Game(Frozen):
    """One game's contribution: the clauses it fired, and those it could show firing at all."""

    contract: str
    fired: frozenset[str]
    observable: frozenset[str]


class PlayedClause(Frozen):
    clause: Clause
    games: int  # games that fired it
    observable_in: int  # games whose record could show it firing

    @property
    def status(self) -> str:
        if self.games:
            return "triggered"
        return "never triggered" if self.observable_in else "not observable in these records"


class PlayedContract(Frozen):
    contract: str
    terms: str  # `terms_key` of its terms
    games: int
    clauses: tuple[PlayedClause, ...]

    def to_json(self) -> dict:
        return {
            "contract": self.contract,
            "games": self.games,
            "triggered": [c.clause.label for c in self.clauses if c.status == "triggered"],
            "never_triggered": [c.clause.label for c in self.clauses if c.status == "never triggered"],
            "not_observable": [c.clause.label for c in self.clauses if c.status.startswith("not")],
            "clauses": [
                {"key": c.clause.key, "clause": c.clause.label, "games": c.games, "observable_in": c.observable_in}
                for c in self.clauses
            ],
        }


class PlayCoverage(Frozen):
    """Per contract, the clauses the games under a path triggered and those none did."""

    sources: tuple[str, ...]
    contracts: tuple[PlayedContract, ...]

    def to_json(self) -> dict:
        return {"sources": list(self.sources), "contracts": [c.to_json() for c in self.contracts]}


def checked_ir(ir: ContractIR) -> CheckedContract:
    """The IR a record keeps, with the clause spans of its canonical text (records keep terms, not source)."""
    return _checked(type(ir), ir.model_dump_json())


@lru_cache(maxsize=256)
def _checked(kind: type, terms: str) -> CheckedContract:
    # the games of a store share a few contracts: each is formatted and checked once
    ir = kind.model_validate_json(terms)
    return check_source(format_ir(ir), f"<{ir.name}>").contracts[0]


def game_of_events(checked: CheckedContract, events, file: str, **rules) -> Game:
    """A game replayed event by event: every clause is observable."""
    monitor, _ = replay(checked.ir, events, file, **rules)
    keys = frozenset(c.key for c in clauses(checked))
    return Game(contract=checked.ir.name, fired=frozenset(fired(checked, monitor)), observable=keys)


def game_of_log(raw: bytes, file: str) -> tuple[CheckedContract, Game] | None:
    """A `run --log` file (its header names the contract); None when `raw` is not one."""
    header = read_header(raw, file)
    if header is None:
        return None
    checked, _ = header_contract(header, file)
    events = read_events(raw, file, checked.ir.kind)
    rules = {"floors": header.floors} if header.floors else {}
    if header.rules:
        from contractlang.interpreter import Rules

        rules["rules"] = Rules.named(header.rules)
    return checked, game_of_events(checked, events, file, **rules)


def game_of_weeks(
    checked: CheckedContract, weeks: Iterable, first_violations: tuple, contingencies: Iterable[str] | None
) -> Game:
    """A ContractSim game known by its weeks (week, role, excluded) and the contingencies it fired: the scheduled
    entries that fell due, the termination when someone breached, and each contingency when the record says which
    fired (`contingencies` None: it does not, and they are not observable)."""
    keys = {c.key for c in clauses(checked)}
    by_week = {w: c for c in clauses(checked) for w in c.weeks}
    fired_keys = {by_week[w.week].key for w in weeks if not w.excluded and w.week in by_week}
    observable = {c.key for c in clauses(checked) if c.kind in ("pay", "deliver", "on_breach")}
    if any(v is not None for v in first_violations) and "on_breach" in observable:
        fired_keys.add("on_breach")
    if contingencies is not None:
        observable = keys
        fired_keys |= set(contingencies) & keys
    return Game(contract=checked.ir.name, fired=frozenset(fired_keys), observable=frozenset(observable))


def summarise(sources: list[str], games: list[tuple[CheckedContract, Game]]) -> PlayCoverage:
    """Per contract (in the order first met; contracts of one name with different terms apart, numbered), how
    many games fired each clause."""
    by_terms: dict[str, tuple[CheckedContract, list[Game]]] = {}
    for checked, game in games:
        by_terms.setdefault(checked.ir.model_dump_json(), (checked, []))[1].append(game)
    names = [checked.ir.name for checked, _ in by_terms.values()]
    contracts = []
    for k, (checked, played) in enumerate(by_terms.values()):
        name = checked.ir.name
        if names.count(name) > 1:
            name += f" #{names[: k + 1].count(name)}"
        rows = tuple(
            PlayedClause(
                clause=c,
                games=sum(c.key in g.fired for g in played),
                observable_in=sum(c.key in g.observable for g in played),
            )
            for c in clauses(checked)
        )
        contracts.append(PlayedContract(contract=name, terms=terms_key(checked.ir), games=len(played), clauses=rows))
    return PlayCoverage(sources=tuple(sources), contracts=tuple(contracts))
