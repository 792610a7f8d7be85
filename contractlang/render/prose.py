"""Contract prose: every term stated explicitly, clauses in a fixed order, grim trigger last.

This is how the paper's synthetic contracts are written (spec/contractsim.md §12.6): base terms,
then exactly the selected substitution, deduction and rollover clauses, then termination. The rules
translator reads this wording back exactly (a round-trip property test holds it to that).
"""

from __future__ import annotations

from contractlang.formatter import format_assert, group_weeks, money
from contractlang.ir import (
    AssertTerm,
    BinOp,
    ContractIR,
    ContractSimIR,
    CoverageTerm,
    CTBenchIR,
    IrExpr,
    Lit,
    Neg,
    PointsTerm,
    Ref,
)
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
    return listing([setting.product_count(d, q) for d, q in enumerate(qty)])


# Comparison and arithmetic words; the rules translator reads a `Stated:` line back through the same tables.
COMPARISON_WORDS = {"==": "equals", "!=": "differs from", "<=": "is at most", ">=": "is at least",
                    "<": "is less than", ">": "is more than"}
OPERATOR_WORDS = {"+": "plus", "-": "minus", "*": "times"}
REFERENCE_WORDS = {"total_pay": "the total payment", "total_value": "the total value", "budget": "the budget",
                   "capital": "the capital"}


def price_words(setting: Setting, product: int) -> str:
    return f"the price of {setting.product_titles[product]}"


def delivered_words(setting: Setting, product: int) -> str:
    return f"the number of {setting.product_plurals[product]} delivered"


def _precedence(e: IrExpr) -> int:
    if isinstance(e, BinOp):
        return 2 if e.op == "*" else 1
    return 3 if isinstance(e, Neg) else 4


def _words(e: IrExpr, setting: Setting) -> str:
    """An assert expression in English, parenthesised exactly where `format_expr` would be."""
    if isinstance(e, Lit):
        return money(e.value) if e.unit == "money" else str(e.value)
    if isinstance(e, Ref):
        if e.name == "price":
            return price_words(setting, e.product)
        if e.name == "total_deliver":
            return delivered_words(setting, e.product)
        return REFERENCE_WORDS[e.name]
    if isinstance(e, Neg):
        inner = _words(e.operand, setting)
        return f"minus ({inner})" if _precedence(e.operand) < 3 else f"minus {inner}"
    left, right = _words(e.left, setting), _words(e.right, setting)
    if _precedence(e.left) < _precedence(e):
        left = f"({left})"
    if _precedence(e.right) <= _precedence(e):
        right = f"({right})"
    return f"{left} {OPERATOR_WORDS[e.op]} {right}"


def stated(term: AssertTerm, setting: Setting) -> str:
    """`Stated: the total payment equals the total value.`"""
    return f"Stated: {_words(term.left, setting)} {COMPARISON_WORDS[term.op]} {_words(term.right, setting)}."


def _scaled(e: IrExpr, scale) -> IrExpr:
    if isinstance(e, Lit):
        return e.model_copy(update={"value": scale(e.value)}) if e.unit == "money" else e
    if isinstance(e, Neg):
        return e.model_copy(update={"operand": _scaled(e.operand, scale)})
    if isinstance(e, BinOp):
        return e.model_copy(update={"left": _scaled(e.left, scale), "right": _scaled(e.right, scale)})
    return e


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
        "asserts": tuple(_relabelled(a, scale, dst) for a in ir.asserts),
    })


def _relabelled(term: AssertTerm, scale, setting: Setting) -> AssertTerm:
    left, right = _scaled(term.left, scale), _scaled(term.right, scale)
    return term.model_copy(update={"left": left, "right": right,
                                   "text": format_assert(term.op, left, right, setting.products)})


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
                               f"the {supp} may replace items with other items at {s.product_count(0, 1)} = "
                               f"{s.product_count(1, 2)} = {s.product_count(2, 4)}.")
    if c.payment_deduction:
        out["payment_deduction"] = (f"If a delivery falls short, the {cust}'s next payment is reduced by the "
                                    f"contract price of the missing items, provided at least "
                                    f"{quantities(s, c.payment_deduction.min_qty)} are delivered that week.")
    if c.rollover:
        out["rollover"] = (f"Missed items carry over to the next delivery week and must be made up there; at "
                           f"most {c.rollover.max_deficit} missed {'item' if c.rollover.max_deficit == 1 else 'items'} of each kind may be carried over, and "
                           f"nothing may remain outstanding after week 10.")
    if c.grim_trigger:
        out["on_breach"] = ("If either party breaches this agreement, the agreement terminates and the other "
                            "party may stop performing.")
    return out


def coverage_sentence(c: CoverageTerm) -> str:
    chip = f"with a {c.colour} chip" if c.colour else "with a chip of the tile's colour"
    return (f"{PLAYER_TITLES[c.giver]} pays for {PLAYER_TITLES[c.receiver]}'s move onto ({c.tile[0]},{c.tile[1]}) "
            f"{chip}.")


def points_sentence(p: PointsTerm) -> str:
    points = f"{p.amount} point" if p.amount == 1 else f"{p.amount} points"
    return (f"If {PLAYER_TITLES[p.giver]} reaches the goal, {PLAYER_TITLES[p.giver]} transfers {points} to "
            f"{PLAYER_TITLES[p.receiver]}.")


def _contractsim(ir: ContractSimIR) -> str:
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
    lines += [stated(a, s) for a in ir.asserts]
    for key, sentence in clause_sentences(ir).items():
        lines += ["", f"{CLAUSE_LABELS[key]}: {sentence}"]
    return "\n".join(lines) + "\n"


def _ctbench(ir: CTBenchIR) -> str:
    lines = [f'Colored Trails agreement "{ir.name}"', "",
             f'Parties: P-Red is "{ir.parties[0]}" and P-Blue is "{ir.parties[1]}".', ""]
    lines += [coverage_sentence(c) for c in ir.coverage]
    lines += [points_sentence(p) for p in ir.points]
    return "\n".join(lines) + "\n"


def render(ir: ContractIR, setting: str | None = None) -> str:
    """Contract prose for `ir`; `setting` re-labels a ContractSim contract into another setting."""
    if isinstance(ir, CTBenchIR):
        return _ctbench(ir)
    if setting is not None and setting != ir.setting:
        ir = relabel(ir, setting)
    return _contractsim(ir)
