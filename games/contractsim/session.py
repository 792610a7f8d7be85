"""A negotiated ContractSim game from end to end: negotiation (§8) → the agreed contract, translated → its §13
metrics from the exact DP → performance games on it (§10) — for any negotiators, offline or LLM."""

from __future__ import annotations

from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient, agent_model
from contractlang.vocab import Frozen
from contractlang.translate.llm import MAX_TOKENS as TRANSLATION_MAX_TOKENS
from games.contractsim.llm_agents import PERFORMANCE_MAX_TOKENS, LlmNegotiator
from games.contractsim.negotiation import NegotiationMetrics, NegotiationRecord, negotiate, negotiation_metrics
from games.contractsim.negotiators import Appraiser, ExternalNegotiator, ScriptedCustomer, ScriptedSupplier
from games.contractsim.run import RunRecord, play
from games.external import closing_agents, is_external
from solver.dp import TableCache
from solver.environment import SupplyEnvironment


class NegotiatedRun(Frozen):
    """One negotiation, its metrics, and the performance games played on the agreed contract (if any)."""

    env: int
    negotiation: NegotiationRecord
    metrics: NegotiationMetrics
    performances: tuple[RunRecord, ...] = ()


def negotiate_and_perform(env: SupplyEnvironment, customer: str, supplier: str, offers: list[ContractSimIR],
                          tables: TableCache, translator: str = "rules", perform: tuple[str, str] = ("rcc", "rcc"),
                          seeds: tuple[int, ...] = (42,), llm: LlmClient | None = None,
                          guidance: tuple[str, ...] = ()) -> NegotiatedRun:
    """Negotiators are `scripted` (the Supplier offers `offers`), `llm[:MODEL]` or `cmd:PROGRAM`; every proposal
    is read by `translator` (rules or llm[:MODEL]); each seed is one performance game by `perform`."""
    game = llm.for_game(f"negotiation/env{env.id}/{customer}/{supplier}/{translator}") if llm is not None else None
    translator_model = agent_model(translator)
    # the translator and the performance games send what `translate` and `run` send (the paper's scaffold)
    appraiser = Appraiser(env, tables, translator=game.with_model(translator_model).with_max_tokens(
        TRANSLATION_MAX_TOKENS) if translator_model else None)
    setting = offers[0].setting_info

    def negotiator(name: str, role: str):
        if is_external(name):
            return ExternalNegotiator(name)
        model = agent_model(name)
        if model is not None:
            return LlmNegotiator(role, game.with_model(model), env, setting, guidance)
        return ScriptedCustomer(appraiser) if role == "customer" else ScriptedSupplier(offers, appraiser)

    with closing_agents([negotiator(customer, "customer"), negotiator(supplier, "supplier")]) as (c, s):
        record = negotiate(env, c, s, appraiser.translate)
    if game is not None:
        record = record.model_copy(update={"llm_calls": tuple(game.calls)})
    metrics = negotiation_metrics(record, env, appraiser.solve)
    if not metrics.agreed:
        return NegotiatedRun(env=env.id, negotiation=record, metrics=metrics)
    games = tuple(play(record.agreed.terms, env, perform[0], perform[1], seed=seed, tables=tables, keep_log=False,
                       llm=llm.with_max_tokens(PERFORMANCE_MAX_TOKENS) if llm is not None else None,
                       guidance=guidance) for seed in seeds)
    return NegotiatedRun(env=env.id, negotiation=record, metrics=metrics, performances=games)
