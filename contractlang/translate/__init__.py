"""NL → DSL translation: the rules backend (offline default) or an LLM, behind one cached entry point."""

from __future__ import annotations

import os
from pathlib import Path

from contractlang import check_source
from contractlang.formatter import format_ir
from contractlang.translate.cache import TranslationCache, cache_key
from contractlang.translate.llm import ExtraCheck, LlmSettings, compile_with_llm
from contractlang.translate.rules import translate as rules_translate
from contractlang.vocab import Frozen

RULES_MODEL = "rules-v1"
DEFAULT_CACHE = Path(".contractlang-cache") / "translations.sqlite"


class MissingApiKey(Exception):
    """`--backend anthropic` without ANTHROPIC_API_KEY."""


class Translation(Frozen):
    ok: bool
    dsl: str
    terms: dict | None
    missing: list[str]
    attempts: int
    cached: bool
    backend: str
    model: str
    diagnostics: list[dict] = []
    error: str | None = None


def _missing_from(diagnostics) -> list[str]:
    return [d.message.removeprefix("parse-incomplete: ") for d in diagnostics if d.code.startswith("E4")]


def translate_text(text: str, name: str = "contract", backend: str = "rules", cache: TranslationCache | None = None,
                   settings: LlmSettings | None = None, extra_checks: tuple[ExtraCheck, ...] = ()) -> Translation:
    """Translate contract prose to checked DSL; a cached result for the same key is returned as is."""
    settings = settings or LlmSettings()
    model = RULES_MODEL if backend == "rules" else settings.model
    keyed_text = f"{name}\x00{text}"
    key = cache_key(backend, model, keyed_text)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return Translation(**{**hit, "cached": True})
    if backend == "rules":
        rules = rules_translate(text, name)
        dsl, attempts, error = rules.dsl, [{"attempt": 1, "response_text": rules.dsl}], None
    elif backend == "anthropic":
        api_key = os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise MissingApiKey("ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=... to use the anthropic "
                                "backend, or use --backend rules (offline)")
        outcome = compile_with_llm(text, name, settings, api_key, extra_checks)
        dsl, attempts, error = outcome.dsl, outcome.attempts, outcome.error
    else:
        raise ValueError(f"unknown backend {backend!r}; use rules or anthropic")
    result = check_source(dsl, "<translation>")
    if result.ok and result.contracts:
        dsl = format_ir(*(c.ir for c in result.contracts))
    problems = []
    if result.ok:
        for check in extra_checks:
            for contract in result.contracts:
                problems += check(contract)
    ok = result.ok and not problems and error is None
    translation = Translation(
        ok=ok, dsl=dsl, terms=result.contracts[0].ir.terms_json() if result.ok and result.contracts else None,
        missing=_missing_from(result.diagnostics), attempts=len(attempts), cached=False, backend=backend,
        model=model, diagnostics=[d.to_json() for d in result.diagnostics], error=error,
    )
    if cache is not None and error is None:
        cache.put(key, backend, model, keyed_text, translation.model_dump(), attempts)
    return translation
