"""Contract prose: every term stated explicitly, clauses in a fixed order, grim trigger last.

This is how the paper's synthetic contracts are written (ContractSim paper, App. C.4): base terms,
then exactly the selected substitution, deduction and rollover clauses, then termination. The rules
translator reads this wording back exactly (a round-trip property test holds it to that).
"""

from __future__ import annotations

from contractlang import build
from contractlang.build import group_weeks
from contractlang.formatter import format_expr, money
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
)
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, Setting

VERBS = {"catering": "delivers", "hotel": "performs", "ai-hosting": "provides"}
PLAYER_TITLES = {"red": "P-Red", "blue": "P-Blue"}
HEADINGS = {
    "catering": "Catering supply agreement",
    "hotel": "Hotel cleaning agreement",
    "ai-hosting": "AI model hosting agreement",
}


def weeks_phrase(weeks: list[int]) -> str:
    if len(weeks) == 1:
        return f"week {weeks[0]}"
    return "weeks " + ", ".join(map(str, weeks[:-1])) + f" and {weeks[-1]}"


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quantities(setting: Setting, qty) -> str:
    return listing([setting.product_count(d, q) for d, q in enumerate(qty)])


def relabel(ir: ContractSimIR, setting_key: str) -> ContractSimIR:
    """The same contract in another setting: names change and money scales by the multipliers' ratio, in the
    stated relations too (their text reprinted by the formatter with the new setting's product names)."""
    src, dst = SETTINGS[ir.setting], SETTINGS[setting_key]
    scale = lambda v: v * dst.multiplier // src.multiplier  # noqa: E731

    def scaled(e: IrExpr) -> IrExpr:
        if isinstance(e, Lit):
            return e.model_copy(update={"value": scale(e.value)}) if e.unit == "money" else e
        if isinstance(e, Neg):
            return e.model_copy(update={"operand": scaled(e.operand)})
        if isinstance(e, BinOp):
            return e.model_copy(update={"left": scaled(e.left), "right": scaled(e.right)})
        return e

    def relabelled(a: AssertTerm) -> AssertTerm:
        left, right = scaled(a.left), scaled(a.right)
        return a.model_copy(
            update={"left": left, "right": right, "text": format_expr(build.relation(a.op, left, right, dst.products))}
        )

    return ir.model_copy(
        update={
            "setting": setting_key,
            "prices": tuple(scale(p) for p in ir.prices),
            "payments": tuple(scale(p) for p in ir.payments),
            "parties": (dst.customer_title, dst.supplier_title)
            if ir.parties == (src.customer_title, src.supplier_title)
            else ir.parties,
            "asserts": tuple(relabelled(a) for a in ir.asserts),
        }
    )


CLAUSE_LABELS = {
    "substitution": "Substitution",
    "payment_deduction": "Payment deduction",
    "rollover": "Rollover",
    "on_breach": "Termination",
}


def clause_sentences(ir: ContractSimIR) -> dict[str, str]:
    """The one sentence of each contingency clause the contract holds, keyed by clause, in the order of ContractSim paper, App. C.4."""
    s = SETTINGS[ir.setting]
    cust, supp = s.customer_title, s.supplier_title
    c = ir.contingencies
    out = {}
    if c.substitution:
        out["substitution"] = (
            f"Above a minimum of {quantities(s, c.substitution.min_qty)} per delivery week, "
            f"the {supp} may replace items with other items at {s.product_count(0, 1)} = "
            f"{s.product_count(1, 2)} = {s.product_count(2, 4)}."
        )
    if c.payment_deduction:
        out["payment_deduction"] = (
            f"If a delivery falls short, the {cust}'s next payment is reduced by the "
            f"contract price of the missing items, provided at least "
            f"{quantities(s, c.payment_deduction.min_qty)} are delivered that week."
        )
    if c.rollover:
        k = c.rollover.max_deficit
        out["rollover"] = (
            f"Missed items carry over to the next delivery week and must be made up there; at "
            f"most {k} missed {'item' if k == 1 else 'items'} of each kind may be carried over, and "
            f"nothing may remain outstanding after week 10."
        )
    if c.grim_trigger:
        out["on_breach"] = (
            "If either party breaches this agreement, the agreement terminates and the other party may stop performing."
        )
    return out


def coverage_clause(c: CoverageTerm) -> str:
    """One Prog-Trading entry in words [CT-22]: an entry without a colour is paid in the tile's colour."""
    chip = f"with a {c.colour} chip" if c.colour else "with a chip of the tile's colour"
    return f"{PLAYER_TITLES[c.giver]} pays for {PLAYER_TITLES[c.receiver]}'s move onto ({c.tile[0]},{c.tile[1]}) {chip}"


def coverage_sentence(c: CoverageTerm) -> str:
    return coverage_clause(c) + "."


def points_sentence(p: PointsTerm) -> str:
    points = "1 point" if p.amount == 1 else f"{p.amount} points"
    return (
        f"If {PLAYER_TITLES[p.giver]} reaches the goal, {PLAYER_TITLES[p.giver]} transfers {points} to "
        f"{PLAYER_TITLES[p.receiver]}."
    )


def expression_words(s: Setting) -> dict[str, str]:
    """The English of each operator and reference of a relation, keyed by its syntax: `render` states a
    relation through it, and the rules translator reads the words back through it."""
    words = {
        "==": "equals",
        "!=": "differs from",
        "<=": "is at most",
        ">=": "is at least",
        "<": "is less than",
        ">": "is more than",
        "+": "plus",
        "-": "minus",
        "*": "times",
        "total pay": "the total payment",
        "total value": "the total value",
        "budget": f"the {s.customer_title}'s budget",
        "capital": f"the {s.supplier_title}'s capital",
    }
    for product, (one, many) in zip(s.products, s.product_nouns):
        words[f"price({product})"] = f"the price of one {one}"
        words[f"total deliver {product}"] = f"the number of {many} delivered"
    return words


def stated_sentence(a: AssertTerm, s: Setting) -> str:
    """`Stated: the total payment equals $125.`: the formatter's text of the relation, in words."""
    return f"Stated: {format_expr(build.relation(a.op, a.left, a.right, s.products), expression_words(s))}."


def _contractsim(ir: ContractSimIR) -> str:
    s = SETTINGS[ir.setting]
    cust, supp = s.customer_title, s.supplier_title
    verb = VERBS[ir.setting]
    lines = [
        f'{HEADINGS[ir.setting]} "{ir.name}"',
        "",
        f'Parties: the {cust} is "{ir.parties[0]}" and the {supp} is "{ir.parties[1]}".',
        "",
    ]
    lines.append("Prices: " + listing([f"{t} {money(p)} each" for t, p in zip(s.product_titles, ir.prices)]) + ".")
    lines.append("")
    deliveries = [
        f"In {weeks_phrase(ws)} the {supp} {verb} {quantities(s, q)}" + (" each week." if len(ws) > 1 else ".")
        for ws, q in group_weeks(ir.deliveries, PRODUCTION_WEEKS)
    ]
    lines.append("Deliveries: " + " ".join(deliveries))
    lines.append("")
    payments = [
        f"In {weeks_phrase(ws)} the {cust} pays {money(m)}" + (" each week." if len(ws) > 1 else ".")
        for ws, m in group_weeks(ir.payments, PAYMENT_WEEKS)
    ]
    lines.append("Payments: " + " ".join(payments))
    lines += [stated_sentence(a, s) for a in ir.asserts]
    for key, sentence in clause_sentences(ir).items():
        lines += ["", f"{CLAUSE_LABELS[key]}: {sentence}"]
    return "\n".join(lines) + "\n"


def _ctbench(ir: CTBenchIR) -> str:
    lines = [
        f'Colored Trails agreement "{ir.name}"',
        "",
        f'Parties: P-Red is "{ir.parties[0]}" and P-Blue is "{ir.parties[1]}".',
        "",
    ]
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
