"""ContractSim LLM agents: negotiators (ContractSim paper, Sec. 3) and performance agents (ContractSim paper, App. B.2) on the shared LLM client.

Each agent keeps one append-only conversation under a fixed system prompt (the role's goal, its private
type and, in performance, the executed contract), so every request shares a cacheable prefix. Money is shown
in the setting's dollars; actions come back as JSON with the [CS-29] keys and are validated against the
action validation of ContractSim paper, App. B.2, with three attempts per request [CS-30], state-specific feedback, and zero as the default.
"""

from __future__ import annotations

import re
from typing import Literal

from contractlang.errors import UnknownName
from contractlang.ir import ContractSimIR
from contractlang.llm import CallFailed, LlmClient, json_object_in
from contractlang.render.prose import render
from contractlang.vocab import Setting
from games.agents import AgentError
from games.contractsim.game import CustomerObservation, Order, Pay, Produce, SupplierObservation
from games.contractsim.negotiation import NegotiationObservation
from solver.environment import SupplyEnvironment

Role = Literal["customer", "supplier"]
ATTEMPTS = 3  # per action request, format and validity failures together [CS-30]
PERFORMANCE_MAX_TOKENS = (
    8192  # output limit per performance request (the scaffold of ContractSim paper, App. B.2; what `run` sends)
)

# The prompt-guidance ablations of ContractSim paper, App. B.3: one clause appended to the goal (stage, role or None for both, text).
GUIDANCE: dict[str, tuple[str, Role | None, str]] = {
    "contingencies": (
        "negotiation",
        "customer",
        "RISK: You should be wary of the risk of default from the Caterer. Consider adding contingency clauses.",
    ),
    "contingencies-supplier": (
        "negotiation",
        "supplier",
        "RISK: Be wary of the risk of default from the Customer "
        "and environment stochasticity. Consider adding contingency clauses.",
    ),
    "net-utility": (
        "negotiation",
        None,
        "ACCEPTING CONTRACTS: You should only accept contracts if you expect "
        "them to result in a net increase in utility.",
    ),
    "no-worse-prior": (
        "negotiation",
        None,
        "ACCEPTING CONTRACTS: You should not accept contracts that are "
        "worse for you than any contract that has been proposed to you before.",
    ),
    "prohibition": (
        "performance",
        None,
        "CONTRACT PERFORMANCE: Avoid unilaterally violating the contract, and "
        "plan ahead so that you aren't in a position when you are forced to violate the terms.",
    ),
    "institutional": (
        "performance",
        None,
        "CONTRACT PERFORMANCE: You are in a repeated game; violating the "
        "contract may result in you losing out on future opportunities to make contracts with the "
        "same counter-party in the future.",
    ),
    "reciprocity": (
        "performance",
        None,
        "CONTRACT PERFORMANCE: Stop following the contract once it's clear "
        "that the other party is not following the contract.",
    ),
    "planning": (
        "performance",
        None,
        "CONTRACT PERFORMANCE: Plan ahead under uncertainty, and consider multiple possible outcomes.",
    ),
}


def guidance_for(names: tuple[str, ...], stage: str, role: Role) -> list[str]:
    """The clauses of `names` that apply at `stage` to `role` ("contingencies" names both roles' versions)."""
    unknown = [n for n in names if n not in GUIDANCE or n == "contingencies-supplier"]
    if unknown:
        choices = ", ".join(n for n in GUIDANCE if n != "contingencies-supplier")
        raise UnknownName(f"unknown prompt guidance {unknown[0]!r}; choose from {choices}")
    wanted = set(names) | ({"contingencies-supplier"} if "contingencies" in names else set())
    return [
        text for name, (s, r, text) in GUIDANCE.items() if name in wanted and s == stage and (r is None or r == role)
    ]


def snake(title: str) -> str:
    """[CS-29] key stem: lower-case snake_case of an entity's name ("Wet-wipes" → "wet_wipes")."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def _money(amount: int, setting: Setting) -> str:
    return f"${amount * setting.multiplier:,}"


def _law(law, setting: Setting) -> str:
    return (
        " or ".join(f"{_money(p, setting)} (probability {q:.2g})" for p, q in law)
        if len(law) > 1
        else _money(law[0][0], setting)
    )


def private_brief(role: Role, env: SupplyEnvironment, setting: Setting) -> str:
    """The role's private type (ContractSim paper, Sec. 3, App. B.2): the Customer's budget and values; the Supplier's capital, recipes,
    caps and the laws of prices, receipts and spoilage."""
    customer, supplier = setting.customer_title, setting.supplier_title
    products = setting.product_titles
    inputs = setting.input_titles
    if role == "customer":
        values = "; ".join(f"{p}: {_money(v, setting)} per unit delivered" for p, v in zip(products, env.values))
        return (
            f"You are the {customer}. Your budget for the whole 11 weeks is {_money(env.budget, setting)}; "
            f"money you do not pay out is yours to keep. What each delivered item is worth to you: {values}. "
            f"Your utility is the budget, plus the value of everything delivered, minus everything you pay."
        )
    receipts = {
        "exact": "you receive exactly what you order",
        "three_quarters": "you receive at least three quarters of each order (rounded down), uniformly "
        "at random up to the full order",
        "half": "you receive at least half of each order (rounded down), uniformly at random up to the full order",
    }[env.receipt_law]
    prices = "; ".join(f"{i}: {_law(law, setting)}" for i, law in zip(inputs, env.price_laws))
    spoil = (
        "nothing spoils"
        if env.spoilage_max == 0
        else f"at the start of each production week up to {env.spoilage_max} unit(s) of each stored input spoil"
    )
    return (
        f"You are the {supplier}. You start with {_money(env.capital, setting)} of capital and no inventory. "
        f"Recipes (one unit of each listed input per unit made): {products[0]} = {inputs[0]} + {inputs[1]} + "
        f"{inputs[2]}; {products[1]} = {inputs[0]} + {inputs[1]}; {products[2]} = {inputs[2]}. You may order "
        f"0..{env.order_cap} units of each input per production week, paid from your cash; you can store at "
        f"most {env.inventory_cap} units of each input. Input prices each production week: {prices}. "
        f"Receipts: {receipts}. Spoilage: {spoil}. Your utility is everything you are paid minus everything "
        f"you spend on inputs."
    )


def _snapshot(names: tuple[str, ...], values) -> str:
    return ", ".join(f"{n} {v}" for n, v in zip(names, values))


class _Conversation:
    """One agent's append-only conversation with the model; every reply and feedback stays in it."""

    def __init__(self, client: LlmClient, purpose: str, system: str):
        self.client, self.purpose, self.system = client, purpose, system
        self.messages: list[dict] = []

    def ask(self, text: str) -> str:
        self.messages.append({"role": "user", "content": text})
        try:
            reply = self.client.complete(self.purpose, self.system, list(self.messages))
        except CallFailed as exc:
            self.messages.pop()  # a transport failure changes neither state nor history (ContractSim paper, App. B.2)
            raise AgentError(f"{self.purpose}: {exc}") from None
        self.messages.append({"role": "assistant", "content": reply or "(empty)"})
        return reply


class LlmPerformer:
    """An LLM Customer or Supplier performing an executed contract (ContractSim paper, App. B.2): one JSON action per request."""

    def __init__(
        self, role: Role, client: LlmClient, ir: ContractSimIR, env: SupplyEnvironment, guidance: tuple[str, ...] = ()
    ):
        self.role = role
        self.name = f"llm:{client.settings.llm_model.label}"
        self.setting = ir.setting_info
        self.defaulted = 0  # requests that ran out of attempts and defaulted to zero
        s = self.setting
        self.buy_keys = tuple(f"buy_{snake(t)}" for t in s.input_titles)
        self.produce_keys = tuple(f"produce_{snake(t)}" for t in s.product_titles)
        goal = (
            "Goal: perform the contract below over the 11 weeks so as to maximise your own utility. "
            "Negotiation has ended; the contract is final."
        )
        system = "\n\n".join(
            [
                goal,
                *guidance_for(guidance, "performance", role),
                "Private information:\n" + private_brief(role, env, s),
                "The executed contract:\n" + render(ir),
                "Each request asks for one decision. Reply with one JSON object holding exactly the "
                "keys the request names, whole numbers only, and nothing else.",
            ]
        )
        self.conversation = _Conversation(client, f"{role} performance", system)
        self._seen_deliveries = 0
        self._seen_payments = 0

    def act(self, observation):
        if self.role == "customer":
            return self._decide(
                self._customer_request(observation),
                ("payment",),
                lambda v: self._payment(v, observation),
                Pay(amount=0),
            )
        if observation.phase == "order":
            return self._decide(
                self._order_request(observation),
                self.buy_keys,
                lambda v: self._order(v, observation),
                Order(quantities=(0, 0, 0)),
            )
        return self._decide(
            self._produce_request(observation),
            self.produce_keys,
            lambda v: self._produce(v, observation),
            Produce(quantities=(0, 0, 0)),
        )

    def _decide(self, request: str, keys: tuple[str, ...], validate, default):
        """Up to ATTEMPTS replies: malformed → format feedback, invalid → the state's feedback; then zero."""
        text = request
        for _ in range(ATTEMPTS):
            data = json_object_in(self.conversation.ask(text))
            missing = [] if data is None else [k for k in keys if k not in data]
            if data is None or missing:
                text = (
                    f"Your reply is not a JSON object with the keys {', '.join(keys)}"
                    + (f" (missing: {', '.join(missing)})" if data is not None else "")
                    + ". Reply with exactly one such object, e.g. "
                    + "{"
                    + ", ".join(f'"{k}": 0' for k in keys)
                    + "}."
                )
                continue
            values = [data[k] for k in keys]
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                text = f"Every value must be a whole number; you sent {', '.join(map(repr, values))}. Try again."
                continue
            action, problem = validate(values)
            if problem is None:
                return action
            text = f"That is not allowed: {problem}. Try again."
        self.defaulted += 1
        return default

    # --- Customer -----------------------------------------------------------------------------------

    def _customer_request(self, o: CustomerObservation) -> str:
        s = self.setting
        news = [
            f"week {d.week}: {_snapshot(s.product_titles, d.delivered)}" for d in o.deliveries[self._seen_deliveries :]
        ]
        self._seen_deliveries = len(o.deliveries)
        lines = [f"Deliveries since your last decision: {'; '.join(news)}."] if news else []
        lines.append(
            f"Week {o.week} (a payment week). You have paid {_money(o.total_paid, s)} so far; "
            f"{_money(o.remaining_budget, s)} of your budget remains. How much do you pay now? "
            f'Reply {{"payment": <whole dollars, a multiple of ${s.granularity:,}>}}.'
        )
        return "\n".join(lines)

    def _payment(self, values, o: CustomerObservation):
        dollars, s = values[0], self.setting
        if dollars < 0:
            return None, "a payment cannot be negative"
        if dollars % s.granularity:
            return None, f"payments are in multiples of ${s.granularity:,}"
        if dollars > o.remaining_budget * s.multiplier:
            return None, f"you have only {_money(o.remaining_budget, s)} of budget left"
        return Pay(amount=dollars // s.multiplier), None

    # --- Supplier -----------------------------------------------------------------------------------

    def _order_request(self, o: SupplierObservation) -> str:
        s = self.setting
        news = [f"week {p.week}: {_money(p.paid, s)}" for p in o.payments[self._seen_payments :]]
        self._seen_payments = len(o.payments)
        lines = [f"Payments received since your last decision: {'; '.join(news)}."] if news else []
        lines += [
            f"Week {o.week} (production round {o.round_index + 1}), purchasing. Cash: {_money(o.cash, s)}.",
            f"Spoiled this week: {_snapshot(s.input_titles, o.spoiled)}.",
            f"Inventory now: {_snapshot(s.input_titles, o.inventory)}.",
            "This week's prices: " + ", ".join(f"{t} {_money(p, s)}" for t, p in zip(s.input_titles, o.prices)) + ".",
            f"How many units of each input do you buy (0..{o.order_cap} each, total cost within your cash)? "
            "Reply {" + ", ".join(f'"{k}": <units>' for k in self.buy_keys) + "}.",
        ]
        return "\n".join(lines)

    def _order(self, values, o: SupplierObservation):
        s = self.setting
        if any(v < 0 or v > o.order_cap for v in values):
            return None, f"each order must be between 0 and {o.order_cap} units"
        cost = sum(v * p for v, p in zip(values, o.prices))
        if cost > o.cash:
            return None, f"that order costs {_money(cost, s)} but you have {_money(o.cash, s)}"
        return Order(quantities=tuple(values)), None

    def _produce_request(self, o: SupplierObservation) -> str:
        s = self.setting
        return "\n".join(
            [
                f"Received: {_snapshot(s.input_titles, o.received)}. Inventory now: "
                f"{_snapshot(s.input_titles, o.inventory)}.",
                f"Week {o.week}, production: how many of each item do you make and deliver now? Reply {{"
                + ", ".join(f'"{k}": <units>' for k in self.produce_keys)
                + "}.",
            ]
        )

    def _produce(self, values, o: SupplierObservation):
        s, n = self.setting, o.inventory
        if any(v < 0 for v in values):
            return None, "quantities cannot be negative"
        uses = (values[0] + values[1], values[0] + values[1], values[0] + values[2])
        short = [f"{t} (needs {u}, have {h})" for t, u, h in zip(s.input_titles, uses, n) if u > h]
        if short:
            return None, "not enough inventory: " + "; ".join(short)
        return Produce(quantities=tuple(values)), None


class LlmNegotiator:
    """An LLM negotiator (ContractSim paper, Sec. 3): its reply is the turn's JSON object, read by the game [CS-21]."""

    def __init__(
        self, role: Role, client: LlmClient, env: SupplyEnvironment, setting: Setting, guidance: tuple[str, ...] = ()
    ):
        self.role = role
        self.name = f"llm:{client.settings.llm_model.label}"
        other = setting.supplier_title if role == "customer" else setting.customer_title
        products, pay_weeks = ", ".join(setting.product_titles), "1, 3, 5, 7, 9 and 11"
        goal = (
            f"Goal: negotiate an 11-week supply contract with the {other} that maximises your own expected "
            f"utility. Walking away keeps your current position."
        )
        rules = (
            f"Every contract you propose or accept must state explicitly: the price of each item ({products}); "
            f"how many of each item are delivered in each production week (2, 4, 6, 8 and 10); and the payment "
            f"in each payment week ({pay_weeks}). Use whole-number quantities and whole-dollar amounts in "
            f"multiples of ${setting.granularity:,}. Any contingency (what happens after a shortfall or a missed "
            "payment) must be written out too. Put the complete agreement, in plain English, in the `contract` "
            "field: it replaces any earlier proposal."
        )
        actions = (
            'Each turn reply with exactly one JSON object: {"response": "<what you say>"} and at most one of '
            '"contract": "<full contract text>" (a formal proposal), "terminate": true (walk away; the '
            "negotiation ends with no contract)"
            + (
                ', "accept": true (accept the proposal the other side made in its latest turn)'
                if role == "customer"
                else ""
            )
            + ". The Customer can only accept a proposal the other side made in its latest turn, and no "
            "one may propose and accept in the same turn."
        )
        system = "\n\n".join(
            [
                goal,
                *guidance_for(guidance, "negotiation", role),
                "Private information:\n" + private_brief(role, env, setting),
                rules,
                actions,
            ]
        )
        self.conversation = _Conversation(client, f"{role} negotiation", system)

    def act(self, o: NegotiationObservation) -> str:
        lines = [f"Round {o.round} of {o.max_rounds}."]
        if o.counterparty_message is not None:
            lines.append(f"The other side said: {o.counterparty_message}")
        elif o.round == 1 and self.role == "customer":
            lines.append("You open the negotiation.")
        if o.active_proposal is not None:
            lines.append(
                f"The current formal proposal (made by the {o.proposer} in round {o.proposal_round}):\n"
                f"{o.active_proposal}"
            )
        available = ["respond", "propose a contract", "terminate"] + (["accept"] if o.can_accept else [])
        lines.append(f"Available actions: {', '.join(available)}.")
        request = "\n".join(lines)
        reply = self.conversation.ask(request)
        if (
            not reply.strip()
        ):  # ContractSim paper, Sec. 3: an empty response is retried once; a second one makes the run invalid
            reply = self.conversation.ask("Your reply was empty. " + request)
            if not reply.strip():
                raise AgentError(f"{self.role} negotiator {self.name!r} gave two empty responses: the run is invalid")
        return self.conversation.client.redact(reply)  # what it says: shown to the other side and logged
