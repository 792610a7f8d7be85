"""NL → DSL translation: the rules backend (offline default) or an LLM, behind one cached entry point."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from contractlang.checker import CheckResult
from contractlang.formatter import format_ir
from contractlang.llm import PROVIDERS, ApiKeys, LlmClient, LlmSettings, LlmUnavailable, MissingApiKey, endpoint
from contractlang.source import check_source
from contractlang.translate.cache import TranslationCache, cache_key
from contractlang.translate.checks import ExtraCheck, Inconsistency, run_checks
from contractlang.translate.llm import compile_with_llm
from contractlang.translate.rules import translate as rules_translate
from contractlang.vocab import Frozen

__all__ = ["DEFAULT_CACHE", "MissingApiKey", "Translation", "TranslationCache", "translate_text"]

RULES_MODEL = "rules-v6"  # bump whenever the rules backend reads some text differently
DEFAULT_CACHE = Path(".contractlang-cache") / "translations.sqlite"


class Translation(Frozen):
    """A translation and its verdicts: `ok` (complete and checks; faithful to the text, which may still
    contradict itself) and `well_formed` (ok with no arithmetic inconsistency, [CS-31]; None when the
    arithmetic checks were not run)."""

    ok: bool
    well_formed: bool | None
    dsl: str
    terms: dict | None
    missing: list[str]
    attempts: int
    cached: bool
    backend: str
    model: str
    inconsistencies: list[Inconsistency] = []
    notes: list[str] = []
    diagnostics: list[dict] = []
    error: str | None = None

    @property
    def status(self) -> str:
        """ok, not well-formed (faithful, but the text contradicts itself), parse-incomplete, or failed."""
        if self.ok:
            return "not well-formed" if self.well_formed is False else "ok"
        if self.missing and all(d["code"].startswith("E4") for d in self.diagnostics):
            return "parse-incomplete"
        return "failed"


def _missing_from(diagnostics) -> list[str]:
    return [d.message.removeprefix("parse-incomplete: ") for d in diagnostics if d.code.startswith("E4")]


def _failure(result, missing: list[str]) -> str | None:
    """Why a translation is not ok, in one line; None when it is."""
    beyond = [d for d in result.diagnostics if not d.code.startswith("E4")]
    if beyond:
        more = f" (and {len(beyond) - 1} more)" if len(beyond) > 1 else ""
        return f"the translated contract does not check: {beyond[0].message}{more}"
    if missing:
        return f"{len(missing)} term(s) the text does not settle"
    if not result.contracts:
        return "the translation holds no contract"
    return None


def translate_text(
    text: str,
    name: str = "contract",
    backend: str = "rules",
    cache: TranslationCache | None = None,
    settings: LlmSettings | None = None,
    extra_checks: tuple[ExtraCheck, ...] = (),
    client: LlmClient | None = None,
) -> Translation:
    """Translate contract prose to checked DSL; a cached result for the same key is returned as is. The LLM
    backends (a provider: anthropic, openai) use `client` (so its calls join that client's ledger), else one made
    from `settings`; the cache key holds the endpoint the calls go to."""
    llm = backend in PROVIDERS
    if backend != "rules" and not llm:
        raise ValueError(f"unknown backend {backend!r}; use rules, {' or '.join(PROVIDERS)}")
    settings = (
        client.settings
        if client is not None
        else (settings or LlmSettings()).model_copy(update={"provider": backend} if llm else {})
    )
    model = RULES_MODEL if backend == "rules" else settings.model
    keyed_text = f"{name}\x00{text}"
    where = endpoint(backend, settings.base_url) if llm else ""
    key = cache_key(backend, model, keyed_text, where)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            try:
                return Translation(**{**hit, "cached": True})
            except ValidationError:
                pass  # a row this version cannot read is translated afresh and replaced
    unread: tuple[str, ...] = ()
    if backend == "rules":
        rules = rules_translate(text, name)
        dsl, attempts, error, notes = (
            rules.dsl,
            [{"attempt": 1, "response_text": rules.dsl}],
            rules.error,
            list(rules.notes),
        )
        unread = rules.unread
    else:
        if client is None:
            try:
                client = LlmClient(settings, ApiKeys.from_environment())
            except LlmUnavailable as exc:
                raise type(exc)(f"{exc}; or use --backend rules (offline)") from None
        outcome = compile_with_llm(text, name, client, extra_checks)
        dsl, attempts, error, notes = outcome.dsl, outcome.attempts, outcome.error, outcome.notes
        unread = tuple(outcome.unread)
    # a call that failed before any contract came back has nothing to check
    result = (
        CheckResult(contracts=(), diagnostics=()) if error and not dsl.strip() else check_source(dsl, "<translation>")
    )
    if result.ok and result.contracts:
        # the verdict is on the text written out, which spells out defaults the answer may have left implicit
        dsl = format_ir(*(c.ir for c in result.contracts))
        result = check_source(dsl, "<translation>")
    missing = _missing_from(result.diagnostics) + list(unread)
    ok = error is None and _failure(result, missing) is None
    inconsistencies = run_checks(result.contracts, extra_checks) if ok else []
    well_formed = (not inconsistencies if extra_checks else None) if ok else False
    translation = Translation(
        ok=ok,
        well_formed=well_formed,
        dsl=dsl,
        terms=result.contracts[0].ir.terms_json() if result.ok and result.contracts else None,
        missing=missing,
        attempts=len(attempts),
        cached=False,
        backend=backend,
        model=model,
        inconsistencies=inconsistencies,
        notes=notes,
        diagnostics=[d.to_json() for d in result.diagnostics],
        error=error or _failure(result, missing),
    )
    if cache is not None:  # a failed run is audited too, but never served as an answer
        cache.put(key, backend, model, where, keyed_text, translation.model_dump() if error is None else None, attempts)
    return translation
