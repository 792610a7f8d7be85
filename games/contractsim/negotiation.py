"""The ContractSim negotiation game (ContractSim paper, Sec. 3) and its metrics (ContractSim paper, App. C.5).

At most 50 rounds, each a Customer turn then a Supplier turn; the Customer opens. A turn is one JSON object
with a `response` and at most one of `contract` (a full natural-language contract, replacing the active
proposal), `accept` (Customer only) and `terminate`. Agreement: the Customer accepts the Supplier's proposal
of the immediately preceding round [CS-20]. Every proposal is translated to the IR as written (faithful,
never repaired); a self-contradicting one is kept and flagged, since proposal feasibility is measured on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from pydantic import Field

from contractlang.ir import ContractSimIR
from contractlang.llm import LlmCall, LlmUsage, json_object_in
from contractlang.source import check_source
from contractlang.translate import Translation
from contractlang.vocab import Frozen
from solver.dp.induction import SolveResult
from solver.environment import SupplyEnvironment

Role = Literal["customer", "supplier"]
MAX_ROUNDS = 50
EPS = 1e-9  # ε_num of ContractSim paper, App. C.5


class Turn(Frozen):
    """One negotiation turn as read from the agent's reply [CS-21]."""

    round: int
    role: Role
    response: str = Field(description="what the negotiator says to the other side")
    contract: str | None = Field(default=None, description="a contract proposed now, in contractlang")
    accept: bool = Field(default=False, description="the Customer accepts the active proposal [CS-20]")
    terminate: bool = Field(default=False, description="end the negotiation without an agreement")
    raw: str
    dialogue_only: bool = False  # the reply carried an action it may not take (or several): read as dialogue


class NegotiationObservation(Frozen):
    """What a negotiator sees when asked for its turn (ContractSim paper, Sec. 3)."""

    role: Role = Field(description="the negotiator's role: customer or supplier")
    round: int = Field(description="this round, from 1")
    max_rounds: int = Field(description="the last round; no agreement by then ends the negotiation without one")
    env: int = Field(description="the environment (1-6) the contract will be performed in")
    budget: int = Field(description="the Customer's budget B, public in every environment, in base units")
    counterparty_message: str | None = Field(description="what the other side said last, if anything")
    active_proposal: str | None = Field(description="the contract on the table, in contractlang, if any")
    proposer: Role | None = Field(description="who proposed the active contract")
    proposal_round: int | None = Field(description="the round the active contract was proposed in")
    can_accept: bool = Field(description="the Customer may accept the active proposal now [CS-20]")


class NegotiationTurn(Frozen):
    """A negotiator's answer [CS-21]: what it says, and at most one of a contract, accept (Customer) or
    terminate. A `cmd:` negotiator writes this object itself as its answer line."""

    response: str = Field(description="what the negotiator says to the other side")
    contract: str | None = Field(default=None, description="a contract proposed now, in contractlang")
    accept: bool = Field(default=False, description="the Customer accepts the active proposal [CS-20]")
    terminate: bool = Field(default=False, description="end the negotiation without an agreement")


class Negotiator(Protocol):
    name: str

    def act(self, observation: NegotiationObservation) -> str: ...


def within_budget(ir: ContractSimIR, budget: int) -> bool:
    """Σ_w M_w ≤ B, in base units (the second half of Feas, ContractSim paper, App. C.5)."""
    return sum(ir.base_units().payments) <= budget


class Proposal(Frozen):
    """A formal proposal and its translation; `terms` is the IR when the translation is ok."""

    round: int
    role: Role
    text: str
    status: str  # ok / not well-formed / parse-incomplete / failed
    terms: ContractSimIR | None = None
    well_formed: bool = False

    def feasible(self, budget: int) -> bool:
        """Feas(ω) of ContractSim paper, App. C.5: well-formed and Σ_w M_w ≤ B."""
        return self.well_formed and self.terms is not None and within_budget(self.terms, budget)


class NegotiationRecord(Frozen):
    env: int
    customer: str
    supplier: str
    turns: tuple[Turn, ...]
    proposals: tuple[Proposal, ...]
    outcome: Literal["agreed", "terminated", "no agreement"]
    agreed: Proposal | None = None
    terminated_by: Role | None = None
    llm_calls: tuple[LlmCall, ...] = ()  # the model calls of LLM negotiators and translator, in order

    @property
    def llm_usage(self) -> LlmUsage:
        return LlmUsage.of(self.llm_calls)


def read_turn(raw: str, role: Role, round_: int) -> Turn:
    """[CS-21]: the whole text as JSON, else the first flat JSON object (also inside a code fence); an object
    with more than one action, or an action the role may not take, is dialogue; no object: all dialogue."""
    data = json_object_in(raw, flat=True)
    if data is None:
        return Turn(round=round_, role=role, response=raw, raw=raw, dialogue_only=True)
    response = data.get("response")
    response = response if isinstance(response, str) else raw
    contract = data.get("contract") if isinstance(data.get("contract"), str) and data["contract"].strip() else None
    accept, terminate = data.get("accept") is True, data.get("terminate") is True
    actions = (contract is not None) + accept + terminate
    if actions > 1 or (accept and role != "customer"):
        return Turn(round=round_, role=role, response=response, raw=raw, dialogue_only=True)
    return Turn(
        round=round_, role=role, response=response, contract=contract, accept=accept, terminate=terminate, raw=raw
    )


def contract_of(translation: Translation) -> ContractSimIR | None:
    """The ContractSim IR of an ok translation (its checked DSL), else None."""
    checked = check_source(translation.dsl).contracts if translation.ok else ()
    return checked[0].ir if checked and checked[0].ir.kind == "contractsim" else None


def negotiate(
    env: SupplyEnvironment,
    customer: Negotiator,
    supplier: Negotiator,
    translate: Callable[[str], Translation],
    max_rounds: int = MAX_ROUNDS,
) -> NegotiationRecord:
    """Play one negotiation; every proposal is translated as written when it is made."""
    turns: list[Turn] = []
    proposals: list[Proposal] = []
    active: Proposal | None = None
    supplier_last_proposed: Proposal | None = None  # the Supplier's proposal in its most recent turn, if any
    agents = {"customer": customer, "supplier": supplier}
    for round_ in range(1, max_rounds + 1):
        for role in ("customer", "supplier"):
            other_turn = turns[-1] if turns else None
            can_accept = role == "customer" and supplier_last_proposed is not None
            observation = NegotiationObservation(
                role=role,
                round=round_,
                max_rounds=max_rounds,
                env=env.id,
                budget=env.budget,
                counterparty_message=other_turn.response if other_turn else None,
                active_proposal=active.text if active else None,
                proposer=active.role if active else None,
                proposal_round=active.round if active else None,
                can_accept=can_accept,
            )
            turn = read_turn(agents[role].act(observation), role, round_)
            turns.append(turn)
            if turn.terminate:
                return _record(env, customer, supplier, turns, proposals, "terminated", terminated_by=role)
            if turn.accept and can_accept:
                return _record(env, customer, supplier, turns, proposals, "agreed", agreed=supplier_last_proposed)
            if turn.contract is not None:
                translation = translate(turn.contract)
                terms = contract_of(translation)
                active = Proposal(
                    round=round_,
                    role=role,
                    text=turn.contract,
                    status=translation.status,
                    terms=terms,
                    well_formed=terms is not None and translation.well_formed is not False,
                )
                proposals.append(active)
            if role == "supplier":
                supplier_last_proposed = active if turn.contract is not None else None
            elif turn.contract is not None:
                supplier_last_proposed = None  # a Customer proposal replaces the Supplier's
    return _record(env, customer, supplier, turns, proposals, "no agreement")


def _record(env, customer, supplier, turns, proposals, outcome, agreed=None, terminated_by=None):
    return NegotiationRecord(
        env=env.id,
        customer=customer.name,
        supplier=supplier.name,
        turns=tuple(turns),
        proposals=tuple(proposals),
        outcome=outcome,
        agreed=agreed,
        terminated_by=terminated_by,
    )


# --- metrics (ContractSim paper, App. C.5) -------------------------------------------------------------------------------

Solve = Callable[[ContractSimIR], SolveResult]


class NegotiationMetrics(Frozen):
    """ContractSim paper, App. C.5 for one negotiation, from the exact DP; gains and utilities in the setting's dollars."""

    agreed: bool
    gain_customer: float | None = None  # G_Cust = U_Cust(ω) − B
    gain_supplier: float | None = None  # G_Supp = U_Supp(ω) − 0
    p_sat: float | None = None
    mutual_benefit: bool | None = None
    contingency_count: int | None = None
    completeness: float | None = None
    feasible_proposals: dict[str, tuple[int, int]]  # per role: (feasible, made)
    acceptance_regret: dict[str, bool] | None = None  # per role, accepted negotiations only


def utilities(result: SolveResult) -> tuple[float, float]:
    if result.u_customer is None or result.u_supplier is None:
        raise ValueError(f"{result.contract}: the schedule exceeds the budget; it has no utilities")
    return result.u_customer, result.u_supplier


def negotiation_metrics(record: NegotiationRecord, env: SupplyEnvironment, solve: Solve) -> NegotiationMetrics:
    """Expected gain, P_sat, mutual benefit, contingency count, completeness, proposal feasibility and
    acceptance regret (ContractSim paper, App. C.5)."""
    made = {r: [p for p in record.proposals if p.role == r] for r in ("customer", "supplier")}
    feasible = {r: (sum(p.feasible(env.budget) for p in ps), len(ps)) for r, ps in made.items()}
    if record.agreed is None or record.agreed.terms is None:
        return NegotiationMetrics(agreed=False, feasible_proposals=feasible)
    agreed = record.agreed.terms
    result = solve(agreed)
    m = agreed.setting_info.multiplier
    u_cust, u_supp = utilities(result)
    gains = {"customer": u_cust - env.budget * m, "supplier": u_supp}
    mine = {"customer": u_cust, "supplier": u_supp}
    regret = {}
    earlier = record.proposals[:-1]  # the agreed proposal is always the last one made
    for role, other in (("customer", "supplier"), ("supplier", "customer")):
        offers = [p for p in earlier if p.role == other and p.feasible(env.budget)]
        regret[role] = any(
            dict(zip(("customer", "supplier"), utilities(solve(p.terms))))[role] > mine[role] + EPS for p in offers
        )
    return NegotiationMetrics(
        agreed=True,
        gain_customer=gains["customer"],
        gain_supplier=gains["supplier"],
        p_sat=result.p_sat,
        mutual_benefit=gains["customer"] >= -EPS and gains["supplier"] >= -EPS,
        contingency_count=agreed.contingencies.explicit_count,
        completeness=result.completeness,
        feasible_proposals=feasible,
        acceptance_regret=regret,
    )
