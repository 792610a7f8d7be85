"""Rules backend: English contract prose → DSL source, deterministically and without guessing.

A term that is missing or stated in two conflicting ways is left out, so the checker reports the
contract parse-incomplete with that field named; nothing is inferred (ContractSim paper, App. C.3).
Numbers are copied as written: a text whose totals disagree is translated as it stands and flagged by
the arithmetic checks downstream, never adjusted here ([CS-31]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from contractlang import ast, build
from contractlang.diagnostics import ContractError
from contractlang.formatter import format_contracts, money
from contractlang.ir import Lit, Ref
from contractlang.parser import parse_expression
from contractlang.render.prose import expression_words
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS, Frozen, Setting

NUMBER_WORDS = {
    "no": 0,
    "zero": 0,
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUM = r"(\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
# a bare count (per-product lines): digits or a number word, never the articles "a" / "an" / "no"
_COUNT = (
    r"(\d+|" + "|".join(sorted((w for w in NUMBER_WORDS if w not in ("a", "an", "no")), key=len, reverse=True)) + r")"
)
_AMOUNT = r"\$\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?k\b)?"
_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s?k\b)?", re.I)

SYNONYMS = {
    "catering": (
        ("margherita pizzas", "margherita pizza", "pizzas", "pizza"),
        ("pesto pastas", "pesto pasta", "pastas", "pasta"),
        ("tomato soups", "tomato soup", "soups", "soup"),
    ),
    "hotel": (
        ("conference room cleanings", "conference room cleaning", "conference rooms", "conference room"),
        (
            "king-sized room cleanings",
            "king-sized room cleaning",
            "king-sized rooms",
            "king-sized room",
            "king room cleanings",
            "king room cleaning",
            "king rooms",
            "king room",
        ),
        ("single room cleanings", "single room cleaning", "single rooms", "single room"),
    ),
    "ai-hosting": (
        ("fine-tuning jobs", "fine-tuning job", "fine-tuning", "fine tuning"),
        ("model-hosting jobs", "model-hosting job", "model-hosting", "model hosting"),
        ("inference jobs", "inference job", "inference"),
    ),
}
SETTING_WORDS = {"catering": r"\bcater", "hotel": r"\bhotel|\bcleaning", "ai-hosting": r"\bai\b|hosting|\bgpu\b"}
# words that follow a quantity, never a week number: "weeks 2 and 4, 2 jobs" lists weeks 2 and 4 only
_UNIT_WORDS = (
    "jobs",
    "job",
    "units",
    "unit",
    "cleanings",
    "cleaning",
    "items",
    "item",
    "portions",
    "portion",
    "servings",
    "serving",
    "of",
    "x",
    "in",
    "every",
    "each",
    "per",
    "for",
    "during",
)
_AFTER_QUANTITY = (
    r"(?!\s*(?:"
    + "|".join(
        sorted(
            {re.escape(s.split()[0].split("-")[0]) for syns in SYNONYMS.values() for group in syns for s in group}
            | set(_UNIT_WORDS),
            key=len,
            reverse=True,
        )
    )
    + r")\b)"
)


class RulesResult(Frozen):
    dsl: str
    missing: tuple[str, ...]
    notes: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()  # statements that look like terms but could not be read (never silently dropped)
    error: str | None = None  # why the text could not be translated at all


def _number(text: str) -> int:
    return int(text) if text.isdigit() else NUMBER_WORDS[text.lower()]


def _money_value(m: re.Match) -> int | None:
    """An amount in whole dollars ($9k = 9,000; $1.5k = 1,500); None when it is not a whole number."""
    try:
        amount = Decimal(m.group(1).replace(",", "") + (m.group(2) or ""))
    except InvalidOperation:
        return None
    if m.group(3):
        amount *= 1000
    return int(amount) if amount == amount.to_integral_value() else None


def _money_values(text: str) -> list[int | None]:
    return [_money_value(m) for m in _MONEY.finditer(text)]


def money_figures(text: str) -> set[int]:
    """Every whole-dollar amount the text states, in the text's own dollars."""
    return {v for v in _money_values(text) if v is not None}


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

_LIST_ITEM = r"\d+(?!\d)(?:\s*(?:-|–|to|through|\.\.)\s*\d+(?!\d))?"
_WEEK_LIST = re.compile(
    r"\bweeks?\s+(" + _LIST_ITEM + r"(?:\s*(?:,\s*and|,|and|&|or)\s*" + _LIST_ITEM + _AFTER_QUANTITY + r")*)", re.I
)
_EVERY = re.compile(
    r"\b(?:each|every|all(?: the)?|in all)\s+(?:of\s+the\s+)?(?:(?:\d+|two|three|four|five|six)\s+)?"
    r"(?:(production|delivery|payment)\s+)?weeks?\b|\bweekly\b"
    r"|\bper\s+(?:production|delivery|payment)\s+week\b",
    re.I,
)
_REMAINING = re.compile(
    r"\b(?:each|every|all(?: the)?|the)\s+(?:other|later|remaining|subsequent|following)\s+"
    r"(?:(production|delivery|payment)\s+)?weeks?\b",
    re.I,
)
_FINAL = re.compile(r"\b(?:the\s+)?(final|last|first)\s+(?:(production|delivery|payment)\s+)?week\b", re.I)
_UPFRONT = re.compile(r"\b(?:up[- ]?front|in advance|on signing|at signing)\b", re.I)
_WEEK_WORDS = re.compile(r"\bweek\s+(\d+)((?:\s*(?:,\s*and|,|and|&|or)\s*week\s+\d+)+)", re.I)
_WEEK_SPAN = re.compile(r"\b(?:from\s+)?weeks?\s+(\d+)\s+(?:-|–|to|through|until)\s+weeks?\s+(\d+)", re.I)


def _normalise_weeks(sentence: str) -> str:
    """'week 2 and week 4' → 'weeks 2 and 4'; 'from week 4 to week 10' → 'weeks 4-10'."""
    sentence = _WEEK_WORDS.sub(
        lambda m: "weeks " + m.group(1) + re.sub(r"\bweek\s+", "", m.group(2), flags=re.I), sentence
    )
    return _WEEK_SPAN.sub(lambda m: f"weeks {m.group(1)}-{m.group(2)}", sentence)


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
    if _UPFRONT.search(clause):
        return [kind_weeks[0]], False
    return None, False


# --- shares of the contract total ----------------------------------------------------------


@dataclass(frozen=True)
class Share:
    """A payment stated as part of the contract total; `part` None means 'the rest'."""

    part: Fraction | None
    wording: str


_SHARE = re.compile(
    r"\b(?:(half|one half|a half|a third|one third|a quarter|one quarter|(\d{1,3})\s?(?:%|per\s?cent))\s+of\s+the\s+"
    r"(?:contract(?:'s)?\s+)?(?:total|value|price)(?:\s+(?:price|value|amount))?"
    r"|(?:the\s+)?(?:other|remaining|second)\s+half|the\s+(?:rest|remainder|balance))\b",
    re.I,
)
_SHARE_PARTS = {
    "half": Fraction(1, 2),
    "one half": Fraction(1, 2),
    "a half": Fraction(1, 2),
    "a third": Fraction(1, 3),
    "one third": Fraction(1, 3),
    "a quarter": Fraction(1, 4),
    "one quarter": Fraction(1, 4),
}


def _share(m: re.Match) -> Share:
    text = m.group(0)
    if m.group(1):
        part = Fraction(int(m.group(2)), 100) if m.group(2) else _SHARE_PARTS[m.group(1).lower()]
    elif re.search(r"half", text, re.I):
        part = Fraction(1, 2)
    else:
        part = None
    return Share(part=part, wording=text.lower())


_NOTHING_DUE = re.compile(r"\bnothing\s+(?:is\s+|will\s+be\s+)?(?:due|paid|payable|owed)\b|\bno\s+payments?\b", re.I)


# --- a reading in progress ------------------------------------------------------------------


class _Schedule:
    """(week, key) → value, remembering entries stated twice with different values (those become missing).

    Payments use the key None; deliveries use the product index, so per-product sentences and tables
    fill a week's row product by product."""

    def __init__(self, kind_weeks: tuple[int, ...]):
        self.kind_weeks = kind_weeks
        self.values: dict[tuple[int, int | None], object] = {}
        self.conflicts: set[tuple[int, int | None]] = set()
        self.remaining: list[dict] = []

    def put(self, weeks: list[int], entry: dict) -> None:
        for w in weeks:
            if w not in self.kind_weeks:
                continue
            for key, value in entry.items():
                if (w, key) in self.values and self.values[(w, key)] != value:
                    self.conflicts.add((w, key))
                self.values.setdefault((w, key), value)

    def resolve(self) -> dict[tuple[int, int | None], object]:
        if len(self.remaining) == 1:
            entry = self.remaining[0]
            self.put([w for w in self.kind_weeks if not any((w, k) in self.values for k in entry)], entry)
        return {k: v for k, v in self.values.items() if k not in self.conflicts}

    def conflicting_weeks(self) -> set[int]:
        return {w for w, _ in self.conflicts}


class _Reading:
    def __init__(self, setting_key: str):
        self.setting = SETTINGS[setting_key]
        self.patterns = _product_pattern(setting_key)
        self.prices: dict[int, int | None] = {}
        self.price_conflicts: set[int] = set()
        self.deliveries = _Schedule(PRODUCTION_WEEKS)
        self.payments = _Schedule(PAYMENT_WEEKS)
        self.stated_totals: list[tuple[str, int]] = []
        self.notes: list[str] = []

    def set_price(self, product: int, amount: int | None) -> None:
        if product in self.prices and self.prices[product] != amount:
            self.price_conflicts.add(product)
        self.prices.setdefault(product, amount)


def _price_segments(sentence: str, reading: _Reading) -> str:
    """Record `product ... $X` segments that name no week as prices; return the sentence without them."""
    kept = []
    for seg in re.split(r"(,\s+|;\s*|\s+and\s+)", sentence):
        amounts = _money_values(seg)
        hits = [i for i, p in enumerate(reading.patterns) if p.search(seg)]
        if (
            len(amounts) == 1
            and len(hits) == 1
            and _week_refs(seg, PRODUCTION_WEEKS)[0] is None
            and not _SHARE.search(seg)
        ):
            reading.set_price(hits[0], amounts[0])
            kept.append(" ")
        else:
            kept.append(seg)
    return "".join(kept)


def _tokens(sentence: str, patterns, product: int | None = None) -> list[tuple[int, str, object]]:
    """Week references (W), amounts (M) and quantity sets (Q) in order of appearance.

    With `product` set (a line about one product), every bare count outside a week reference is a
    quantity of that product."""
    spans: list[tuple[int, int, str, object]] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for rx in (_WEEK_LIST, _REMAINING, _EVERY, _FINAL, _UPFRONT):
        for m in rx.finditer(sentence):
            if free(m.start(), m.end()):
                taken.append((m.start(), m.end()))
                spans.append((m.start(), m.end(), "W", m.group(0)))
    for m in _SHARE.finditer(sentence):
        if free(m.start(), m.end()):
            taken.append((m.start(), m.end()))
            spans.append((m.start(), m.end(), "M", _share(m)))
    for m in _NOTHING_DUE.finditer(sentence):
        if free(m.start(), m.end()):
            spans.append((m.start(), m.end(), "M", 0))
    for m in _MONEY.finditer(sentence):
        if free(m.start(), m.end()):
            taken.append((m.start(), m.end()))
            spans.append((m.start(), m.end(), "M", _money_value(m)))
    if product is not None:
        for m in re.finditer(r"\b" + _COUNT + r"\b", sentence, re.I):
            if free(m.start(), m.end()):
                spans.append((m.start(), m.end(), "q", (product, _number(m.group(1)))))
    else:
        for i, pat in enumerate(patterns):
            for m in pat.finditer(sentence):
                q = _quantities(sentence[max(0, m.start() - 12) : m.end() + 6], [pat])
                if q:
                    spans.append((m.start(), m.end(), "q", (i, q[0])))
    spans.sort()
    out: list[tuple[int, str, object]] = []
    for k, (start, end, kind, value) in enumerate(spans):
        if kind == "W" and _same_reference(sentence, spans[k - 1] if k else None, (start, end, kind, value)):
            if _WEEK_LIST.fullmatch(value):  # the explicit weeks win over 'up front' or 'per payment week'
                out[-1] = (start, kind, value)
            continue
        if kind == "q":
            if product is None and out and out[-1][1] == "Q" and value[0] not in out[-1][2]:
                out[-1][2][value[0]] = value[1]
                continue
            kind, value = "Q", {value[0]: value[1]}
        out.append((start, kind, value))
    return out


_SAME_GAP = re.compile(r"[\s,(]*(?:in|on|at|i\.e\.|namely|that is)?[\s,(]*")


def _same_reference(sentence: str, before, current) -> bool:
    """'up front in week 1', 'the last week (week 11)': two adjacent references to the same weeks."""
    if before is None or before[2] != "W":
        return False
    return bool(_SAME_GAP.fullmatch(sentence[before[1] : current[0]])) and not (
        _WEEK_LIST.fullmatch(before[3]) and _WEEK_LIST.fullmatch(current[3])
    )


def _pair_schedule(tokens, reading: _Reading) -> None:
    """Pair each amount or quantity set with the week reference next to it, whichever comes first."""
    pending_weeks: str | None = None
    pending_value: tuple[str, object] | None = None
    for _pos, kind, value in tokens:
        if kind == "W":
            if pending_value is not None:
                _assign(pending_value, value, reading)
                pending_value = None
            else:
                pending_weeks = value
        else:
            if pending_weeks is not None:
                _assign((kind, value), pending_weeks, reading)
                pending_weeks = None
            else:
                pending_value = (kind, value)


def _assign(value: tuple[str, object], week_text: str, reading: _Reading) -> None:
    kind, v = value
    schedule = reading.deliveries if kind == "Q" else reading.payments
    weeks, remaining = _week_refs(week_text, schedule.kind_weeks)
    entry = v if kind == "Q" else {None: v}
    if remaining:
        schedule.remaining.append(entry)
    elif weeks:
        schedule.put(weeks, entry)


# --- tables ---------------------------------------------------------------------------------

_MD_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_MD_RULE = re.compile(r"^[\s|:\-]+$")


def _cells(line: str) -> list[str]:
    m = _MD_ROW.match(line)
    if m:
        return [c.strip() for c in m.group(1).split("|")]
    return [c.strip() for c in re.split(r"\t+|\s{2,}", line.strip())]


def _column(header: str, patterns) -> tuple[str, int | None]:
    """What a header cell names: a week column, a product, an amount, or one week ('Week 4')."""
    h = header.strip().lower()
    one_week = re.fullmatch(r"week\s*(\d+)", h)
    if one_week:
        return "week-n", int(one_week.group(1))
    if re.fullmatch(r"(?:(?:delivery|production|payment)\s+)?weeks?", h):
        return "week", None
    hits = [i for i, p in enumerate(patterns) if p.search(h)]
    if len(hits) == 1:
        return "product", hits[0]
    if re.search(r"amount|payment|\bpay|\bdue\b|\$", h):
        return "amount", None
    return "other", None


def _cell_count(cell: str) -> int | None:
    c = cell.strip().lower()
    if c.isdigit():
        return int(c)
    return NUMBER_WORDS.get(c) if c in NUMBER_WORDS and c not in ("a", "an") else None


def _cell_money(cell: str) -> int | None:
    values = _money_values(cell)
    if len(values) == 1:
        return values[0]
    return 0 if re.fullmatch(r"\s*(?:0|nothing|none)\s*", cell, re.I) else None


def _table_cell(reading: _Reading, week: int, kind: str, index: int | None, cell: str) -> None:
    """One cell of a schedule table: a product's quantity or the week's payment; blank means not stated."""
    if kind == "product":
        value, schedule, key, what = _cell_count(cell), reading.deliveries, index, "a quantity"
    elif kind == "amount":
        value, schedule, key, what = _cell_money(cell), reading.payments, None, "an amount"
    else:
        return
    if value is not None:
        schedule.put([week], {key: value})
    elif cell.strip():
        reading.notes.append(f"week {week}: could not read {cell.strip()!r} as {what}")


def _read_table(rows: list[list[str]], reading: _Reading) -> bool:
    """Read a weeks × products (or products × weeks) table into the schedules; False if it is not one."""
    header, body = rows[0], rows[1:]
    columns = [_column(h, reading.patterns) for h in header]
    if columns and columns[0][0] == "week":
        for row in body:
            week = re.search(r"\d+", row[0]) if row else None
            if week is not None:
                for (kind, index), cell in zip(columns[1:], row[1:]):
                    _table_cell(reading, int(week.group(0)), kind, index, cell)
        return any(kind in ("product", "amount") for kind, _ in columns[1:])
    weeks = [index if kind == "week-n" else None for kind, index in columns[1:]]
    if not any(w is not None for w in weeks):
        return False
    for row in body:
        kind, index = _column(row[0], reading.patterns) if row else ("other", None)
        for w, cell in zip(weeks, row[1:]):
            if w is not None:
                _table_cell(reading, w, kind, index, cell)
    return True


def _extract_tables(text: str, reading: _Reading) -> str:
    """Read every markdown or column-aligned table about weeks; return the text without those lines."""
    lines = text.split("\n")
    keep = [True] * len(lines)
    i = 0
    while i < len(lines):
        markdown = bool(_MD_ROW.match(lines[i]))
        plain = not markdown and re.search(r"\bweek", lines[i], re.I) and len(_cells(lines[i])) >= 2
        if not (markdown or plain):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and (
            bool(_MD_ROW.match(lines[j]))
            if markdown
            else len(_cells(lines[j])) == len(_cells(lines[i])) and lines[j].strip()
        ):
            j += 1
        rows = [_cells(line) for line in lines[i:j] if not _MD_RULE.match(line)]
        if len(rows) >= 2 and _read_table(rows, reading):
            keep[i:j] = [False] * (j - i)
        i = j
    return "\n".join(line for line, k in zip(lines, keep) if k)


# --- clause recognisers (by meaning) ------------------------------------------------

_SUBSTITUTION = re.compile(r"substitut|\breplac|\bswap|exchange[ds]? .*for", re.I)
_DEDUCTION = re.compile(r"(reduc|deduct|lower|withh[oe]ld)\w*[^.]*\bpayment|payment\w*[^.]*(reduc|deduct|lower)", re.I)
_ROLLOVER = re.compile(r"carr(?:y|ied|ies)\s+(?:over|forward)|roll(?:ed|s)?\s*over|made up|make up|\bcatch up", re.I)
_GRIM = re.compile(
    r"(terminat|suspend|cancel|end)\w*[^.]*(breach|violat|default|fail)|"
    r"(breach|violat|default)\w*[^.]*(terminat|suspend|cancel|\bends?\b|\bended\b|\bis over\b)",
    re.I,
)
# a sentence about breach, termination or penalties that no recogniser above reads (the language has no
# penalty clause): left unread and quoted, never dropped and never read as a delivery or a payment
_REMEDY = re.compile(
    r"breach|violat|\bdefault|terminat|\bcancel|\bsuspend|penalt|\bfine[sd]?\b(?!-)|forfeit|"
    r"damages|compensat|\bliab|\bsue\b|\bvoid\b",
    re.I,
)
_PENALTY = re.compile(r"penalt|\bfine[sd]?\b(?!-)|forfeit|damages|compensat|\bliab", re.I)
_STATED = re.compile(r"^\s*stated:\s*(.+?)\s*$", re.I | re.M)
_VERB = r"\s*(?:[:=]|is|are|of|comes to|amounts? to|equals?|will be)?\s*"
_TOTAL_PAY = re.compile(
    r"(?:total (?:of (?:all )?(?:the )?)?payments?|(?:stated\s+)?total(?:\s+amount)?\s+"
    r"(?:payable|due|to be paid)|\bcontract\s+total|\bpayments?\s+total)" + _VERB + r"(" + _AMOUNT + r")",
    re.I,
)
_TOTAL_VALUE = re.compile(r"total (?:contract |order )?value" + _VERB + r"(" + _AMOUNT + r")", re.I)


def _quantities(clause: str, patterns: list[re.Pattern]) -> dict[int, int]:
    found: dict[int, int] = {}
    for i, pat in enumerate(patterns):
        for m in pat.finditer(clause):
            before = clause[: m.start()]
            after = clause[m.end() :]
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


def _minimum(clause: str, patterns: list[re.Pattern], products: tuple[str, ...]) -> dict[str, int] | None:
    """The clause's minimums when all three are stated (the 4:2:1 exchange rate is not a minimum)."""
    q = _quantities(_RATE.sub("", clause), patterns)
    if len(q) != 3:
        return None
    return {products[i]: q[i] for i in range(3)}


def _single_product_line(sentence: str, patterns) -> tuple[int, str] | None:
    """'Fine-tuning: 1 job in weeks 2 and 4, 2 jobs in weeks 6, 8 and 10' → (product, the rest)."""
    m = re.match(r"\s*(?:[-*•]\s*)?([^:]{1,60}?)\s*:\s*(.+)$", sentence, re.S)
    if m is None or _MONEY.search(m.group(2)):
        return None
    hits = [i for i, p in enumerate(patterns) if p.search(m.group(1))]
    if len(hits) != 1 or any(p.search(m.group(2)) for p in patterns):
        return None
    return hits[0], m.group(2)


_NAME = re.compile(r'(?:agreement|contract|deal|order)\s+"([^"\n]*)"', re.I)


def translate(text: str, name: str = "contract") -> RulesResult:
    """English prose → DSL source; `missing` names every core term the text does not settle."""
    if _is_ctbench(text):
        return _translate_ctbench(text, name)
    m = _NAME.search(text)
    contract_name = m.group(1) if m else name
    unquoted = re.sub(r'"[^"\n]*"', '""', text)  # names and labels are never terms
    setting_key = detect_setting(unquoted)
    if setting_key is None:
        return RulesResult(
            dsl="",
            missing=("setting",),
            error="the text names no product of Catering, Hotel "
            "Cleaning or AI Hosting and no CT-Bench tile: not a contract the rules backend can read",
        )
    reading = _Reading(setting_key)
    s = reading.setting
    asserts, unread = _stated_relations(text, s)
    body = _extract_tables(re.sub(r'"[^"\n]*"', '""', _STATED.sub("", text)), reading)
    clauses: list[str] = []
    sub = ded = roll = grim = None
    # a line break continues the sentence after ':', ',' or ';', or before a lower-case word or a number
    body = re.sub(r"(?<=[:,;])[ \t]*\n(?![ \t]*[-*•])\s*|(?<=[a-z])[ \t]*\n\s*(?=[a-z0-9])", " ", body)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", body):
        if not sentence.strip():
            continue
        if _SUBSTITUTION.search(sentence):
            sub = build.substitution(_minimum(sentence, reading.patterns, s.products))
            continue
        if _DEDUCTION.search(sentence):
            if _MONEY.search(sentence):  # the clause deducts the missing items' price (ContractSim paper, App. C.1)
                unread.append(
                    "could not read (a deduction of a stated amount; the language deducts the missing items' "
                    f"price): {sentence.strip()}"
                )
            else:
                ded = build.payment_deduction(_minimum(sentence, reading.patterns, s.products))
            continue
        if _ROLLOVER.search(sentence):
            k = re.search(r"(?:at most|up to|no more than|maximum of|max(?:imum)?)\s+" + _NUM, sentence, re.I)
            roll = build.rollover(_number(k.group(1)) if k else None)
            continue
        if _GRIM.search(sentence):
            grim = build.on_breach()
        if _PENALTY.search(sentence) or (_REMEDY.search(sentence) and not _GRIM.search(sentence)):
            unread.append(f"could not read (a breach, termination or penalty term): {sentence.strip()}")
            continue
        if grim is not None and _GRIM.search(sentence):
            continue
        for rx, total in ((_TOTAL_PAY, "total pay"), (_TOTAL_VALUE, "total value")):
            for found in rx.finditer(sentence):
                amount = _money_values(found.group(1))[0]
                if amount is None:
                    reading.notes.append(
                        f"the stated {total} {found.group(1)} is not a whole number of dollars; left out"
                    )
                else:
                    reading.stated_totals.append((total, amount))
            sentence = rx.sub(" ", sentence)
        clauses.append(_normalise_weeks(sentence))
    for sentence in clauses:
        single = _single_product_line(sentence, reading.patterns)
        if single is not None:
            _pair_schedule(_tokens(single[1], reading.patterns, product=single[0]), reading)
            continue
        sentence = _price_segments(sentence, reading)
        _pair_schedule(_tokens(sentence, reading.patterns), reading)
    asserts += [
        build.compare("==", Ref(name=_TOTAL_REFS[total]), Lit(value=amount, unit="money"), s.products)
        for total, amount in reading.stated_totals
    ]
    prices = {i: p for i, p in reading.prices.items() if i not in reading.price_conflicts and p is not None}
    for i, p in reading.prices.items():
        if p is None:
            reading.notes.append(f"the price of {s.products[i]} is not a whole number of dollars; left out")
    delivered = {}
    for (w, product), qty in reading.deliveries.resolve().items():
        delivered.setdefault(w, {})[product] = qty
    paid = _settle_shares({w: v for (w, _), v in reading.payments.resolve().items()}, prices, delivered, reading)
    return _contractsim_source(
        contract_name,
        setting_key,
        _parties(text, s),
        prices,
        delivered,
        paid,
        [*asserts, *(c for c in (sub, ded, roll, grim) if c is not None)],
        unread,
        reading,
    )


_TOTAL_REFS = {"total pay": "total_pay", "total value": "total_value"}


def _stated_relations(text: str, s: Setting) -> tuple[list[ast.Assert], list[str]]:
    """`Stated:` lines as assert clauses, and the ones that are not a relation. A relation is read in the
    renderer's words (`the total payment equals $90`, through the same table) or in the syntax itself
    (`total pay == $90`)."""
    syntax = {w.lower(): dsl for dsl, w in expression_words(s).items()}
    phrase = re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(w) for w in sorted(syntax, key=len, reverse=True)) + r")(?!\w)", re.I
    )
    asserts, unread = [], []
    for stated in _STATED.findall(text):
        stated = stated.strip()
        try:
            source = phrase.sub(lambda m: syntax[m.group().lower()], stated.removesuffix("."))
            asserts.append(build.assertion(parse_expression(source)))
        except ContractError:
            unread.append(f"could not read the stated relation: {stated}")
    return asserts, unread


def _contract_total(prices, delivered, reading: _Reading) -> tuple[int | None, str]:
    """The contract total a share refers to: the stated total, else price × quantity when every term is known."""
    stated = {amount for _, amount in reading.stated_totals}
    if len(stated) == 1:
        return stated.pop(), "the stated total"
    if len(stated) > 1:
        return None, "the text states different totals"
    if len(prices) < 3:
        return None, "not every price is stated"
    if any(len(delivered.get(w, {})) < 3 for w in PRODUCTION_WEEKS):
        return None, "not every delivery quantity is stated"
    value = sum(prices[i] * delivered[w][i] for w in PRODUCTION_WEEKS for i in range(3))
    return value, "price × quantity"


def _settle_shares(paid: dict[int, object], prices, delivered, reading: _Reading) -> dict[int, int]:
    """Payments stated as shares of the contract total, computed exactly, or left out with the reason."""
    shares = {w: v for w, v in paid.items() if isinstance(v, Share)}
    settled = {w: v for w, v in paid.items() if v is not None and not isinstance(v, Share)}
    for w, v in paid.items():
        if v is None:
            reading.notes.append(f"the payment for week {w} is not a whole number of dollars; left out")
    if not shares:
        return settled
    total, source = _contract_total(prices, delivered, reading)
    granularity = reading.setting.granularity
    for w, share in sorted(shares.items(), key=lambda item: item[1].part is None):
        if total is None:
            reading.notes.append(
                f"week {w} pays '{share.wording}', and the contract total cannot be computed ({source}); left out"
            )
            continue
        if share.part is None:
            others = [x for x in PAYMENT_WEEKS if x != w]
            if not all(x in settled for x in others):
                reading.notes.append(f"week {w} pays '{share.wording}', but not every other payment is known; left out")
                continue
            amount = Fraction(total - sum(settled[x] for x in others))
        else:
            amount = total * share.part
        if amount.denominator != 1 or amount < 0 or amount % granularity:
            reading.notes.append(
                f"week {w} pays '{share.wording}' = {float(amount):g} (contract total "
                f"{money(total)}, {source}), not a whole multiple of {money(granularity)}; left out"
            )
            continue
        settled[w] = int(amount)
        reading.notes.append(
            f"week {w} pays '{share.wording}' = {money(int(amount))} (contract total {money(total)}, {source})"
        )
    return settled


_NAMED = (
    r'\bthe {title} is "([^"\n]*)"',  # the renderer's wording
    r"((?:[A-Z][\w'’&.-]*\s+)*[A-Z][\w'’&.-]*)\s*\(\s*(?:the\s+)?[\"“]?{title}[\"”]?\s*\)",  # Acme (the Customer)
    r'^\s*(?:the\s+)?{title}\s*:\s*"?([^"\n]+?)"?\s*\.?\s*$',
)  # a line "Customer: Acme Foods"


def _parties(text: str, s) -> tuple[str, str] | None:
    """The parties' names as the text gives them (either may be left at its role's title); None when it names
    neither."""
    found = []
    for title in (s.customer_title, s.supplier_title):
        names = (re.search(p.format(title=re.escape(title)), text, re.M) for p in _NAMED)
        found.append(next((m.group(1) for m in names if m is not None), None))
    if found == [None, None]:
        return None
    return tuple(title if name is None else name for name, title in zip(found, (s.customer_title, s.supplier_title)))


def _contractsim_source(
    name, setting_key, parties, prices, delivered, paid, extra: list[ast.Clause], unread: list[str], reading: _Reading
) -> RulesResult:
    """The terms read, one entry per week as stated (nothing grouped or filled in), then `extra` clauses."""
    s = SETTINGS[setting_key]
    missing = [f"price of {s.products[i]}" for i in range(3) if i not in prices]
    clauses: list[ast.Clause] = []
    if parties:
        clauses.append(build.parties({"customer": parties[0], "supplier": parties[1]}))
    if prices:
        clauses.append(build.prices({s.products[i]: p for i, p in sorted(prices.items())}))
    for w in PRODUCTION_WEEKS:
        if w not in delivered:
            missing.append(f"delivery in week {w}")
        else:
            missing += [f"{s.products[i]} delivered in week {w}" for i in range(3) if i not in delivered[w]]
    clauses.append(
        build.deliver(
            ([w], {s.products[i]: q for i, q in sorted(delivered[w].items())})
            for w in PRODUCTION_WEEKS
            if w in delivered
        )
    )
    missing += [f"payment in week {w}" for w in PAYMENT_WEEKS if w not in paid]
    clauses.append(build.pay(([w], paid[w]) for w in PAYMENT_WEEKS if w in paid))
    conflicts = reading.deliveries.conflicting_weeks() | reading.payments.conflicting_weeks()
    notes = [f"week {w} is stated twice with different terms; left out" for w in sorted(conflicts)]
    notes += [
        f"the price of {s.products[i]} is stated twice with different amounts; left out"
        for i in sorted(reading.price_conflicts)
    ]
    dsl = format_contracts(build.contract(name, s.game_id, clauses + extra))
    return RulesResult(
        dsl=dsl, missing=tuple(missing + unread), notes=tuple(notes + reading.notes), unread=tuple(unread)
    )


# --- CT-Bench agreements ----------------------------------------------------------------------

_TILE = r"\(\s*\d+\s*,\s*\d+\s*\)"
_TILES = _TILE + r"(?:\s*(?:,\s*and|,|and)\s*" + _TILE + r")*"
_COVER = re.compile(
    r"\b(red|blue)\s+(?:will\s+|shall\s+|would\s+|can\s+|agrees?\s+to\s+)?(?:pays?\s+for|covers?|funds?)\s+"
    r"(red|blue)'s\s+(?:moves?|steps?)\s+(?:onto|on\s+to|into|to|on)\s+(?:the\s+)?(?:tiles?\s+)?(" + _TILES + r")"
    r"(?:\s+(?:with|using)\s+(?:a\s+|an\s+|one\s+)?"
    r"(?:(red|blue|green)\s+chips?|chips?\s+of\s+the\s+tile'?s\s+colou?r))?"
)
_POINTS = re.compile(
    r"\b(red|blue)\s+(?:will\s+|shall\s+|would\s+|agrees?\s+to\s+)?(?:transfers?|pays?|gives?|sends?)\s+"
    r"(?:(red|blue)\s+)?" + _NUM + r"\s+points?(?:\s+to\s+(red|blue))?"
)
_GOAL = re.compile(
    r"\b(?:if|once|when|after|as\s+soon\s+as)\s+(red|blue)\s+(?:reaches|reach|gets\s+to|get\s+to|"
    r"finishes|finish|arrives\s+at|arrive\s+at|makes\s+it\s+to|gets\s+home|get\s+home)\b"
)
_SPEAKER = re.compile(r"^\s*(P-Red|P-Blue|Red|Blue)\s*:\s*", re.I)
# a declined or withdrawn offer: which terms still stand is a reading this backend does not attempt
_REFUSAL = re.compile(
    r"\b(?:no thanks|no,|declines?d?|reject(?:s|ed)?|refuse[sd]?|won't|will not|do not agree|"
    r"don't agree|disagree|not accept|withdraw[sn]?)\b",
    re.I,
)
_CTBENCH_HINT = re.compile(r"colou?red trails|\bp-red\b|\bp-blue\b|trail[- ]game", re.I)


def _is_ctbench(text: str) -> bool:
    text = re.sub(r'"[^"\n]*"', '""', text)  # a quoted name (a party called "P-Blue") says nothing of the game
    if _CTBENCH_HINT.search(text):
        return True
    return bool(
        re.search(_TILE, text)
        and re.search(r"\bchips?\b|\btiles?\b|\bpoints\b|\bgoal\b", text, re.I)
        and re.search(r"\b(?:red|blue)\b", text, re.I)
    )


def _players(sentence: str, speaker: str | None) -> str | None:
    """Lower-case the sentence with every player named red/blue; None if it says I/you with no speaker."""
    s = re.sub(r"\bp-(red|blue)\b", r"\1", sentence.lower())
    s = re.sub(r"[’`]", "'", s)
    if speaker is None:
        return None if re.search(r"\b(?:i|i'll|me|my|you|you'll|your)\b", s) else s
    other = "blue" if speaker == "red" else "red"
    for pattern, repl in (
        (r"\bi'll\b", f"{speaker} will"),
        (r"\byou'll\b", f"{other} will"),
        (r"\bmy\b", f"{speaker}'s"),
        (r"\byour\b", f"{other}'s"),
        (r"\b(?:i|me)\b", speaker),
        (r"\byou\b", other),
    ):
        s = re.sub(pattern, repl, s)
    return s


def _translate_ctbench(text: str, name: str) -> RulesResult:
    m = _NAME.search(text)
    clauses: list[ast.Clause] = []
    p = re.search(r'P-Red is "([^"\n]*)" and P-Blue is "([^"\n]*)"', text)
    if p:
        clauses.append(build.parties({"red": p.group(1), "blue": p.group(2)}))
    covers: dict[tuple[tuple[int, int], str, str], str | None] = {}
    points: list[tuple[str, str, int, str]] = []
    unread: list[str] = []
    notes: list[str] = []
    for line in re.sub(r'"[^"\n]*"', '""', text).split("\n"):
        who = _SPEAKER.match(line)
        speaker = who.group(1).lower().removeprefix("p-") if who else None
        for sentence in re.split(r"(?<=[.!?])\s+", line[who.end() :] if who else line):
            if not sentence.strip():
                continue
            s = _players(sentence, speaker)
            looks_like_term = re.search(_TILE + r"|\bpoints?\b|\bcover|\bpay", sentence, re.I)
            if _REFUSAL.search(sentence):
                unread.append(f"could not read which terms stand (something is declined): {sentence.strip()}")
                continue
            if s is None:
                if looks_like_term:
                    unread.append(f"could not read (who is 'I' or 'you'?): {sentence.strip()}")
                continue
            found = False
            for c in _COVER.finditer(s):
                giver, receiver, tiles, colour = c.group(1), c.group(2), c.group(3), c.group(4)
                for r, col in re.findall(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", tiles):
                    key = ((int(r), int(col)), giver, receiver)
                    if key in covers and covers[key] != colour:
                        notes.append(f"the move onto ({r},{col}) is covered with two different chips; left out")
                        covers[key] = "conflict"
                    covers.setdefault(key, colour)
                found = True
            for pt in _POINTS.finditer(s):
                giver, receiver = pt.group(1), pt.group(2) or pt.group(4)
                goal = _GOAL.search(s)
                if receiver is None or receiver == giver or goal is None:
                    continue
                entry = (goal.group(1), giver, _number(pt.group(3)), receiver)
                if entry not in points:
                    points.append(entry)
                found = True
            if not found and looks_like_term:
                unread.append(f"could not read: {sentence.strip()}")
    readable = {k: v for k, v in covers.items() if v != "conflict"}
    if readable:
        clauses.append(
            build.cover(
                build.cover_entry(tile, giver, receiver, colour) for (tile, giver, receiver), colour in readable.items()
            )
        )
    if points:
        clauses.append(build.on_goal(build.goal_entry(*entry) for entry in points))
    if not readable and not points:
        unread.append("no coverage or points term could be read")
    dsl = format_contracts(build.contract(m.group(1) if m else name, "ctbench", clauses))
    return RulesResult(dsl=dsl, missing=tuple(unread), notes=tuple(notes), unread=tuple(unread))
