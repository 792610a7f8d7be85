"""Rules backend: English contract prose → DSL source, deterministically and without guessing.

A term that is missing or stated in two conflicting ways is left out, so the checker reports the
contract parse-incomplete with that field named; nothing is inferred (spec/contractsim.md §11.2, §11.4).
"""

from __future__ import annotations

import re

from contractlang.formatter import money
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, Frozen

NUMBER_WORDS = {"no": 0, "zero": 0, "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_NUM = r"(\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.00)?\b(\s?k\b)?", re.I)

SYNONYMS = {
    "catering": (("margherita pizzas", "margherita pizza", "pizzas", "pizza"),
                 ("pesto pastas", "pesto pasta", "pastas", "pasta"),
                 ("tomato soups", "tomato soup", "soups", "soup")),
    "hotel": (("conference room cleanings", "conference room cleaning", "conference rooms", "conference room"),
              ("king-sized room cleanings", "king-sized room cleaning", "king-sized rooms", "king-sized room",
               "king room cleanings", "king room cleaning", "king rooms", "king room"),
              ("single room cleanings", "single room cleaning", "single rooms", "single room")),
    "ai-hosting": (("fine-tuning jobs", "fine-tuning job", "fine-tuning", "fine tuning"),
                   ("model-hosting", "model hosting"),
                   ("inference jobs", "inference job", "inference")),
}
SETTING_WORDS = {"catering": r"\bcater", "hotel": r"\bhotel|\bcleaning", "ai-hosting": r"\bai\b|hosting|\bgpu\b"}


class RulesResult(Frozen):
    dsl: str
    missing: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _number(text: str) -> int:
    return int(text) if text.isdigit() else NUMBER_WORDS[text.lower()]


def _money_values(text: str) -> list[int]:
    out = []
    for m in _MONEY.finditer(text):
        value = int(m.group(1).replace(",", ""))
        out.append(value * 1000 if m.group(2) else value)
    return out


def _product_pattern(setting: str) -> list[re.Pattern]:
    return [re.compile(r"\b(" + "|".join(re.escape(s) for s in syns) + r")\b", re.I) for syns in SYNONYMS[setting]]


def detect_setting(text: str) -> str | None:
    low = text.lower()
    scores = {}
    for key, pats in ((k, _product_pattern(k)) for k in SYNONYMS):
        scores[key] = sum(len(p.findall(low)) for p in pats) * 2 + len(re.findall(SETTING_WORDS[key], low))
    best = max(scores, key=scores.get)
    ranked = sorted(scores.values(), reverse=True)
    return best if ranked[0] > 0 and ranked[0] > ranked[1] else None


# --- week references -----------------------------------------------------------------

_WEEK_LIST = re.compile(
    r"\bweeks?\s+(\d+(?:\s*(?:-|–|to|through|\.\.)\s*\d+)?(?:\s*(?:,|and|&|or|,\s*and)\s*\d+(?:\s*(?:-|–|to|through|\.\.)\s*\d+)?)*)",
    re.I)
_EVERY = re.compile(r"\b(?:each|every|all(?: the)?|in all)\s+(?:of the\s+)?(?:(production|delivery|payment)\s+)?weeks?\b"
                    r"|\bweekly\b", re.I)
_REMAINING = re.compile(r"\b(?:each|every|all(?: the)?|the)\s+(?:other|later|remaining|subsequent|following)\s+"
                        r"(?:(production|delivery|payment)\s+)?weeks?\b", re.I)
_FINAL = re.compile(r"\b(?:the\s+)?(final|last|first)\s+(?:(production|delivery|payment)\s+)?week\b", re.I)


def _expand(spec: str, kind_weeks: tuple[int, ...]) -> list[int]:
    weeks: list[int] = []
    for part in re.split(r"\s*(?:,\s*and|,|and|&|or)\s*", spec):
        rng = re.match(r"(\d+)\s*(?:-|–|to|through|\.\.)\s*(\d+)$", part.strip())
        if rng:
            lo, hi = int(rng.group(1)), int(rng.group(2))
            weeks += [w for w in kind_weeks if lo <= w <= hi]
        elif part.strip().isdigit():
            weeks.append(int(part))
    return weeks


def _week_refs(clause: str, kind_weeks: tuple[int, ...]) -> tuple[list[int] | None, bool]:
    """(weeks named in the clause, whether it said 'remaining weeks'); None when no week is named."""
    m = _WEEK_LIST.search(clause)
    if m:
        return _expand(m.group(1), kind_weeks), False
    if _REMAINING.search(clause):
        return [], True
    if _EVERY.search(clause):
        return list(kind_weeks), False
    f = _FINAL.search(clause)
    if f:
        return [kind_weeks[0] if f.group(1).lower() == "first" else kind_weeks[-1]], False
    return None, False


_WEEK_SPAN = re.compile(r"\b(?:from\s+)?weeks?\s+(\d+)\s+(?:-|–|to|through|until)\s+weeks?\s+(\d+)", re.I)


def _price_segments(sentence: str, patterns, prices: dict[int, int], conflicts: set[int]) -> str:
    """Record `product ... $X` segments that name no week as prices; return the sentence without them."""
    kept = []
    for seg in re.split(r"(,\s+|;\s*|\s+and\s+)", sentence):
        amounts = _money_values(seg)
        hits = [i for i, p in enumerate(patterns) if p.search(seg)]
        if len(amounts) == 1 and len(hits) == 1 and _week_refs(seg, PRODUCTION_WEEKS)[0] is None:
            i = hits[0]
            if i in prices and prices[i] != amounts[0]:
                conflicts.add(i)
            prices.setdefault(i, amounts[0])
            kept.append(" ")
        else:
            kept.append(seg)
    return "".join(kept)


def _tokens(sentence: str, patterns) -> list[tuple[int, str, object]]:
    """Week references (W), amounts (M) and quantity sets (Q) in order of appearance."""
    sentence = _WEEK_SPAN.sub(lambda m: f"weeks {m.group(1)}-{m.group(2)}", sentence)
    spans: list[tuple[int, int, str, object]] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for rx in (_WEEK_LIST, _REMAINING, _EVERY, _FINAL):
        for m in rx.finditer(sentence):
            if free(m.start(), m.end()):
                taken.append((m.start(), m.end()))
                spans.append((m.start(), m.end(), "W", m.group(0)))
    for m in _MONEY.finditer(sentence):
        if free(m.start(), m.end()):
            spans.append((m.start(), m.end(), "M", _money_values(m.group(0))[0]))
    for i, pat in enumerate(patterns):
        for m in pat.finditer(sentence):
            q = _quantities(sentence[max(0, m.start() - 12): m.end() + 6], [pat])
            if q:
                spans.append((m.start(), m.end(), "q", (i, q[0])))
    spans.sort()
    out: list[tuple[int, str, object]] = []
    for start, _end, kind, value in spans:
        if kind == "q":
            if out and out[-1][1] == "Q" and value[0] not in out[-1][2]:
                out[-1][2][value[0]] = value[1]
                continue
            kind, value = "Q", {value[0]: value[1]}
        out.append((start, kind, value))
    return out


def _pair_schedule(sentence: str, patterns, deliveries: _Schedule, payments: _Schedule) -> None:
    """Pair each amount or quantity set with the week reference next to it, whichever comes first."""
    pending_weeks: str | None = None
    pending_value: tuple[str, object] | None = None
    for _pos, kind, value in _tokens(sentence, patterns):
        if kind == "W":
            if pending_value is not None:
                _assign(pending_value, value, deliveries, payments)
                pending_value = None
            else:
                pending_weeks = value
        else:
            if pending_weeks is not None:
                _assign((kind, value), pending_weeks, deliveries, payments)
                pending_weeks = None
            else:
                pending_value = (kind, value)


def _assign(value: tuple[str, object], week_text: str, deliveries: _Schedule, payments: _Schedule) -> None:
    kind, v = value
    schedule = deliveries if kind == "Q" else payments
    weeks, remaining = _week_refs(week_text, schedule.kind_weeks)
    entry = tuple(v.get(i) for i in range(3)) if kind == "Q" else v
    if remaining:
        schedule.remaining.append(entry)
    elif weeks:
        schedule.put(weeks, entry)


class _Schedule:
    """Week → value, remembering weeks stated twice with different values (those become missing)."""

    def __init__(self, kind_weeks: tuple[int, ...]):
        self.kind_weeks = kind_weeks
        self.values: dict[int, object] = {}
        self.conflicts: set[int] = set()
        self.remaining: list[object] = []

    def put(self, weeks: list[int], value) -> None:
        for w in weeks:
            if w not in self.kind_weeks:
                continue
            if w in self.values and self.values[w] != value:
                self.conflicts.add(w)
            self.values.setdefault(w, value)

    def resolve(self) -> dict[int, object]:
        if len(self.remaining) == 1:
            self.put([w for w in self.kind_weeks if w not in self.values], self.remaining[0])
        return {w: v for w, v in self.values.items() if w not in self.conflicts}


# --- clause recognisers (by meaning) ------------------------------------------------

_SUBSTITUTION = re.compile(r"substitut|\breplac|\bswap|exchange[ds]? .*for", re.I)
_DEDUCTION = re.compile(r"(reduc|deduct|lower|withh[oe]ld)\w*[^.]*\bpayment|payment\w*[^.]*(reduc|deduct|lower)", re.I)
_ROLLOVER = re.compile(r"carr(?:y|ied|ies)\s+(?:over|forward)|roll(?:ed|s)?\s*over|made up|make up|\bcatch up", re.I)
_GRIM = re.compile(r"(terminat|suspend|cancel|end)\w*[^.]*(breach|violat|default|fail)|"
                   r"(breach|violat|default)\w*[^.]*(terminat|suspend|cancel)", re.I)
_STATED = re.compile(r"^\s*stated:\s*(.+?)\s*$", re.I | re.M)
_TOTAL_PAY = re.compile(r"total (?:of (?:all )?(?:the )?)?payments?\s+(?:is|are|of|comes to|amounts? to|equals?|will be)"
                        r"\s+(\$[\d,]+k?)", re.I)
_TOTAL_VALUE = re.compile(r"total (?:contract |order )?value\s+(?:is|of|comes to|amounts? to|equals?)\s+(\$[\d,]+k?)",
                          re.I)


def _quantities(clause: str, patterns: list[re.Pattern]) -> dict[int, int]:
    found: dict[int, int] = {}
    for i, pat in enumerate(patterns):
        for m in pat.finditer(clause):
            before = clause[: m.start()]
            after = clause[m.end():]
            num = re.search(_NUM + r"\s+(?:units?\s+of\s+|x\s+)?$", before, re.I)
            if num is None:
                num = re.match(r"\s*(?:[:x×]|\(\s*x)?\s*(\d+)\b(?!\s*(?:,\d{3}|\)|\s*,\s*\d|\s*\$))", after, re.I)
            if num is None:
                continue
            value = _number(num.group(1))
            if i in found and found[i] != value:
                return {}
            found[i] = value
    return found


_RATE = re.compile(r"\d+\s+[^=,.;]*?=\s*\d+\s+[^=,.;]*?(?:=\s*\d+\s+[^=,.;]*)?(?=[,.;]|$)")


def _minimum_block(clause: str, patterns: list[re.Pattern], products: tuple[str, ...]) -> str:
    """`{ minimum: ... }` when all three minimums are stated (the 4:2:1 exchange rate is not a minimum)."""
    q = _quantities(_RATE.sub("", clause), patterns)
    if len(q) != 3:
        return ""
    return " { minimum: " + ", ".join(f"{products[i]} {q[i]}" for i in range(3)) + " }"


def translate(text: str, name: str = "contract") -> RulesResult:
    """English prose → DSL source; `missing` names every core term the text does not settle."""
    if re.search(r"colou?red trails|\bp-red\b|\bp-blue\b", text, re.I):
        return _translate_ctbench(text, name)
    m = re.search(r'(?:agreement|contract)\s+"([^"\n]*)"', text, re.I)
    contract_name = m.group(1) if m else name
    unquoted = re.sub(r'"[^"\n]*"', '""', text)  # names and labels are never terms
    setting_key = detect_setting(unquoted)
    if setting_key is None:
        return RulesResult(dsl=f'contract "{contract_name}" {{\n}}\n', missing=("setting",),
                           notes=("no product names of Catering, Hotel Cleaning or AI Hosting found",))
    s = SETTINGS[setting_key]
    patterns = _product_pattern(setting_key)
    prices: dict[int, int] = {}
    price_conflicts: set[int] = set()
    deliveries = _Schedule(PRODUCTION_WEEKS)
    payments = _Schedule(PAYMENT_WEEKS)
    asserts: list[str] = [a.strip() for a in _STATED.findall(text)]
    body = re.sub(r'"[^"\n]*"', '""', _STATED.sub("", text))
    clauses: list[str] = []
    sub = ded = roll = grim = ""
    # a line break continues the sentence after ':', ',' or ';', or before a lower-case word or a number
    body = re.sub(r"(?<=[:,;])[ \t]*\n\s*|(?<=[a-z])[ \t]*\n\s*(?=[a-z0-9])", " ", body)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", body):
        if not sentence.strip():
            continue
        if _SUBSTITUTION.search(sentence):
            sub = "substitution" + _minimum_block(sentence, patterns, s.products)
            continue
        if _DEDUCTION.search(sentence):
            ded = "payment_deduction" + _minimum_block(sentence, patterns, s.products)
            continue
        if _ROLLOVER.search(sentence):
            k = re.search(r"(?:at most|up to|no more than|maximum of|max(?:imum)?)\s+" + _NUM, sentence, re.I)
            roll = "rollover" + (f" {{ max_deficit: {_number(k.group(1))} }}" if k else "")
            continue
        if _GRIM.search(sentence):
            grim = "on breach: terminate"
            continue
        for total in _TOTAL_PAY.findall(sentence):
            asserts.append(f"total pay == {money(_money_values(total)[0])}")
        for total in _TOTAL_VALUE.findall(sentence):
            asserts.append(f"total value == {money(_money_values(total)[0])}")
        clauses.append(sentence)
    for sentence in clauses:
        sentence = _price_segments(sentence, patterns, prices, price_conflicts)
        _pair_schedule(sentence, patterns, deliveries, payments)
    for i in price_conflicts:
        prices.pop(i, None)
    delivered = deliveries.resolve()
    paid = payments.resolve()
    return _contractsim_source(contract_name, setting_key, _parties(text, s), prices, delivered, paid, asserts,
                               [sub, ded, roll, grim], deliveries.conflicts | payments.conflicts)


def _parties(text: str, s) -> tuple[str, str] | None:
    found = []
    for title in (s.customer_title, s.supplier_title):
        m = re.search(r"\bthe " + re.escape(title) + r' is "([^"\n]*)"', text)
        found.append(m.group(1) if m else None)
    return tuple(found) if all(f is not None for f in found) else None


def _contractsim_source(name, setting_key, parties, prices, delivered, paid, asserts, contingencies, conflicts):
    s = SETTINGS[setting_key]
    missing = [f"price of {s.products[i]}" for i in range(3) if i not in prices]
    lines = [f'contract "{name}" {{', f"  game {s.game_id}"]
    if parties:
        lines.append(f'  parties {{ customer: "{parties[0]}"  supplier: "{parties[1]}" }}')
    if prices:
        lines.append("  prices { " + "  ".join(f"{s.products[i]}: {money(p)}" for i, p in sorted(prices.items()))
                     + " }")
    lines.append("  deliver {")
    for w in PRODUCTION_WEEKS:
        if w not in delivered:
            missing.append(f"delivery in week {w}")
            continue
        q = delivered[w]
        items = [f"{s.products[i]} {q[i]}" for i in range(3) if q[i] is not None]
        missing += [f"{s.products[i]} delivered in week {w}" for i in range(3) if q[i] is None]
        lines.append(f"    week {w}: " + ", ".join(items))
    lines.append("  }")
    lines.append("  pay {")
    for w in PAYMENT_WEEKS:
        if w not in paid:
            missing.append(f"payment in week {w}")
            continue
        lines.append(f"    week {w}: {money(paid[w])}")
    lines.append("  }")
    lines += [f"  assert {a}" for a in asserts]
    lines += [f"  {c}" for c in contingencies if c]
    lines.append("}")
    notes = tuple(f"week {w} is stated twice with different terms; left out" for w in sorted(conflicts))
    return RulesResult(dsl="\n".join(lines) + "\n", missing=tuple(missing), notes=notes)


_COVER = re.compile(r"P-(Red|Blue) (?:pays for|covers) P-(Red|Blue)'s move onto \(?(\d)\s*,\s*(\d)\)?"
                    r"(?: with a (red|blue|green) chip| with a chip of the tile's colou?r)?", re.I)
_POINTS = re.compile(r"If P-(Red|Blue) reaches the goal, P-(Red|Blue) (?:transfers|pays|gives) " + _NUM
                     + r" points? to P-(Red|Blue)", re.I)


def _translate_ctbench(text: str, name: str) -> RulesResult:
    m = re.search(r'(?:agreement|contract)\s+"([^"\n]*)"', text, re.I)
    lines = [f'contract "{m.group(1) if m else name}" {{', "  game ctbench"]
    p = re.search(r'P-Red is "([^"\n]*)" and P-Blue is "([^"\n]*)"', text)
    if p:
        lines.append(f'  parties {{ red: "{p.group(1)}"  blue: "{p.group(2)}" }}')
    covers = _COVER.findall(text)
    if covers:
        lines.append("  cover {")
        for giver, receiver, r, c, colour in covers:
            chip = f" with {colour.lower()} chip" if colour else ""
            lines.append(f"    ({r},{c}): {giver.lower()} pays for {receiver.lower()}{chip}")
        lines.append("  }")
    points = _POINTS.findall(text)
    if points:
        lines.append("  on goal {")
        for trigger, giver, amount, receiver in points:
            lines.append(f"    {trigger.lower()}: {giver.lower()} transfers {_number(amount)} points to {receiver.lower()}")
        lines.append("  }")
    lines.append("}")
    return RulesResult(dsl="\n".join(lines) + "\n", missing=())
