"""A negotiated ContractSim game from end to end: negotiation (ContractSim paper, Sec. 3) → the agreed contract, translated → its ContractSim paper, App. C.5
metrics from the exact DP → performance games on it (ContractSim paper, App. B.2) — for any negotiators, offline or LLM."""

from __future__ import annotations

from dataclasses import replace

from contractlang.errors import UnknownName
from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient, LlmUsage
from contractlang.translate.llm import MAX_TOKENS as TRANSLATION_MAX_TOKENS
from contractlang.vocab import Frozen
from games.agents import (
    AgentError,
    Seat,
    check,
    closing_agents,
    make_agent,
    model_of,
    register_agent,
    register_llm_agent,
)
from games.contractsim.llm_agents import PERFORMANCE_MAX_TOKENS, LlmNegotiator
from games.contractsim.negotiation import NegotiationMetrics, NegotiationRecord, negotiate, negotiation_metrics
from games.contractsim.negotiators import Appraiser, ExternalNegotiator, ScriptedCustomer, ScriptedSupplier
from games.contractsim.play import RunRecord, play
from solver.dp import TableCache
from solver.environment import SupplyEnvironment

NEGOTIATION = "contractsim-negotiation"


def _llm_negotiator(seat: Seat) -> LlmNegotiator:
    if seat.llm is None:
        raise AgentError(f"the {seat.role} negotiator {seat.spec!r} is an LLM, and this run has no LLM client")
    return LlmNegotiator(seat.role, seat.llm.with_model(seat.model), seat.env, seat.extra["setting"], seat.guidance)


register_agent("scripted", game=NEGOTIATION, roles=("customer",), builtin=True)(
    lambda seat: ScriptedCustomer(seat.extra["appraiser"])
)
register_agent("scripted", game=NEGOTIATION, roles=("supplier",), builtin=True)(
    lambda seat: ScriptedSupplier(seat.extra["offers"], seat.extra["appraiser"])
)
register_agent("cmd:", game=NEGOTIATION, builtin=True)(lambda seat: ExternalNegotiator(seat.spec))
register_llm_agent(NEGOTIATION, _llm_negotiator)


class NegotiatedRun(Frozen):
    """One negotiation, its metrics, and the performance games played on the agreed contract (if any)."""

    env: int
    negotiation: NegotiationRecord
    metrics: NegotiationMetrics
    performances: tuple[RunRecord, ...] = ()


def negotiate_and_perform(
    env: SupplyEnvironment,
    customer: str,
    supplier: str,
    offers: list[ContractSimIR],
    tables: TableCache,
    translator: str = "rules",
    perform: tuple[str, str] = ("rcc", "rcc"),
    seeds: tuple[int, ...] = (42,),
    llm: LlmClient | None = None,
    guidance: tuple[str, ...] = (),
    repeat: int = 0,
) -> NegotiatedRun:
    """Negotiators are `scripted` (the Supplier offers `offers`), `llm[:MODEL]` or `cmd:PROGRAM`; every proposal
    is read by `translator` (rules or llm[:MODEL]); each seed is one performance game by `perform`. `repeat`
    numbers the paper's independent repeats of one pairing: each has recordings of its own (repeat 0 keeps the
    namespace of a single negotiation), so a repeat is a new conversation, not a replay of the first."""
    namespace = f"negotiation/env{env.id}/{customer}/{supplier}/{translator}" + (f"/repeat{repeat}" if repeat else "")
    game = llm.for_game(namespace) if llm is not None else None
    translator_model = model_of(translator)
    # the translator and the performance games send what `translate` and `run` send (the paper's scaffold)
    appraiser = Appraiser(
        env,
        tables,
        translator=game.with_model(translator_model).with_max_tokens(TRANSLATION_MAX_TOKENS)
        if translator_model
        else None,
    )
    setting = offers[0].setting_info

    seat = Seat(
        game=NEGOTIATION,
        role="customer",
        env=env,
        llm=game,
        guidance=guidance,
        extra={"appraiser": appraiser, "offers": offers, "setting": setting},
    )
    negotiators = [make_agent(customer, seat), make_agent(supplier, replace(seat, role="supplier"))]
    with closing_agents(negotiators) as (c, s):
        record = negotiate(env, c, s, appraiser.translate)
    if game is not None:
        record = record.model_copy(update={"llm_calls": tuple(game.calls)})
    metrics = negotiation_metrics(record, env, appraiser.solve)
    if not metrics.agreed:
        return NegotiatedRun(env=env.id, negotiation=record, metrics=metrics)
    games = tuple(
        play(
            record.agreed.terms,
            env,
            perform[0],
            perform[1],
            seed=seed,
            tables=tables,
            keep_log=False,
            llm=llm.with_max_tokens(PERFORMANCE_MAX_TOKENS) if llm is not None else None,
            guidance=guidance,
        )
        for seed in seeds
    )
    return NegotiatedRun(env=env.id, negotiation=record, metrics=metrics, performances=games)


def check_names(customer: str, supplier: str, translator: str, perform: tuple[str, str]) -> None:
    """`UnknownName` unless the negotiators, the translator and the performing agents name ones
    `negotiate_and_perform` plays."""
    check(customer, NEGOTIATION, "customer")
    check(supplier, NEGOTIATION, "supplier")
    check(perform[0], "contractsim", "customer", "performing Customer")
    check(perform[1], "contractsim", "supplier", "performing Supplier")
    if translator != "rules" and model_of(translator) is None:
        raise UnknownName(f"unknown translator {translator!r}; use rules or llm[:MODEL]")


def _mean(values: list) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


class NegotiationSummary(Frozen):
    """Negotiations of a sweep over environments: how many agreed, their mean ContractSim paper, App. C.5 metrics, the model use."""

    negotiations: int
    agreed: int
    mean_gain_customer: float | None
    mean_gain_supplier: float | None
    mean_p_sat: float | None
    mutual_benefit: int
    performance_games: int
    llm: LlmUsage

    @classmethod
    def of(cls, runs: list[NegotiatedRun]) -> NegotiationSummary:
        agreed = [r for r in runs if r.metrics.agreed]
        return cls(
            negotiations=len(runs),
            agreed=len(agreed),
            mean_gain_customer=_mean([r.metrics.gain_customer for r in agreed]),
            mean_gain_supplier=_mean([r.metrics.gain_supplier for r in agreed]),
            mean_p_sat=_mean([r.metrics.p_sat for r in agreed]),
            mutual_benefit=sum(bool(r.metrics.mutual_benefit) for r in agreed),
            performance_games=sum(len(r.performances) for r in runs),
            llm=LlmUsage.of(
                [c for r in runs for c in (*r.negotiation.llm_calls, *(c for g in r.performances for c in g.llm_calls))]
            ),
        )
