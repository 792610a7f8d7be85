"""What a translation is checked for beyond the checker: inconsistencies of the text itself ([CS-31]) and
faithfulness of a model's second answer to the text it translates."""

from __future__ import annotations

import re
from collections.abc import Callable

from contractlang.ir import CheckedContract, ContractSimIR
from contractlang.translate.rules import NUMBER_WORDS, money_figures
from contractlang.vocab import Frozen


class Inconsistency(Frozen):
    """A refuted arithmetic check on a checked translation: the totals it names disagree ([CS-31])."""

    check: str
    message: str
    values: dict[str, int] = {}


ExtraCheck = Callable[[CheckedContract], list[Inconsistency]]


def run_checks(contracts, extra_checks: tuple[ExtraCheck, ...]) -> list[Inconsistency]:
    """Every finding of every check on every contract, in that order."""
    return [f for check in extra_checks for contract in contracts for f in check(contract)]


def _counts(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\b\d+\b", text)} | {
        NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in NUMBER_WORDS
    }


def unfaithful_changes(before: CheckedContract, after: CheckedContract, text: str) -> list[str]:
    """What a second answer changed that the text does not state, or the stated totals it dropped.

    A model asked to look again at disagreeing totals may only correct a number it misread, so every
    changed number must be one the text states; deleting a stated total hides the disagreement."""
    if not (isinstance(before.ir, ContractSimIR) and isinstance(after.ir, ContractSimIR)):
        return []
    old, new = before.ir.terms_json(), after.ir.terms_json()
    amounts, counts = money_figures(text) | {0}, _counts(text) | {0}
    reasons = []
    for product, price in new["prices"].items():
        if price != old["prices"].get(product) and price not in amounts:
            reasons.append(f"the price of {product} became ${price:,}, an amount the text never states")
    for week, amount in new["payments"].items():
        if amount != old["payments"].get(week) and amount not in amounts:
            reasons.append(f"the week {week} payment became ${amount:,}, an amount the text never states")
    for week, row in new["deliveries"].items():
        for product, qty in row.items():
            if qty != old["deliveries"].get(week, {}).get(product) and qty not in counts:
                reasons.append(f"week {week} now delivers {qty} {product}, a number the text never states")
    for stated in old["asserts"]:
        if stated not in new["asserts"]:
            reasons.append(f"the stated `{stated}` was dropped or changed")
    return reasons
