"""Replay an event log through a monitor: the person-facing answer to "was this contract honoured?"."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from contractlang.errors import BadData
from contractlang.files import MAX_CONTRACT_BYTES, FileError, read_capped
from contractlang.interpreter import compile, event_types
from contractlang.interpreter.contractsim import ContractSimMonitor
from contractlang.interpreter.ctbench import CTBenchMonitor, Rules
from contractlang.interpreter.events import (
    CONTRACTSIM_TYPES,
    CTBENCH_TYPES,
    EVENT_ADAPTER,
    EventError,
    extra_fields,
)
from contractlang.interpreter.rounds import DEFAULT_FLOORS, FLOOR_RULES, FloorsName
from contractlang.ir import CheckedContract, ContractIR
from contractlang.vocab import Frozen

MAX_HEADER_SOURCE = 1 << 20


class TraceError(BadData):
    """A malformed or out-of-order event log, located as `file:line: message`: bad data, wherever it is read."""

    def __init__(self, file: str, line: int, message: str):
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: {message}")


class TraceStep(Frozen):
    line: int
    event: dict
    enforcement: tuple[dict, ...] = ()


def _validation_message(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"] if p not in CONTRACTSIM_TYPES + CTBENCH_TYPES)
    return f"{where}: {first['msg']}" if where else first["msg"]


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    repeated = next((k for k in keys if keys.count(k) > 1), None)
    if repeated is not None:
        raise ValueError(f"the key {repeated!r} appears twice in one event")
    return dict(pairs)


class LogHeader(Frozen):
    """The first line of a `run --log` file: the game the events came from — the contract (its file, SHA-256 and
    text), the environment or board, the seed, the agents by role, the rule set — so the log can be replayed and
    the game rebuilt without being told the contract. A log without it (older ones) still reads."""

    type: Literal["header"] = "header"
    format: Literal[1] = 1
    game: str = Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")  # the game's registered name; its contract's IR kind
    contract: str  # the contract file's path when the game was played
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the contract file's bytes
    source: str | None = Field(default=None, max_length=MAX_HEADER_SOURCE)  # the file's text
    name: str  # the contract's name in that file
    env: int | None = Field(default=None, ge=1, le=6)
    board: int | None = Field(default=None, ge=0)
    board_set: str | None = None
    seed: int = Field(ge=0)
    agents: dict[str, str]  # role → agent (customer, supplier; red, blue)
    mode: str | None = None  # CT-Bench: pfp | trade
    visible: bool | None = None  # CT-Bench: each player sees the other's state
    rules: str | None = None  # CT-Bench: the rule set the game was played and is replayed under [CT-24a]
    guidance: tuple[str, ...] | None = None  # ContractSim LLM agents: the prompt's guidance clauses
    floors: FloorsName | None = None  # ContractSim: the floor rule set other than cs14 it was played under [CS-14a]
    contractlang: str  # the version that wrote the log


def contractlang_version() -> str:
    try:
        return importlib.metadata.version("contractlang")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def log_header(checked: CheckedContract, data: bytes, **game) -> LogHeader:
    """The header of a log of a game played under `checked`, read from the file bytes `data`."""
    return LogHeader(
        game=checked.ir.kind,
        contract=str(Path(checked.file).resolve()),
        sha256=hashlib.sha256(data).hexdigest(),
        source=data.decode("utf-8"),
        name=checked.ir.name,
        contractlang=contractlang_version(),
        **game,
    )


def game_log(header: LogHeader, events: list[dict]) -> str:
    """A log file's text: the header line, then one monitor event per line."""
    return "".join(json.dumps(e) + "\n" for e in [header.model_dump(exclude_none=True), *events])


def read_header(raw: bytes, file: str) -> LogHeader | None:
    """The log's header, or None for a log that starts with an event (written before logs had headers)."""
    first = raw.split(b"\n", 1)[0]
    try:
        obj = json.loads(first, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):
        return None  # read_events reports it
    if not isinstance(obj, dict) or obj.get("type") != "header":
        return None
    try:
        return LogHeader.model_validate_json(first, strict=True)
    except ValidationError as exc:
        raise TraceError(file, 1, f"bad header: {_validation_message(exc)}") from None


def header_contract(header: LogHeader, file: str) -> tuple[CheckedContract, str]:
    """The contract a header names and its text: the text the header holds, else the file at its path; either
    must have the header's SHA-256, so a log is never read against terms other than those it was played under."""
    from contractlang.source import check_source

    text = header.source
    if text is None:
        try:
            data = read_capped(Path(header.contract), MAX_CONTRACT_BYTES)
        except FileError as exc:
            why = str(exc).removeprefix(f"{header.contract}: ").removeprefix("cannot read: ")
            raise TraceError(
                file, 1, f"the header's contract {header.contract} cannot be read ({why}); give the contract file"
            ) from None
    else:
        data = text.encode("utf-8")
    if hashlib.sha256(data).hexdigest() != header.sha256:
        what = "the contract text in the header" if text is not None else header.contract
        raise TraceError(
            file,
            1,
            f"{what} does not match the header's SHA-256 (changed since the game was played); give the contract file",
        )
    checked = check_source(data, header.contract)
    found = [c for c in checked.contracts if c.ir.name == header.name]
    if not checked.ok or not found:
        raise TraceError(
            file,
            1,
            f"the header's contract {header.contract} holds no valid contract {header.name!r}; give the contract file",
        )
    if found[0].ir.kind != header.game:
        raise TraceError(
            file, 1, f"the header names a {header.game} game and {header.name!r} is a {found[0].ir.kind} contract"
        )
    return found[0], data.decode("utf-8", errors="replace")


def read_events(raw: bytes, file: str, kind: str) -> list[tuple[int, object]]:
    """Parse a JSON-lines event log for a contract of `kind`; the first problem raises `TraceError`. A header on
    the first line is checked and skipped.

    Values are taken strictly: an amount is a JSON integer (never `true`, `"18"` or `18.0`), a key
    appears once, and a tile lies on the board."""
    allowed = event_types(kind)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(file, 1, "the event log is not UTF-8 text") from None
    header = read_header(raw, file)
    if header is not None and header.game != kind:
        raise TraceError(file, 1, f"the log is of a {header.game} game, and the contract a {kind} one")
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or (number == 1 and header is not None):
            continue
        try:
            obj = json.loads(line, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as exc:
            raise TraceError(file, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise TraceError(file, number, "invalid event: nested too deeply") from None
        except ValueError as exc:  # duplicate keys, or an integer too long to convert
            raise TraceError(file, number, f"invalid event: {str(exc).splitlines()[0]}") from None
        if not isinstance(obj, dict):
            raise TraceError(file, number, "each line must be one JSON object")
        etype = obj.get("type")
        if etype not in allowed:
            raise TraceError(
                file,
                number,
                f"unknown event type {str(etype)[:40]!r} for a {kind} contract; expected one of {', '.join(allowed)}",
            )
        extra = extra_fields(obj)
        if extra:
            raise TraceError(
                file,
                number,
                f"a {etype} with fields beyond the event's ({', '.join(extra[:3])}): a "
                "line of a game's own log, not a monitor event; `contractlang run CONTRACT --board ID "
                "--log FILE` (or --env N) writes the events trace replays",
            )
        try:
            events.append((number, EVENT_ADAPTER.validate_json(line, strict=True)))
        except ValidationError as exc:
            raise TraceError(file, number, f"bad {etype} event: {_validation_message(exc)}") from None
    return events


def replay(
    ir: ContractIR,
    events: list[tuple[int, object]],
    file: str = "<events>",
    rules: Rules | None = None,
    floors: FloorsName = DEFAULT_FLOORS,
):
    """Feed events to a fresh monitor (a ContractSim one under the floor rule set `floors`, [CS-14a]; a CT-Bench
    one enforcing `rules`, [CT-24a]); returns the final monitor and the per-event steps."""
    monitor = compile(ir, rules, FLOOR_RULES[floors])
    steps = []
    for number, event in events:
        try:
            monitor = monitor.apply(event)
        except EventError as exc:
            raise TraceError(file, number, str(exc)) from None
        enforcement = tuple(_said(a) for a in getattr(monitor, "last_actions", ()))
        steps.append(TraceStep(line=number, event=event.model_dump(), enforcement=enforcement))
    return monitor, steps


def trace_json(monitor: ContractSimMonitor | CTBenchMonitor, steps: list[TraceStep]) -> dict:
    if isinstance(monitor, ContractSimMonitor):
        verdict = monitor.verdict()
        return {
            "contract": monitor.contract.ir.name,
            "weeks": [s.model_dump() for s in monitor.weeks],
            "complete": monitor.finished,
            "customer_first_violation": monitor.customer_first_violation,
            "supplier_first_violation": monitor.supplier_first_violation,
            "verdict": verdict.model_dump(),
        }
    return {
        "contract": monitor.ir.name,
        "steps": [s.model_dump() for s in steps],
        "forfeited": list(monitor.forfeited),
        "finished": list(monitor.finished),
        "ended": monitor.ended,
        "enforcement": [_said(a) for a in monitor.actions],
    }


def _said(action) -> dict:
    """An enforcement event as a report shows it: its fields and its own words (`text`)."""
    return {**action.model_dump(), "text": action.describe()}
