"""Replay an event log through a monitor: the person-facing answer to "was this contract honoured?"."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from contractlang.interpreter import compile
from contractlang.interpreter.contractsim import ContractSimMonitor
from contractlang.interpreter.ctbench import CTBenchMonitor
from contractlang.interpreter.events import CONTRACTSIM_TYPES, CTBENCH_TYPES, EVENT_ADAPTER, EventError
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


def read_events(path: Path, kind: str) -> list[tuple[int, object]]:
    """Parse a JSON-lines event log for a contract of `kind`; the first problem raises `TraceError`."""
    allowed = CONTRACTSIM_TYPES if kind == "contractsim" else CTBENCH_TYPES
    try:
        raw = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise TraceError(str(path), 0, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TraceError(str(path), 1, "the event log is not UTF-8 text") from None
    events = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(str(path), number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise TraceError(str(path), number, "each line must be one JSON object")
        etype = obj.get("type")
        if etype not in allowed:
            raise TraceError(str(path), number, f"unknown event type {etype!r} for a {kind} contract; "
                             f"expected one of {', '.join(allowed)}")
        try:
            events.append((number, EVENT_ADAPTER.validate_python(obj)))
        except ValidationError as exc:
            raise TraceError(str(path), number, f"bad {etype} event: {_validation_message(exc)}") from None
    return events


def replay(ir: ContractIR, events: list[tuple[int, object]], file: str = "<events>"):
    """Feed events to a fresh monitor; returns the final monitor and the per-event steps."""
    monitor = compile(ir)
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
