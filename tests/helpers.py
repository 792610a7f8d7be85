"""Small builders for ContractSim contracts and event streams used across tests."""

from __future__ import annotations

from contractlang.interpreter import compile
from contractlang.interpreter.events import Delivery, Payment, WeekEnd
from contractlang.ir import (
    Contingencies,
    ContractSimIR,
    DeductionTerms,
    RolloverTerms,
    SubstitutionTerms,
)
from contractlang.vocab import PAYMENT_WEEKS, SETTINGS

PRODUCTS = SETTINGS["catering"].products


def contract(q=(1, 1, 1), prices=(10, 5, 3), payments=(18, 18, 18, 18, 18, 0), *, sub=None, pd=None, ro=None,
             grim=True, schedule=None) -> ContractSimIR:
    """A Catering contract; `sub`/`pd` are minimum triples (or True for the default), `ro` the max deficit."""
    c = Contingencies(
        substitution=SubstitutionTerms(min_qty=(1, 1, 1) if sub is True else sub) if sub else None,
        payment_deduction=DeductionTerms(min_qty=(1, 1, 1) if pd is True else pd) if pd else None,
        rollover=RolloverTerms(max_deficit=ro) if ro is not None else None,
        grim_trigger=grim,
    )
    return ContractSimIR(name="t", setting="catering", parties=("Customer", "Caterer"), prices=prices,
                         deliveries=schedule or (q,) * 5, payments=payments, contingencies=c)


def events(payments: dict[int, int], deliveries: dict[int, tuple[int, int, int]]):
    """Events for all 11 weeks: given payments and deliveries (absent weeks pay / deliver nothing)."""
    out = []
    for w in range(1, 12):
        if w in PAYMENT_WEEKS:
            out.append(Payment(week=w, amount=payments.get(w, 0)))
        else:
            for product, qty in zip(PRODUCTS, deliveries.get(w, (0, 0, 0))):
                out.append(Delivery(week=w, product=product, qty=qty))
        out.append(WeekEnd(week=w))
    return out


def run(ir: ContractSimIR, evs):
    m = compile(ir)
    for e in evs:
        m = m.apply(e)
    return m


def week(monitor, w):
    return next(s for s in monitor.weeks if s.week == w)


def run_cli(*args: str, cwd=None, timeout: float = 600, env=None):
    """`python -m contractlang ARGS` in `cwd` (with environment `env`, default this one's), output captured as text."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "contractlang", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=env)


def assert_each_fails_in_one_line(cli, cases) -> None:
    """Every (args, message) case exits 1 with `message` on stderr and no traceback. Every other case runs again
    with --json: one handler writes every command's errors, so a sample shows its JSON form."""
    import json

    for i, (args, message) in enumerate(cases):
        proc = cli(*args)
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        if i % 2 == 0:
            as_json = json.loads(cli(*args, "--json").stdout)
            assert as_json["ok"] is False and message in as_json["error"], (args, as_json)
