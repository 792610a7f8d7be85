"""Offline negotiators, so a whole negotiation runs without an API key: a Supplier that offers contracts in
order of its own exact DP utility, and a Customer that accepts the first whose exact utility beats walking
away (u_Cust(⊥) = B). Both read proposals the way the game does: prose translated to the IR, then the DP."""

from __future__ import annotations

import json

from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient
from contractlang.render.prose import render
from contractlang.translate import Translation, TranslationCache, translate_text
from games.contractsim.negotiation import NegotiationObservation, contract_of, utilities, within_budget
from games.external import ExternalAgent
from solver.dp import TableCache
from solver.dp.induction import SolveResult
from solver.environment import SupplyEnvironment
from solver.verify import translation_checks


class Appraiser:
    """Translates contract prose (faithful, arithmetic-checked; the rules backend, or the LLM translator on
    `translator`) and solves it exactly in one environment; both are memoised, since a negotiation reads the
    same proposal several times."""

    def __init__(
        self,
        env: SupplyEnvironment,
        tables: TableCache,
        translator: LlmClient | None = None,
        cache: TranslationCache | None = None,
    ):
        self.env = env
        self.tables = tables
        self.translator = translator
        self.cache = cache
        self._translations: dict[str, Translation] = {}
        self._results: dict[ContractSimIR, SolveResult] = {}

    def translate(self, text: str) -> Translation:
        if text not in self._translations:
            self._translations[text] = translate_text(
                text,
                name="proposal",
                backend="rules" if self.translator is None else self.translator.settings.provider,
                cache=self.cache,
                client=self.translator,
                extra_checks=(translation_checks,),
            )
        return self._translations[text]

    def solve(self, ir: ContractSimIR) -> SolveResult:
        if ir not in self._results:
            self._results[ir] = self.tables.solve(ir, self.env)[0]
        return self._results[ir]


def _reply(response: str, **action) -> str:
    return json.dumps({"response": response, **action})


class ScriptedSupplier:
    """Offers each candidate it gains from (U_Supp > 0, payments within the budget), best for itself first;
    terminates when none is left."""

    name = "scripted"

    def __init__(self, candidates: list[ContractSimIR], appraiser: Appraiser):
        budget = appraiser.env.budget
        worth = []
        for ir in (ir for ir in candidates if within_budget(ir, budget)):
            result = appraiser.solve(ir)
            if result.u_supplier is not None and result.u_supplier > 0:
                worth.append((-result.u_supplier, ir.name, ir))
        self.offers = [render(ir) for _, _, ir in sorted(worth, key=lambda w: (w[0], w[1]))]

    def act(self, observation: NegotiationObservation) -> str:
        if not self.offers:
            return _reply("I have no further offer; I end the negotiation.", terminate=True)
        return _reply("Here is my offer.", contract=self.offers.pop(0))


class ScriptedCustomer:
    """Accepts the Supplier's proposal of the previous round when its exact expected utility is at least the
    budget it keeps by walking away (non-negative expected gain, ContractSim paper, App. C.5); otherwise asks for another offer."""

    name = "scripted"

    def __init__(self, appraiser: Appraiser):
        self.appraiser = appraiser

    def gain(self, text: str) -> float | None:
        translation = self.appraiser.translate(text)
        ir = contract_of(translation)
        if ir is None or translation.well_formed is False:
            return None
        if not within_budget(ir, self.appraiser.env.budget):
            return None
        u_customer, _ = utilities(self.appraiser.solve(ir))
        return u_customer - self.appraiser.env.budget * ir.setting_info.multiplier

    def act(self, observation: NegotiationObservation) -> str:
        if observation.can_accept:
            gain = self.gain(observation.active_proposal)
            if gain is not None and gain >= 0:
                return _reply("I accept.", accept=True)
        return _reply("Please make me an offer." if observation.round == 1 else "That does not work for me.")


class ExternalNegotiator(ExternalAgent):
    """A negotiator program (`cmd:PROGRAM`): each request carries a `NegotiationObservation`; its answer line
    is the turn's JSON object itself (ContractSim paper, Sec. 3), read like any negotiator's reply ([CS-21])."""

    def __init__(self, name: str):
        super().__init__(name, "contractsim-negotiation")

    def act(self, observation: NegotiationObservation) -> str:
        return self.exchange(observation).strip()
