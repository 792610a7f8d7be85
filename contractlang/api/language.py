"""The language verbs with the CLI's defaults: fmt, trace, render, translate, and those that need the solvers,
verify (CT-Bench rules `authors`) and solve (the CLI's disk cache of DP tables); `load_one` for a file of one
contract."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from contractlang.errors import BadArgument, BadData, Count, Flag, Int, Text, checked
from contractlang.ir import CheckedContract, ContractSimIR, CTBenchIR
from contractlang.vocab import Frozen

__all__ = [
    "Traced",
    "Verifications",
    "fmt",
    "load_one",
    "render",
    "solve",
    "trace",
    "translate",
    "verify",
    "verify_all",
]
"""The verbs and result types of this part of the face (its other functions are their helpers)."""


ContractLike = CheckedContract | str | Path
"""A checked contract, or the file of one."""
Board = Int | Text
"""A CT-Bench board: an ID 0..79, or `ID` / `SET:ID` as text."""
Milliseconds = Annotated[int, Field(gt=0, strict=True)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Environment = Annotated[int, Field(ge=1, le=6, strict=True)]
"""A ContractSim environment 1..6 (ContractSim paper, Table 1)."""


@checked
def load_one(path: str | Path) -> CheckedContract:
    """The one contract of a file, parsed and checked; `ContractError` (with diagnostics) if anything is wrong."""
    from contractlang.source import load as load_all

    contracts = load_all(path)
    if len(contracts) > 1:
        raise BadData(f"{path}: holds {len(contracts)} contracts; contractlang.load reads them all")
    return contracts[0]


def as_checked(contract) -> CheckedContract:
    """A checked contract, from a file (one contract) or as given."""
    if isinstance(contract, CheckedContract):
        return contract
    if isinstance(contract, (str, Path)):
        return load_one(contract)
    raise BadArgument(f"expected a contract file or a checked contract, not {type(contract).__name__}")


@checked
def fmt(source: str | bytes, path: Text = "<input>") -> str:
    """The canonical form of contract source (docs/reference/language.md); `ContractError` with the diagnostics
    of a source that does not parse or holds what the canonical form cannot say."""
    from contractlang.checker import unformattable
    from contractlang.diagnostics import ContractError
    from contractlang.formatter import format_source
    from contractlang.parser import parse

    tree = parse(source, path)
    refused = unformattable(tree)
    if refused:
        raise ContractError(list(refused))
    return format_source(tree)


class Traced(Frozen):
    """A replayed trajectory: the contract it was played under and the Monitor's report (dues, compliance,
    prefix status, enforcement, who breached first), as `contractlang trace --json` prints it."""

    contract: CheckedContract
    """The contract the log was replayed under."""
    report: dict
    """The Monitor's report: ContractSim `weeks` and `verdict`, CT-Bench `steps`, `forfeited` and `finished`."""


@checked
def trace(
    log: str | Path, contract: ContractLike | None = None, rules: Text = "authors", floors: Text = "cs14"
) -> Traced:
    """Replay the event log `log` under `contract` (default: the one its header names) and the rule set it was
    played under: a CT-Bench log under `rules` ([CT-24a]), a ContractSim one under `floors` ([CS-14a]); a header
    naming a rule set overrides a default. `TraceError` (`file:line: message`) for a malformed log."""
    from contractlang.files import read_capped
    from contractlang.interpreter import Rules
    from contractlang.interpreter.rounds import DEFAULT_FLOORS, FLOOR_RULES
    from contractlang.interpreter.trace import header_contract, read_events, read_header, replay, trace_json
    from contractlang.vocab import RULE_SETS
    from games.game import game_for_contract, games_taking

    raw = read_capped(Path(log))
    header = read_header(raw, str(log))
    if contract is None:
        if header is None:
            raise BadData(
                f"{log} starts with no header naming its contract: give it, `contractlang trace CONTRACT LOG` "
                "(contract= in Python)"
            )
        chosen = header_contract(header, str(log))[0]
    else:
        chosen = as_checked(contract)
    if header is not None and header.rules is not None and rules == "authors":
        rules = header.rules
    if header is not None and header.floors is not None and floors == DEFAULT_FLOORS:
        floors = header.floors
    choose(floors, tuple(FLOOR_RULES), "floor rule set")
    choose(rules, RULE_SETS, "rule set")
    game = game_for_contract(chosen.ir)
    if floors != DEFAULT_FLOORS and not game.takes("floors"):
        raise BadArgument(
            f"floors is a rule of {games_taking('floors')} games; this log is of a {game.title} game",
            "floors",
        )
    events = read_events(raw, str(log), chosen.ir.kind)
    monitor, steps = replay(chosen.ir, events, str(log), Rules.named(rules), floors)
    return Traced(contract=chosen, report=trace_json(monitor, steps))


def choose(value: str, allowed: Sequence[str], what: str) -> str:
    """`value` if it is one of `allowed`, else `UnknownName` listing them."""
    from contractlang.errors import UnknownName

    if value not in allowed:
        raise UnknownName(f"unknown {what} {value!r}; choose from {', '.join(allowed)}")
    return value


@checked
def render(contract: ContractLike | ContractSimIR | CTBenchIR, setting: Text | None = None) -> str:
    """The contract as prose, every term explicit, termination last; `setting` re-labels a ContractSim contract
    into catering, hotel or ai-hosting."""
    from contractlang.render import render as render_prose
    from contractlang.vocab import SETTINGS

    if setting is not None:
        choose(setting, tuple(SETTINGS), "setting")
    ir = contract if isinstance(contract, (ContractSimIR, CTBenchIR)) else as_checked(contract).ir
    if setting is not None and not isinstance(ir, ContractSimIR):
        raise BadArgument(f"setting re-labels ContractSim contracts; {ir.name} is a CT-Bench agreement", "setting")
    return render_prose(ir, setting=setting)


@checked
def translate(
    text: Text,
    name: Text | None = None,
    backend: Text = "rules",
    model: Text | None = None,
    max_tokens: Count = 4096,
    timeout: Seconds = 60.0,
    retries: Annotated[int, Field(ge=0, strict=True)] = 3,
    base_url: Text | None = None,
    cache: str | Path | None = None,
    verify: Flag = True,
):
    """Contract prose to checked DSL (the `Translation`): by the offline rules, or by an LLM (`anthropic`,
    `openai`) whose parser, checker and — with `verify` — z3 findings are fed back for repair; `name` is the
    contract's when the text gives none ("contract" unless given); `timeout` seconds
    bound the whole translation. A missing term is reported, never filled in. Results are cached in `cache`
    (default .contractlang-cache/translations.sqlite)."""
    from contractlang.llm import DEFAULT_MODEL, PROVIDERS, LlmSettings
    from contractlang.translate import DEFAULT_CACHE, TranslationCache, translate_text
    from solver.verify import translation_checks

    choose(backend, ("rules", *PROVIDERS), "backend")
    if backend == "openai" and model is None:
        raise BadArgument("backend openai needs model (the model the server serves, e.g. gpt-5)", "backend")
    settings = LlmSettings(
        model=model or DEFAULT_MODEL, max_tokens=max_tokens, timeout_seconds=timeout, max_retries=retries,
        base_url=base_url,
    )  # fmt: skip
    return translate_text(
        text,
        name=name or "contract",
        backend=backend,
        cache=TranslationCache(Path(cache) if cache else DEFAULT_CACHE),
        settings=settings,
        extra_checks=(translation_checks,) if verify else (),
    )


class Verifications(Frozen):
    """The z3 reports of every contract of a file, and per contract what a refuted check means beyond its message
    (by check name)."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    reports: tuple[Any, ...]
    """A `VerificationReport` per contract of the file, in its order: each check proved, refuted or unknown."""
    notes: tuple[dict[str, str], ...]
    """Per contract, by check name, what a refuted check means beyond its message."""


def verifier_inputs(env: int | None, board, board_set: str | None = None, header: str | None = None, floors="cs14"):
    """The verifier's environment (under `floors`, [CS-14a]) and board description for `env` and `board` (ID or
    SET:ID, with `board_set` and the contract header's set `header`); None where not given."""
    from games.contractsim.environments import environment
    from games.ctbench.board import board_ref
    from games.ctbench.verify_board import board_spec

    spec = None
    if board is not None:
        bench = board_ref(str(board), **{"--set": board_set, "the contract's game header": header})
        spec = board_spec(bench.board, f"board {bench.ref}")
    return (environment(env, floors) if env is not None else None), spec


@checked
def verify(
    contract: ContractLike,
    env: Environment | None = None,
    board: Board | None = None,
    board_set: Text | None = None,
    rules: Text = "authors",
    timeout_ms: Milliseconds = 5000,
    floors: Text = "cs14",
):
    """z3's verdict on every check of the contract (a file or a checked contract), against ContractSim
    environment `env` (its plans under the floor rule set `floors`, [CS-14a]) or CT-Bench board `board` (ID or
    SET:ID, in `board_set` when given) when given; CT-Bench entries are enforced by `rules` (the authors' engine
    by default, as `contractlang verify`)."""
    checked_contract = as_checked(contract)
    header = getattr(checked_contract.ir, "board_set", None)
    return _verify(checked_contract, env, board, board_set, header, rules, timeout_ms, floors)


def _verify(contract: CheckedContract, env, board, board_set, header, rules, timeout_ms, floors):
    """One contract's report; `header` is the board set its file's game header names."""
    from contractlang.interpreter import Rules
    from contractlang.vocab import RULE_SETS
    from solver.verify import verify as run_verify

    environment, spec = verifier_inputs(env, board, board_set, header, floors)
    enforced = Rules.named(choose(rules, RULE_SETS, "rule set"))
    return run_verify(contract, env=environment, board=spec, timeout_ms=timeout_ms, rules=enforced)


@checked
def verify_all(
    path: str | Path,
    env: Environment | None = None,
    board: Board | None = None,
    board_set: Text | None = None,
    rules: Text = "authors",
    timeout_ms: Milliseconds = 5000,
    floors: Text = "cs14",
) -> Verifications:
    """`verify` for every contract of the file at `path`, as `contractlang verify` reports them, with the notes a
    refuted check needs: a synthetic contract's refuted `arithmetic.totals` is the set's design ([CS-34a])."""
    from contractlang import load
    from games.experiments.synth import UNTIED_PRICES_NOTE, in_synthetic_set

    contracts = load(path)
    headers = {b for c in contracts if (b := getattr(c.ir, "board_set", None))}
    header = next(iter(headers)) if len(headers) == 1 else None
    reports = [_verify(c, env, board, board_set, header, rules, timeout_ms, floors) for c in contracts]
    synthetic = in_synthetic_set(Path(path))
    notes = [
        {"arithmetic.totals": UNTIED_PRICES_NOTE}
        if synthetic and any(c.name == "arithmetic.totals" and c.status == "refuted" for c in r.checks)
        else {}
        for r in reports
    ]
    return Verifications(reports=tuple(reports), notes=tuple(notes))


@checked
def solve(
    contract: ContractLike,
    env: Environment,
    cache_dir: str | Path | None = None,
    cache: Flag = True,
    floors: Text = "cs14",
    progress: Callable[[int, int], None] | None = None,
    cached: Callable[[bool], None] | None = None,
):
    """The `SolveResult` (P_sat, expected utilities, completeness) of a ContractSim contract in environment `env`
    under the floor rule set `floors` ([CS-14a]) (the exact DP, ContractSim paper, App. C.1), with the CLI's
    disk cache: `$CONTRACTLANG_DP_CACHE`, else .contractlang-cache/dp (`cache_dir` to choose, `cache=False` to
    keep nothing). `progress(done, total)` hears the solve advance; `cached` hears whether the table was kept."""
    from games.contractsim.environments import environment
    from games.game import game_for_contract
    from solver.dp import TableCache
    from solver.dp.cache import default_dir

    checked_contract = as_checked(contract)
    if not isinstance(checked_contract.ir, ContractSimIR):  # the DP solves ContractSim's rounds
        raise BadData(
            f"{checked_contract.ir.name}: solve needs a ContractSim contract; "
            f"this one is for {game_for_contract(checked_contract.ir).title}"
        )
    tables = TableCache((Path(cache_dir) if cache_dir else default_dir()) if cache else None)
    result, _, hit = tables.solve(checked_contract.ir, environment(env, floors), progress=progress)
    if cached is not None:
        cached(hit)
    return result
