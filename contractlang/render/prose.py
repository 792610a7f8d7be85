"""Contract prose: every term stated explicitly, clauses in a fixed order, grim trigger last.

This is how the paper's synthetic contracts are written (spec/contractsim.md §12.6): base terms,
then exactly the selected substitution, deduction and rollover clauses, then termination. The rules
translator reads this wording back exactly (a round-trip property test holds it to that).
"""

from __future__ import annotations

from contractlang.build import group_weeks
from contractlang.formatter import money
from contractlang.ir import (AssertTerm, BinOp, ContractIR, ContractSimIR, CoverageTerm, CTBenchIR, IrExpr, Lit,
                             PointsTerm, Ref)
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, Setting

VERBS = {"catering": "delivers", "hotel": "performs", "ai-hosting": "provides"}
PLAYER_TITLES = {"red": "P-Red", "blue": "P-Blue"}
HEADINGS = {"catering": "Catering supply agreement", "hotel": "Hotel cleaning agreement",
            "ai-hosting": "AI model hosting agreement"}


def weeks_phrase(weeks: list[int]) -> str:
    if len(weeks) == 1:
        return f"week {weeks[0]}"
    return "weeks " + ", ".join(map(str, weeks[:-1])) + f" and {weeks[-1]}"


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quantities(setting: Setting, qty) -> str:
    return listing([f"{q} {title}" for q, title in zip(qty, setting.product_titles)])


def relabel(ir: ContractSimIR, setting_key: str) -> ContractSimIR:
    """The same contract in another setting: names change and money scales by the multipliers' ratio."""
    src, dst = SETTINGS[ir.setting], SETTINGS[setting_key]
    scale = lambda v: v * dst.multiplier // src.multiplier  # noqa: E731
    return ir.model_copy(update={
        "setting": setting_key,
        "prices": tuple(scale(p) for p in ir.prices),
        "payments": tuple(scale(p) for p in ir.payments),
        "parties": (dst.customer_title, dst.supplier_title) if ir.parties == (src.customer_title, src.supplier_title)
        else ir.parties,
        "asserts": (),
    })


CLAUSE_LABELS = {"substitution": "Substitution", "payment_deduction": "Payment deduction", "rollover": "Rollover",
                 "on_breach": "Termination"}


def clause_sentences(ir: ContractSimIR) -> dict[str, str]:
    """The one sentence of each contingency clause the contract holds, keyed by clause, in §12.6's order."""
    s = SETTINGS[ir.setting]
    cust, supp = s.customer_title, s.supplier_title
    c = ir.contingencies
    out = {}
    if c.substitution:
        out["substitution"] = (f"Above a minimum of {quantities(s, c.substitution.min_qty)} per delivery week, "
                               f"the {supp} may replace items with other items at 1 {s.product_titles[0]} = "
                               f"2 {s.product_titles[1]} = 4 {s.product_titles[2]}.")
    if c.payment_deduction:
        out["payment_deduction"] = (f"If a delivery falls short, the {cust}'s next payment is reduced by the "
                                    f"contract price of the missing items, provided at least "
                                    f"{quantities(s, c.payment_deduction.min_qty)} are delivered that week.")
    if c.rollover:
        out["rollover"] = (f"Missed items carry over to the next delivery week and must be made up there; at "
                           f"most {c.rollover.max_deficit} missed items of each kind may be carried over, and "
                           f"nothing may remain outstanding after week 10.")
    if c.grim_trigger:
        out["on_breach"] = ("If either party breaches this agreement, the agreement terminates and the other "
                            "party may stop performing.")
    return out


def coverage_clause(c: CoverageTerm) -> str:
    """One Prog-Trading entry in words [CT-22]: an entry without a colour is paid in the tile's colour."""
    chip = f"with a {c.colour} chip" if c.colour else "with a chip of the tile's colour"
    return (f"{PLAYER_TITLES[c.giver]} pays for {PLAYER_TITLES[c.receiver]}'s move onto ({c.tile[0]},{c.tile[1]}) "
            f"{chip}")


def coverage_sentence(c: CoverageTerm) -> str:
    return coverage_clause(c) + "."


def points_sentence(p: PointsTerm) -> str:
    return (f"If {PLAYER_TITLES[p.giver]} reaches the goal, {PLAYER_TITLES[p.giver]} transfers {p.amount} points to "
            f"{PLAYER_TITLES[p.receiver]}.")


_COMPARISONS = {"==": "equals", "!=": "differs from", "<=": "is at most", ">=": "is at least", "<": "is less than",
                ">": "is more than"}
_OPERATORS = {"+": "plus", "-": "minus", "*": "times"}


def _quantity(e: IrExpr, s: Setting) -> str:
    if isinstance(e, Lit):
        return money(e.value) if e.unit == "money" else str(e.value)
    if isinstance(e, Ref):
        title = s.product_titles[e.product] if e.product is not None else ""
        return {"price": f"the price of one {title}", "total_pay": "the total of all payments",
                "total_deliver": f"the number of {title} delivered in all",
                "total_value": "the total value of all deliveries at the contract prices",
                "budget": f"the {s.customer_title}'s budget", "capital": f"the {s.supplier_title}'s capital"}[e.name]
    if isinstance(e, BinOp):
        return f"{_quantity(e.left, s)} {_OPERATORS[e.op]} {_quantity(e.right, s)}"
    return f"minus {_quantity(e.operand, s)}"


def stated_in_words(a: AssertTerm, s: Setting) -> str:
    """A stated relation in words, for a reader (the `Stated:` line of `render` keeps the form the rules
    translator reads back)."""
    return f"{_quantity(a.left, s)} {_COMPARISONS[a.op]} {_quantity(a.right, s)}"


def _contractsim(ir: ContractSimIR, in_words: bool = False) -> str:
    s = SETTINGS[ir.setting]
    cust, supp = s.customer_title, s.supplier_title
    verb = VERBS[ir.setting]
    lines = [f'{HEADINGS[ir.setting]} "{ir.name}"', "",
             f'Parties: the {cust} is "{ir.parties[0]}" and the {supp} is "{ir.parties[1]}".', ""]
    lines.append("Prices: " + listing([f"{t} {money(p)} each" for t, p in zip(s.product_titles, ir.prices)]) + ".")
    lines.append("")
    deliveries = [f"In {weeks_phrase(ws)} the {supp} {verb} {quantities(s, q)}"
                  + (" each week." if len(ws) > 1 else ".") for ws, q in group_weeks(ir.deliveries, PRODUCTION_WEEKS)]
    lines.append("Deliveries: " + " ".join(deliveries))
    lines.append("")
    payments = [f"In {weeks_phrase(ws)} the {cust} pays {money(m)}" + (" each week." if len(ws) > 1 else ".")
                for ws, m in group_weeks(ir.payments, PAYMENT_WEEKS)]
    lines.append("Payments: " + " ".join(payments))
    for a in ir.asserts:
        lines.append(f"Stated: {stated_in_words(a, s)}." if in_words else f"Stated: {a.text}")
    for key, sentence in clause_sentences(ir).items():
        lines += ["", f"{CLAUSE_LABELS[key]}: {sentence}"]
    return "\n".join(lines) + "\n"


def _ctbench(ir: CTBenchIR) -> str:
    lines = [f'Colored Trails agreement "{ir.name}"', "",
             f'Parties: P-Red is "{ir.parties[0]}" and P-Blue is "{ir.parties[1]}".', ""]
    lines += [coverage_sentence(c) for c in ir.coverage]
    lines += [points_sentence(p) for p in ir.points]
    return "\n".join(lines) + "\n"


def render(ir: ContractIR, setting: str | None = None, in_words: bool = False) -> str:
    """Contract prose for `ir`; `setting` re-labels a ContractSim contract into another setting; `in_words`
    states asserts in words (for a reader that is not the rules translator, such as an LLM agent)."""
    if isinstance(ir, CTBenchIR):
        return _ctbench(ir)
    if setting is not None and setting != ir.setting:
        ir = relabel(ir, setting)
    return _contractsim(ir, in_words)
