"""Replay an event log through a monitor: the person-facing answer to "was this contract honoured?"."""

from __future__ import annotations

import json

from pydantic import ValidationError

from contractlang.interpreter import compile
from contractlang.interpreter.contractsim import ContractSimMonitor
from contractlang.interpreter.ctbench import CTBenchMonitor, Rules
from contractlang.interpreter.events import (
    CONTRACTSIM_TYPES,
    CTBENCH_TYPES,
    EVENT_ADAPTER,
    EventError,
    extra_fields,
)
from contractlang.ir import ContractIR
from contractlang.vocab import Frozen


class TraceError(Exception):
    """A malformed or out-of-order event log, located as `file:line: message`."""

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


def read_events(raw: bytes, file: str, kind: str) -> list[tuple[int, object]]:
    """Parse a JSON-lines event log for a contract of `kind`; the first problem raises `TraceError`.

    Values are taken strictly: an amount is a JSON integer (never `true`, `"18"` or `18.0`), a key
    appears once, and a tile lies on the board."""
    allowed = CONTRACTSIM_TYPES if kind == "contractsim" else CTBENCH_TYPES
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(file, 1, "the event log is not UTF-8 text") from None
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
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
            raise TraceError(file, number, f"unknown event type {str(etype)[:40]!r} for a {kind} contract; "
                             f"expected one of {', '.join(allowed)}")
        extra = extra_fields(obj)
        if extra:
            raise TraceError(file, number, f"a {etype} with fields beyond the event's ({', '.join(extra[:3])}): a "
                             "line of a game's own log, not a monitor event; `contractlang run CONTRACT --board ID "
                             "--log FILE` (or --env N) writes the events trace replays")
        try:
            events.append((number, EVENT_ADAPTER.validate_json(line, strict=True)))
        except ValidationError as exc:
            raise TraceError(file, number, f"bad {etype} event: {_validation_message(exc)}") from None
    return events


def replay(ir: ContractIR, events: list[tuple[int, object]], file: str = "<events>", rules: Rules | None = None):
    """Feed events to a fresh monitor (a CT-Bench one enforcing `rules`, [CT-24a]); returns the final monitor and
    the per-event steps."""
    monitor = compile(ir, rules)
    steps = []
    for number, event in events:
        try:
            monitor = monitor.apply(event)
        except EventError as exc:
            raise TraceError(file, number, str(exc)) from None
        enforcement = tuple(a.model_dump() for a in getattr(monitor, "last_actions", ()))
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
        "enforcement": [a.model_dump() for a in monitor.actions],
    }
