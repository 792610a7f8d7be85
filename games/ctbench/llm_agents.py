"""CT-Bench LLM players (CT-Bench paper, App. G): one prompt per decision under a fixed, selfish system prompt; JSON actions in
the [CT-09] formats; one corrective re-prompt, then the null action [CT-12].

Every prompt carries the game context (board, own state, the partner's state when visible [CT-28]) and both
players' best paths with the chips each lacks for it. The seven prompt types: move, trade proposal, trade
response, honour a Pay-for-Partner arrangement, tile-level contract negotiation, points contract
negotiation, and agreeing to the judge's contract.
"""

from __future__ import annotations

import json

from contractlang.interpreter.events import ChipCounts
from contractlang.llm import CallFailed, LlmClient, json_object_in
from contractlang.render.prose import coverage_clause
from games.agents import AgentError
from games.ctbench.board import COLOUR_ORDER, GOAL, Board, Player, Tile
from games.ctbench.game import Arrangement, CTBenchObservation, Honour, Move, Propose, Respond, Trade, other
from games.ctbench.judge import colour_of
from games.ctbench.negotiation import SPEAKER, Confirm, NegotiationObservation, Say

SYSTEM = f"""You are playing Colored Trails, a two-player board game, as one of P-Red and P-Blue. Act selfishly: \
your only aim is the highest score for yourself; your partner's score does not matter to you.

The board is 4x4 (rows and columns 0..3, row 0 at the top). Both players start at (0,0) and want to reach the \
goal at {GOAL}. A step goes to a tile next to yours (up, down, left or right) and costs one chip of that tile's \
colour. P-Red starts with 14 red and 2 green chips, P-Blue with 14 blue and 2 green. Your score is 20 points \
for reaching the goal plus 5 points per chip you hold at the end; without reaching the goal you score nothing.

Answer every decision with one JSON object and nothing else; you may add a "reasoning" string field."""

NULL_ACTION = {
    "propose": Propose(offer=None),
    "respond": Respond(accept=False),
    "move": Move(tile=None),
    "honour": Honour(honour=False),
    "confirm": Confirm(accept=False),
}


def _chips(c: ChipCounts | dict) -> str:
    get = c.of if isinstance(c, ChipCounts) else c.get
    return ", ".join(f"{get(col)} {col}" for col in COLOUR_ORDER)


def _path(path: tuple[Tile, ...]) -> str:
    return " -> ".join(f"({r},{c})" for r, c in path)


def _lacking(board: Board, path: tuple[Tile, ...], chips: ChipCounts) -> str:
    need = board.path_needs(path)
    short = {c: max(0, n - chips.of(c)) for c, n in need.items()}
    return ", ".join(f"{n} {c}" for c, n in short.items() if n) or "nothing"


def _bundle(value) -> ChipCounts:
    if not isinstance(value, dict):
        raise ValueError('a chip bundle must be an object like {"red": 1}')
    counts = {c: 0 for c in COLOUR_ORDER}
    for key, n in value.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"chip counts must be whole numbers of 0 or more, not {n!r}")
        counts[colour_of(key)] += n
    return ChipCounts(**counts)


class LlmPlayer:
    """A CT-Bench player on the LLM client (stateless prompts: each one holds the whole game context)."""

    def __init__(self, client: LlmClient):
        self.client = client
        self.name = f"llm:{client.settings.llm_model.label}"
        self.nulls = 0  # decisions that fell back to the null action

    def act(self, obs):
        if isinstance(obs, NegotiationObservation):
            if obs.phase == "negotiate":
                said = self._ask("negotiation", self._negotiation_prompt(obs)).strip()
                return Say(message=self.client.redact(said) or "(silence)")  # shown to the partner, logged
            return self._decide(obs, "confirm", self._confirm_prompt(obs), self._read_confirm)
        return self._decide(obs, obs.phase, self._prompt(obs), lambda data: self._read(data, obs))

    # --- the decision loop [CT-12] --------------------------------------------------------------------

    def _decide(self, obs, phase: str, prompt: str, read):
        messages = [{"role": "user", "content": prompt}]
        for attempt in range(2):
            reply = self._complete(phase, messages)
            data = json_object_in(reply)
            try:
                if data is None:
                    raise ValueError("the reply is not a JSON object")
                action = read(data)
                if not obs.is_legal(action):
                    raise ValueError("that action is not allowed now")
                return action
            except KeyError as exc:
                problem = f"the {exc.args[0]!r} field is missing"
            except TypeError:
                problem = "a field holds a value of the wrong kind (see the example in the question)"
            except ValueError as exc:
                problem = str(exc)
            if attempt == 0:
                messages += [
                    {"role": "assistant", "content": reply or "(empty)"},
                    {
                        "role": "user",
                        "content": f"That answer cannot be used: {problem}. Reply with one valid JSON object as asked.",
                    },
                ]
        self.nulls += 1
        return NULL_ACTION[phase]

    def _ask(self, phase: str, prompt: str) -> str:
        return self._complete(phase, [{"role": "user", "content": prompt}])

    def _complete(self, phase: str, messages: list[dict]) -> str:
        try:
            return self.client.complete(f"ctbench {phase}", SYSTEM, messages)
        except CallFailed as exc:
            raise AgentError(f"{self.name} ({phase}): {exc}") from None

    # --- prompts ---------------------------------------------------------------------------------------

    def _context(
        self,
        board: Board,
        me: Player,
        position: Tile,
        chips: ChipCounts,
        partner_position: Tile | None,
        partner_chips: ChipCounts | None,
    ) -> list[str]:
        lines = [
            f"You are {SPEAKER[me]}. Board (R red, B blue, G green):",
            *(f"  row {i}: {row}" for i, row in enumerate(board.rows())),
        ]
        path, _ = board.best_path(me, {c: chips.of(c) for c in COLOUR_ORDER}, source=position)
        lines += [
            f"You are at ({position[0]},{position[1]}) holding {_chips(chips)}.",
            f"Your best path to the goal: {_path(path)}; chips you lack for it: {_lacking(board, path, chips)}.",
        ]
        partner = other(me)
        if partner_chips is None:
            lines.append(f"{SPEAKER[partner]}'s position, chips and path are hidden from you.")
        else:
            ppath, _ = board.best_path(partner, {c: partner_chips.of(c) for c in COLOUR_ORDER}, source=partner_position)
            lines += [
                f"{SPEAKER[partner]} is at ({partner_position[0]},{partner_position[1]}) holding "
                f"{_chips(partner_chips)}.",
                f"{SPEAKER[partner]}'s best path: {_path(ppath)}; chips it lacks: "
                f"{_lacking(board, ppath, partner_chips)}.",
            ]
        return lines

    def _prompt(self, obs: CTBenchObservation) -> str:
        lines = self._context(obs.board, obs.player, obs.position, obs.chips, obs.partner_position, obs.partner_chips)
        lines.append(f"Round {obs.round}.")
        for p in obs.promises:
            if p.remaining:
                lines.append(
                    f"Pay-for-Partner promise: {SPEAKER[p.payer]} pays for {p.remaining} {p.colour} tile(s) "
                    f"of {SPEAKER[p.beneficiary]}."
                )
        for c in obs.open_coverage:
            lines.append(
                f"Binding contract: {coverage_clause(c)}; if {SPEAKER[c.giver]} lacks it, its score becomes 0."
            )
        for t in obs.points:
            lines.append(
                f"Binding contract: {SPEAKER[t.giver]} hands {t.amount} points to {SPEAKER[t.receiver]} "
                f"if {SPEAKER[t.giver]} reaches the goal."
            )
        if obs.transcript:
            lines.append(f"Your agreement with your partner (a judge enforces it on each move):\n{obs.transcript}")
        partner = SPEAKER[other(obs.player)]
        if obs.phase == "move":
            moves = ", ".join(f"[{r}, {c}]" for r, c in obs.legal_moves)
            lines.append(
                f"Move decision: step to one of {moves}, paying one chip of its colour, or stay. Reply "
                '{"move": [row, col]} or {"move": null}.'
            )
        elif obs.phase == "propose" and obs.mode == "trade":
            lines.append(
                f"Trade proposal: you may offer {partner} a trade of chips, executed at once if accepted. "
                'Reply {"propose": {"give": {"red": 0, "blue": 1, "green": 0}, "receive": {"red": 1, '
                '"blue": 0, "green": 0}}} (both sides non-empty) or {"propose": null}.'
            )
        elif obs.phase == "propose":
            lines.append(
                f"Pay-for-Partner proposal: you may offer {partner} an arrangement in which you pay for some "
                f"of its steps by colour and it pays for some of yours. Promises are not enforced. Reply "
                '{"propose": {"i_cover": {"red": 0, "blue": 1, "green": 0}, "you_cover": {"red": 1, '
                '"blue": 0, "green": 0}}} or {"propose": null}.'
            )
        elif obs.phase == "respond":
            offer = obs.pending_offer
            if isinstance(offer, Trade):
                what = f"{partner} offers to give you {_chips(offer.give)} for {_chips(offer.receive)} of yours."
            else:
                what = (
                    f"{partner} offers to pay for your steps onto {_chips(offer.i_cover)} tiles if you pay for its "
                    f"steps onto {_chips(offer.you_cover)} tiles."
                )
            lines.append(f'Trade response: {what} Reply {{"accept": true}} or {{"accept": false}}.')
        else:
            lines.append(
                f"Honour Pay-for-Partner arrangement: {partner} is stepping onto a {obs.pending_colour} tile "
                f'you promised to pay for. Pay one {obs.pending_colour} chip? Reply {{"honor": true}} or '
                '{"honor": false}.'
            )
        return "\n".join(lines)

    def _before_play(self, obs: NegotiationObservation) -> list[str]:
        """The game context of the negotiation and confirmation prompts: both players still at the start."""
        return self._context(
            obs.board, obs.player, (0, 0), obs.chips, (0, 0) if obs.visible else None, obs.partner_chips
        )

    def _negotiation_prompt(self, obs: NegotiationObservation) -> str:
        lines = self._before_play(obs)
        partner = SPEAKER[other(obs.player)]
        if obs.condition == "prog_points":
            task = (
                "Contract negotiation (points): before play you may agree how many points (0 to 20) each player "
                "hands to the other if it reaches the goal; the agreement is enforced on the final scores."
            )
        else:
            task = (
                "Contract negotiation (tiles): before play you may agree which specific tiles each player pays "
                "for when the other steps onto them, and with which chip colour; the agreement is enforced: a "
                "player who cannot pay a covered tile scores 0."
            )
        lines += [task, f"You have at most {obs.max_messages} messages between you; {SPEAKER['red']} speaks first."]
        lines += ["Conversation so far:", *obs.messages] if obs.messages else ["You open the conversation."]
        lines.append(
            f"Write your next message to {partner} as plain text. When you accept the terms on the table, "
            "make 'agree' the first or last word of your message; the deal is made when both of you have "
            "just said it."
        )
        return "\n".join(lines)

    def _confirm_prompt(self, obs: NegotiationObservation) -> str:
        return "\n".join(
            [
                *self._before_play(obs),
                "The conversation:",
                *obs.messages,
                "The judge summarised the agreed contract as:",
                json.dumps(obs.judge_contract),
                'Do you accept this contract as binding? Reply {"accept": true} or {"accept": false}.',
            ]
        )

    # --- reading replies [CT-09] ---------------------------------------------------------------------

    @staticmethod
    def _read_confirm(data: dict) -> Confirm:
        if not isinstance(data["accept"], bool):
            raise ValueError('"accept" must be true or false')
        return Confirm(accept=data["accept"])

    @staticmethod
    def _read(data: dict, obs: CTBenchObservation):
        if obs.phase == "move":
            tile = data["move"]
            if tile is None:
                return Move(tile=None)
            if not (isinstance(tile, list) and len(tile) == 2 and all(isinstance(x, int) for x in tile)):
                raise ValueError('"move" must be [row, col] or null')
            return Move(tile=(tile[0], tile[1]))
        if obs.phase == "respond":
            if not isinstance(data["accept"], bool):
                raise ValueError('"accept" must be true or false')
            return Respond(accept=data["accept"])
        if obs.phase == "honour":
            if not isinstance(data["honor"], bool):
                raise ValueError('"honor" must be true or false')
            return Honour(honour=data["honor"])
        offer = data["propose"]
        if offer is None:
            return Propose(offer=None)
        if not isinstance(offer, dict):
            raise ValueError('"propose" must be an object or null')
        if obs.mode == "trade":
            return Propose(offer=Trade(give=_bundle(offer["give"]), receive=_bundle(offer["receive"])))
        return Propose(offer=Arrangement(i_cover=_bundle(offer["i_cover"]), you_cover=_bundle(offer["you_cover"])))
