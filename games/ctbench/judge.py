"""CT-Bench judges: the contract summary of Prog-Trading / Prog-Points (CT-Bench paper, Sec. 2.4, [CT-20]) in the paper's
JSON form, the reader of that form into contractlang, and the NL-Trading move judge [CT-25].

The JSON form, as the paper prints it:
  Prog-Trading  {"(row,col)": {"giver": "P-Red", "receiver": "P-Blue", "color": "Red"}, ...}
  Prog-Points   {"p-red_reaches_goal": {"giver": "P-Red", "receiver": "P-Blue", "amount": "10"}, ...}
It becomes contractlang source (`cover` / `on goal` entries) and goes through the parser and checker like any
contract, both for the authors' published logs and for our own judges.
"""

from __future__ import annotations

import re
from functools import lru_cache

from contractlang import ast, build
from contractlang.formatter import format_contracts
from contractlang.interpreter import Rules
from contractlang.ir import CTBenchIR
from contractlang.llm import CallFailed, LlmClient, json_object_in
from contractlang.source import check_source
from contractlang.translate.rules import translate as rules_translate
from games.agents import AgentError
from games.ctbench.board import GOAL_BONUS, Player, Tile
from games.ctbench.game import JudgeDecision
from games.ctbench.negotiation import SPEAKER, ContractCondition

COLOUR_OF_NAME = {"R": "red", "B": "blue", "G": "green", "RED": "red", "BLUE": "blue", "GREEN": "green"}
PLAYER_OF_NAME = {"player0": "red", "player1": "blue", "p-red": "red", "p-blue": "blue"}
TILE_KEY = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)")
SUMMARY_ATTEMPTS = 3  # [CT-20]
DECISION_ATTEMPTS = 3


def player_of(name) -> Player:
    player = PLAYER_OF_NAME.get(str(name).replace(" ", "").lower())
    if player is None:
        raise ValueError(f"unknown player {name!r}")
    return player


def colour_of(name) -> str:
    colour = COLOUR_OF_NAME.get(str(name).strip().upper())
    if colour is None:
        raise ValueError(f"unknown chip colour {name!r}")
    return colour


def _reason(exc: Exception) -> str:
    """Why an entry was left out, in words a model (or a person reading a note) can act on."""
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, ValueError):
        return str(exc)
    return "its value is not an object with giver, receiver and color (or amount) fields"


def terms_source(terms: dict, condition: ContractCondition, rules: Rules) -> tuple[str, list[str]]:
    """The judge's JSON as contractlang source, with a note for every entry left out or read specially
    (the readings are the authors' engine's, so their logs replay as they were scored); under
    `rules.exact_keys` ([CT-24a] (3)) an entry whose key is not written exactly '(r,c)' is left out."""
    entries, notes = [], []
    if condition == "prog_trading":
        for key, entry in terms.items():
            try:
                tile = TILE_KEY.match(key)
                if tile is None:
                    raise ValueError("its key names no tile")
                giver, receiver = player_of(entry["giver"]), player_of(entry["receiver"])
                if giver == receiver:
                    giver = "blue" if receiver == "red" else "red"
                    notes.append(
                        f"entry {key!r} names {receiver} as giver and receiver; read as {giver} paying, "
                        "as the authors' engine charges the receiver's partner"
                    )
                colour = entry.get("color")
                chip = None if str(colour).lower() in ("unknown", "none") else colour_of(colour)
                row, col = int(tile.group(1)), int(tile.group(2))
                exact = key == f"({row},{col})"
                if not exact:
                    notes.append(
                        f"entry {key!r}"
                        + (" left out" if rules.exact_keys else "")
                        + ": the authors' engine matches moves on the key '(r,c)' exactly, so it never "
                        "pays this entry"
                    )
                if exact or not rules.exact_keys:
                    entries.append(build.cover_entry((row, col), giver, receiver, chip))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                notes.append(f"entry {key!r} left out: {_reason(exc)}")
        clause: ast.Clause = build.cover(entries)
    else:
        for key, entry in terms.items():
            try:
                giver, receiver = player_of(entry["giver"]), player_of(entry["receiver"])
                amount = str(entry["amount"]).strip()
                if not amount.isdigit():
                    raise ValueError(f"the amount {entry['amount']!r} is not a whole number of points")
                amount = int(amount)
                if amount > GOAL_BONUS:
                    notes.append(f"entry {key!r}: {amount} points capped at {GOAL_BONUS}, as the authors' scoring does")
                    amount = GOAL_BONUS
                entries.append(build.goal_entry(giver, giver, amount, receiver))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                notes.append(f"entry {key!r} left out: {_reason(exc)}")
        clause = build.on_goal(entries)
    judge = build.contract("judge", "ctbench", (build.parties({"red": "P-Red", "blue": "P-Blue"}), clause))
    return format_contracts(judge), notes


def read_terms(
    terms: dict, condition: ContractCondition, origin: str, rules: Rules
) -> tuple[str, CTBenchIR | None, list[str]]:
    """The judge's JSON through the parser and checker under `rules`: (source, contract or None, notes)."""
    text, notes = terms_source(terms, condition, rules)
    result = check_source(text, origin)
    if not result.ok:
        return text, None, notes + [d.message for d in result.diagnostics]
    return text, result.contracts[0].ir, notes


def judge_json(ir: CTBenchIR, condition: ContractCondition) -> dict:
    """A contract in the judge's JSON form (the inverse of `terms_source` for the entries it can hold)."""
    if condition == "prog_trading":
        return {
            f"({c.tile[0]},{c.tile[1]})": {
                "giver": SPEAKER[c.giver],
                "receiver": SPEAKER[c.receiver],
                "color": (c.colour or "unknown").capitalize(),
            }
            for c in ir.coverage
        }
    return {
        f"{SPEAKER[p.giver].lower()}_reaches_goal": {
            "giver": SPEAKER[p.giver],
            "receiver": SPEAKER[p.receiver],
            "amount": str(p.amount),
        }
        for p in ir.points
    }


@lru_cache(maxsize=256)
def agreed_terms(transcript: str) -> CTBenchIR | None:
    """The terms an agreement states, read by the rules translator (nothing is inferred)."""
    result = check_source(rules_translate(transcript, "nl-agreement").dsl, "<agreement>")
    if not result.ok or not isinstance(result.contracts[0].ir, CTBenchIR):
        return None
    return result.contracts[0].ir


class OfflineJudge:
    """The offline judge: reads the agreement with the rules translator. Summaries hold exactly the terms of
    the condition's kind that the text states; a move is covered iff the agreement names it and it is unused."""

    def __init__(self, rules: Rules):
        self.rules = rules

    def summarise(self, condition: ContractCondition, transcript: str) -> tuple[dict, CTBenchIR] | None:
        ir = agreed_terms(transcript)
        if ir is None:
            return None
        terms = judge_json(ir, condition)
        _, contract, _ = read_terms(terms, condition, "<judge>", self.rules)
        return (terms, contract) if contract is not None else None

    def __call__(
        self,
        transcript: str,
        mover: Player,
        origin: Tile,
        target: Tile,
        colour: str,
        executed: tuple[tuple[Tile, Player], ...],
    ) -> JudgeDecision:
        ir = agreed_terms(transcript)
        for entry in ir.coverage if ir is not None else ():
            if entry.receiver == mover and entry.tile == target and (target, mover) not in executed:
                return JudgeDecision(covered=True, giver=entry.giver, colour=entry.colour or colour)
        return JudgeDecision(covered=False)


_SUMMARY_FORMS = {
    "prog_trading": (
        '{"(row,col)": {"giver": "P-Red" or "P-Blue", "receiver": the other player, "color": "Red", '
        '"Blue" or "Green"}, ...} with one entry per tile on which one player pays for the other\'s '
        "move (rows and columns 0..3)"
    ),
    "prog_points": (
        '{"p-red_reaches_goal": {"giver": "P-Red", "receiver": "P-Blue", "amount": "<0..20>"}, '
        '"p-blue_reaches_goal": {"giver": "P-Blue", "receiver": "P-Red", "amount": "<0..20>"}} with '
        "the points each player promised to hand over if it reaches the goal"
    ),
}

JUDGE_SYSTEM = (
    "You are the neutral judge of a Colored Trails game between P-Red and P-Blue on a 4x4 board "
    "(rows and columns 0..3). You read what the players agreed and answer with JSON only. Record only "
    "what both players agreed to; never add terms of your own."
)


class LlmJudge:
    """The judge on the LLM client: summaries retried up to 3 times [CT-20], move decisions validated
    (the giver is the mover's partner, the colour is a chip colour) and retried, else not covered."""

    def __init__(self, client: LlmClient, rules: Rules):
        self.client = client
        self.rules = rules

    def summarise(self, condition: ContractCondition, transcript: str) -> tuple[dict, CTBenchIR] | None:
        messages = [
            {
                "role": "user",
                "content": (
                    f"The players reached agreement:\n{transcript}\n\nSummarise the agreed terms as one JSON object of "
                    f"this form: {_SUMMARY_FORMS[condition]}. Reply with the JSON object only."
                ),
            }
        ]
        for _ in range(SUMMARY_ATTEMPTS):
            reply = self._complete("judge summary", messages)
            terms = json_object_in(reply) if reply is not None else None
            problems = ["the reply is not one JSON object"] if terms is None else []
            if terms is not None:
                _, contract, problems = read_terms(terms, condition, "<judge>", self.rules)
                if contract is not None and not problems and not (contract.coverage or contract.points):
                    problems = ["it holds no entry"]
                if contract is not None and not problems:
                    return terms, contract
            messages += [
                {"role": "assistant", "content": reply or "(empty)"},
                {
                    "role": "user",
                    "content": "That summary cannot be used: "
                    + "; ".join(problems)
                    + ". Reply with the corrected JSON object only.",
                },
            ]
        return None

    def __call__(
        self,
        transcript: str,
        mover: Player,
        origin: Tile,
        target: Tile,
        colour: str,
        executed: tuple[tuple[Tile, Player], ...],
    ) -> JudgeDecision:
        partner = "blue" if mover == "red" else "red"
        used = "; ".join(f"{SPEAKER[p]} onto ({t[0]},{t[1]})" for t, p in executed) or "none"
        messages = [
            {
                "role": "user",
                "content": (
                    f"The players' agreement:\n{transcript}\n\n{SPEAKER[mover]} now moves from ({origin[0]},{origin[1]}) to "
                    f"({target[0]},{target[1]}), a {colour} tile. Covered moves already paid under the agreement: {used}. "
                    f"Does the agreement oblige {SPEAKER[partner]} to pay for this move (a one-off coverage already used "
                    'does not count again)? Reply {"covered": true, "giver": "' + SPEAKER[partner] + '", "color": '
                    '"Red" | "Blue" | "Green"} or {"covered": false}.'
                ),
            }
        ]
        for _ in range(DECISION_ATTEMPTS):
            reply = self._complete("judge move", messages)
            decision, problem = self._decision(json_object_in(reply or ""), partner)
            if decision is not None:
                return decision
            messages += [
                {"role": "assistant", "content": reply or "(empty)"},
                {"role": "user", "content": f"That answer cannot be used: {problem}. Reply with the JSON object only."},
            ]
        return JudgeDecision(covered=False)

    @staticmethod
    def _decision(data: dict | None, partner: Player) -> tuple[JudgeDecision | None, str]:
        if data is None or not isinstance(data.get("covered"), bool):
            return None, 'it is not a JSON object with a true/false "covered" field'
        if not data["covered"]:
            return JudgeDecision(covered=False), ""
        try:
            giver, colour = player_of(data.get("giver")), colour_of(data.get("color"))
        except ValueError as exc:
            return None, str(exc)
        if giver != partner:
            return None, f"the giver must be the mover's partner, {SPEAKER[partner]}"
        return JudgeDecision(covered=True, giver=giver, colour=colour), ""

    def _complete(self, purpose: str, messages: list[dict]) -> str:
        try:
            return self.client.complete(purpose, JUDGE_SYSTEM, messages)
        except CallFailed as exc:
            raise AgentError(f"{purpose}: {exc}") from None


__all__ = ["LlmJudge", "OfflineJudge", "agreed_terms", "judge_json", "read_terms", "terms_source"]
