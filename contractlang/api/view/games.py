"""One game's page data: a ContractSim game week by week beside the contract and the RCC baseline, or a CT-Bench
game move by move. A record that keeps no events is played again from its seed (the game is deterministic in
it, [CS-11]), and the page says which it shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from contractlang.api.analysis import Baselines, initial_state
from contractlang.api.analysis import decisions as beside_rcc
from contractlang.api.view.index import GameRow, unwrapped
from contractlang.api.view.options import PageError, ViewOptions
from contractlang.diagnostics import Span
from contractlang.errors import UnknownName
from contractlang.formatter import format_ir
from contractlang.interpreter.contractsim import WeekStatus, breach_reason
from contractlang.interpreter.rounds import DEFAULT_FLOORS
from contractlang.ir import ContractSimIR, CTBenchIR
from contractlang.llm import ApiKeys, LlmClient
from contractlang.render import relabel
from contractlang.scenario.clauses import terms_key
from contractlang.source import check_source
from games.agents import AgentError, model_of, names_code
from games.contractsim.environments import environment
from games.contractsim.game import Order, Pay
from games.contractsim.log import OrderPlaced, WeekShocks
from games.contractsim.play import RunRecord, play
from games.contractsim.registered import GAME_TYPE as CONTRACTSIM
from games.ctbench.board import GOAL_BONUS, INITIAL_CHIPS, PLAYERS, START, benchmark_board
from games.ctbench.log import LOG_EVENT
from games.ctbench.play import GameRecord
from games.ctbench.play import play as play_ctbench
from games.ctbench.registered import GAME_TYPE as CTBENCH
from games.game import PlayRecord, SetupError, game_for_contract, game_type, load_game


def game_page(raw: bytes, row: GameRow, options: ViewOptions, baselines: Baselines) -> dict:
    """The page data of one game of the list, from its record's line (`ViewIndex.line`)."""
    if row.line == 0:
        return event_log_page(raw, row, options, baselines)
    return RECORD_PAGES.get(row.game, played_page)(unwrapped(json.loads(raw)), row, options, baselines)


def played_page(obj: dict, row: GameRow, options: ViewOptions, baselines: Baselines) -> dict:
    """Any registered game's record (`PlayRecord`): who played each role, what each got, every event in the
    game's own words."""
    record = PlayRecord.model_validate({k: v for k, v in obj.items() if k in PlayRecord.model_fields})
    game = game_type(record.game)
    return {
        "kind": "played",
        "shown": "kept" if record.events else "no events kept",
        "game": game.name,
        "summary": game.summary,
        "seed": record.seed,
        "setup": record.setup,
        "agents": record.agents,
        "outcome": record.outcome,
        "events": [{"type": e.type, "text": e.describe()} for e in record.events],
        "llm_calls": _llm_calls(record.llm_calls),
        "llm_usage": record.llm_usage.model_dump(),
    }


def _contractsim_record_page(obj: dict, row: GameRow, options: ViewOptions, baselines: Baselines) -> dict:
    """A ContractSim record of any store: a sweep's or an experiment's job, a negotiation's performances, a
    synthetic set's runs, a `run --json` object."""
    if "job" in obj and isinstance(obj.get("run"), dict) and "performances" in obj["run"]:
        record = _run(obj["run"]["performances"][row.part])
        page = contractsim_page(record, ContractSimIR.from_json_value(record.contract_ir), options, baselines)
        negotiation = obj["run"]["negotiation"]
        return {
            **page,
            "negotiation": {
                "outcome": negotiation["outcome"],
                "turns": [{k: t[k] for k in ("round", "role", "response")} for t in negotiation["turns"]],
            },
        }
    if "job" in obj and "run" in obj:
        job, run = obj["job"], obj["run"]
        setting = job.get("setting")
        contract = ContractSimIR.from_json_value(job["contract"])
        ir = relabel(contract, setting) if setting not in (None, contract.setting) else contract
        page = contractsim_page(_run(run), ir, options, baselines)
        # told in another setting, the game was played, and is covered, under the job's own terms
        return {**page, "source": {**page["source"], "terms": terms_key(contract)}}
    run = obj["runs"][row.part] if "runs" in obj else obj
    record = _run(run)
    if record.contract_ir is None:
        raise PageError("the record holds no contract terms: nothing to show the weeks against")
    return contractsim_page(record, ContractSimIR.from_json_value(record.contract_ir), options, baselines)


def _run(obj: dict) -> RunRecord:
    """A run record; `run --json` keeps its events as `trajectory`."""
    fields = {k: v for k, v in obj.items() if k in RunRecord.model_fields}
    if not fields.get("log") and obj.get("trajectory"):
        fields["log"] = obj["trajectory"]
    return RunRecord.from_json_value(fields)


def ctbench_record(obj: dict) -> GameRecord:
    """A game record; `run --json` gives the scores by player."""
    fields = {k: v for k, v in obj.items() if k in GameRecord.model_fields}
    if isinstance(fields.get("scores"), dict):
        fields["scores"] = (fields["scores"]["red"], fields["scores"]["blue"])
    return GameRecord.from_json_value(fields)


def _span(span: Span) -> list[int]:
    return [span.line, span.column, span.end_line, span.end_column]


def source_view(ir: ContractSimIR | CTBenchIR, options: ViewOptions) -> dict:
    """The contract's text and each clause's span: the file given with --contract, else the canonical form; and
    the key of its terms, which its clause coverage is found under."""
    key = terms_key(ir)
    if options.contract is not None and options.contract.ir == ir and options.source is not None:
        return {"text": options.source, "spans": {k: _span(s) for k, s in options.contract.spans.items()}, "terms": key}
    return {**_canonical_view(type(ir), ir.model_dump_json()), "terms": key}


@lru_cache(maxsize=64)
def _canonical_view(kind: type, ir_json: str) -> dict:
    """The canonical form's text and spans, parsed once per contract: the games of a store share a few."""
    text = format_ir(kind.model_validate_json(ir_json))
    checked = check_source(text, "<record>")
    spans = checked.contracts[0].spans if checked.contracts else {}
    return {"text": text, "spans": {k: _span(s) for k, s in spans.items()}}


def _llm_client(names: list[str], options: ViewOptions) -> LlmClient | None:
    """A client that only replays recordings (the settings the game was played with key them): a rebuilt LLM
    game is the recorded one, never new calls."""
    if not any(model_of(n) for n in names):
        return None
    return LlmClient(options.llm.model_copy(update={"replay": True}), ApiKeys.from_environment())


def _rebuildable(names: list[str], options: ViewOptions) -> None:
    programs = [n for n in names if names_code(n)]
    if programs and not options.allow_commands:
        raise PageError(
            f"the record keeps no events, and rebuilding it would run the code {programs[0]!r} names; "
            "run `contractlang view` with --allow-commands to let it"
        )


@contextmanager
def rebuilding() -> Iterator[None]:
    """A game that cannot be played again (an LLM response not in the recordings, a program that fails, an agent
    played from Python) is a page that says so."""
    try:
        yield
    except AgentError as exc:
        raise PageError(f"the record keeps no events and the game could not be rebuilt: {exc}") from None
    except UnknownName as exc:
        raise PageError(
            f"the record keeps no events and the game cannot be rebuilt here: {str(exc).split(';')[0]} (an agent "
            "played from Python is known only to the program that played it; a `py:` spec can be rebuilt)"
        ) from None


def _llm_calls(calls) -> list[dict]:
    return [
        c.model_dump(
            include={
                "purpose",
                "model",
                "prompt",
                "reply",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cost_usd",
                "error",
            }
        )
        for c in calls
    ]


# --- ContractSim ------------------------------------------------------------------------------------------------


def _clauses(status: WeekStatus, ir: ContractSimIR) -> list[str]:
    """The clauses a week's verdict read: its schedule entry first, then the contingencies that shaped it."""
    keys = [f"pay.{status.week}" if status.role == "customer" else f"deliver.{status.week}"]
    c = ir.contingencies
    if status.role == "supplier":
        keys += [
            k
            for k, on in (
                ("substitution", c.substitution),
                ("payment_deduction", c.payment_deduction),
                ("rollover", c.rollover),
            )
            if on
        ]
    elif status.deduction:
        keys.append("payment_deduction")
    if status.enforcement and c.grim_trigger:
        keys.append("on_breach")
    return keys


def _dollars(status: WeekStatus, m: int) -> WeekStatus:
    scale = {k: getattr(status, k) * m for k in ("due", "nominal", "paid") if getattr(status, k) is not None}
    return status.model_copy(update={**scale, "deduction": status.deduction * m})


def week_rows(weeks: tuple[WeekStatus, ...], ir: ContractSimIR, m: int) -> list[dict]:
    """The monitor's weeks in the contract's dollars, each breach with its reason and clauses."""
    rows = []
    for status in weeks:
        shown = _dollars(status, m)
        row = shown.model_dump()
        row["scheduled"] = ir.payment(status.week) if status.role == "customer" else ir.delivery(status.week)
        if not status.compliant:
            row["reason"] = breach_reason(shown, ir)
            row["clauses"] = _clauses(status, ir)
        rows.append(row)
    return rows


def contractsim_page(record: RunRecord, ir: ContractSimIR, options: ViewOptions, baselines: Baselines) -> dict:
    """A ContractSim game week by week: the monitor's verdicts, the shocks, orders, cash and stock, each decision
    beside what RCC would have done in the same state, and an order RC would not have placed beside RC's in
    expected utility (eq. 12's V̂ and P̂)."""
    tables = baselines.tables
    env = environment(record.env)
    log = record.log
    shown = "kept"
    if not log:
        _rebuildable([record.customer, record.supplier], options)
        with rebuilding():
            again = play(
                ir,
                env,
                record.customer,
                record.supplier,
                seed=record.seed,
                tables=tables,
                llm=_llm_client([record.customer, record.supplier], options),
            )
        log = again.log
        same = (again.weeks, again.u_customer, again.u_supplier) == (record.weeks, record.u_customer, record.u_supplier)
        shown = f"rebuilt from seed {record.seed}" + ("" if same else " — it differs from the record")
    m = ir.setting_info.multiplier
    decisions: dict[int, list[dict]] = {}
    after: dict[int, dict] = {}
    state = initial_state(ir, env, record.seed)
    for decision, state in beside_rcc(ir, env, log, record.seed, baselines):
        decisions.setdefault(decision.week, []).append(
            {
                "phase": decision.phase,
                "action": _action(decision.action, m),
                "rcc": _action(decision.rcc, m) if decision.rcc else None,
                "same": decision.same,
                "note": decision.note,
                "observed_breach": decision.observed_breach,
                **({"expected": decision.expected.model_dump(exclude_none=True)} if decision.expected else {}),
            }
        )
        if not isinstance(decision.action, Order):
            after[decision.week] = {
                "cash": state.cash * m,
                "budget_left": state.budget_left * m,
                "inventory": list(state.inventory),
                "paid_total": state.paid_total * m,
                "spend_total": state.spend_total * m,
                "value": state.value_delivered * m,
            }
    rows = week_rows(state.monitor.weeks, ir, m)
    for entry in log:
        if isinstance(entry, WeekShocks):
            rows[entry.week - 1].update(spoiled=list(entry.spoiled), prices=[p * m for p in entry.prices])
        elif isinstance(entry, OrderPlaced):
            rows[entry.week - 1].update(
                order=list(entry.order), cost=entry.cost, received=list(entry.received), stock=list(entry.inventory)
            )
    for row in rows:
        row.update(after.get(row["week"], {}), decisions=decisions.get(row["week"], []))
    verdict = state.monitor.verdict()
    return {
        "kind": CONTRACTSIM.name,
        "shown": shown,
        "contract": ir.name,
        "env": env.id,
        "seed": record.seed,
        "customer": record.customer,
        "supplier": record.supplier,
        "setting": ir.setting,
        "products": list(ir.setting_info.products),
        "inputs": list(ir.setting_info.inputs),
        "u_customer": record.u_customer * m,
        "u_supplier": record.u_supplier * m,
        "budget": env.budget * m,
        "capital": env.capital * m,
        "inventory_cap": env.inventory_cap,
        "verdict": {
            "first_breach": verdict.first_breach,
            "week": verdict.week,
            "reason": breach_reason(_dollars(next(s for s in state.monitor.weeks if s.week == verdict.week), m), ir)
            if verdict.week
            else verdict.reason,
        },
        "weeks": rows,
        "source": source_view(ir, options),
        "contingencies": ir.contingencies.mode,
        "llm_calls": _llm_calls(record.llm_calls),
        "llm_usage": record.llm_usage.model_dump(),
    }


def _action(action, m: int) -> dict:
    if isinstance(action, Pay):
        return {"pay": action.amount * m}
    return {action.kind: list(action.quantities)}


def event_log_page(raw: bytes, row: GameRow, options: ViewOptions, baselines: Baselines) -> dict:
    """A `run --log` event log. One that starts with a header names its contract and game: the game is played
    again from it and shown whole when its events are the log's. Otherwise the monitor's verdicts week by week
    (or the board move by move) against the contract given with --contract; prices, stock and cash are not in
    such a log."""
    from contractlang.interpreter.trace import TraceError, header_contract, read_header

    name = row.contract
    try:
        header = read_header(raw, name)
        if options.contract is None and header is not None:
            checked, text = header_contract(header, name)
            options = options.model_copy(update={"contract": checked, "source": text, "board": header.board})
    except TraceError as exc:
        raise PageError(str(exc)) from None
    if options.contract is None:
        raise PageError(
            "an event log names no contract: run `contractlang view LOG --contract FILE` "
            "(and --board ID for a CT-Bench log)"
        )
    ir = options.contract.ir
    if row.game != ir.kind:
        raise PageError(f"this is a {row.game} event log and {options.contract.file} a {ir.kind} contract")
    whole, why = _from_header(raw, header, ir, options, baselines) if header is not None else (None, "")
    if whole is not None:
        return whole
    page = EVENT_PAGES[game_for_contract(ir).name](raw, name, options)
    return {**page, "shown": page["shown"] + (f"; {why}" if why else "")}


def contractsim_events_page(raw: bytes, name: str, options: ViewOptions) -> dict:
    """A bare ContractSim event log against --contract: the monitor's verdicts week by week."""
    from contractlang.interpreter.trace import TraceError, read_events, replay

    ir = options.contract.ir
    try:
        monitor, _ = replay(ir, read_events(raw, name, ir.kind), name)
    except TraceError as exc:
        raise PageError(str(exc)) from None
    verdict = monitor.verdict()
    return {
        "kind": CONTRACTSIM.name,
        "shown": "events of the log only (no prices, stock or cash)",
        "contract": ir.name,
        "env": None,
        "seed": None,
        "customer": "",
        "supplier": "",
        "setting": ir.setting,
        "products": list(ir.setting_info.products),
        "inputs": list(ir.setting_info.inputs),
        "verdict": verdict.model_dump(),
        "weeks": week_rows(monitor.weeks, ir, 1),
        "source": source_view(ir, options),
        "contingencies": ir.contingencies.mode,
        "llm_calls": [],
        "llm_usage": None,
    }


def _from_header(raw: bytes, header, ir, options: ViewOptions, baselines: Baselines) -> tuple[dict | None, str]:
    """The whole game a header names, played again from its seed, when its monitor events are the log's; else
    None and why not."""
    logged = [json.loads(line) for line in raw.decode("utf-8").splitlines()[1:] if line.strip()]
    agents = list(header.agents.values())
    try:
        _rebuildable(agents, options)
        kind = game_for_contract(ir)
        if set(header.agents) != set(kind.roles):
            return None, "the header names no agents to play it again"
        with rebuilding():
            game = load_game(kind.name, contract=ir, **_header_setup(header))
            played = game.play(header.agents, header.seed, llm=_llm_client(agents, options))
    except SetupError as exc:
        return None, f"the header does not set the game up to play it again: {exc}"
    except PageError as exc:
        return None, str(exc).replace("the record keeps no events", "the log keeps only the monitor's events")
    except ValueError as exc:
        return None, f"the game the header names cannot be played again: {str(exc).splitlines()[0]}"
    again = played.detail
    if json.loads(json.dumps(again.monitor_events())) != logged:
        return None, f"played again from seed {header.seed}, the game differs from the log"
    page = RECORD_VIEWS[kind.name](again, ir, options, baselines)
    return {**page, "shown": f"rebuilt from the log's header (seed {header.seed}); its events are the log's"}, ""


# --- CT-Bench ---------------------------------------------------------------------------------------------------


def _holdings(h) -> dict:
    return {p: h.of(p).model_dump() for p in PLAYERS}


def ctbench_page(record: GameRecord, options: ViewOptions) -> dict:
    """A CT-Bench game: the board, a frame after every move (positions, trails, chips), every event in words,
    the contract and what it transferred, the promises kept and broken."""
    bench = benchmark_board(record.board_id, record.board_set)
    terms = CTBenchIR.from_terms_json(record.contract_terms) if record.contract_terms else None
    log = record.log
    shown = "kept"
    if not log:
        _rebuildable([record.red_agent, record.blue_agent], options)
        with rebuilding():
            again = play_ctbench(
                bench,
                record.condition,
                record.mode,
                record.red_agent,
                record.blue_agent,
                record.seed,
                contract=terms if record.condition == "file" else None,
                visible=record.visible,
                keep_log=True,
                repeat=record.repeat,
                judge=record.judge,
                rules=record.rules,
                llm=_llm_client([record.red_agent, record.blue_agent, record.judge], options),
            )
        log = again.log
        same = (again.scores, again.rounds) == (record.scores, record.rounds)
        shown = f"rebuilt from seed {record.seed}" + ("" if same else " — it differs from the record")
    frames, events = _frames([e.model_dump(mode="json") for e in log], terms)
    return {
        "kind": CTBENCH.name,
        "shown": shown,
        "board_id": record.board_id,
        "board_set": record.board_set,
        "board_class": record.board_class,
        "rules": record.rules,
        "condition": record.condition,
        "mode": record.mode,
        "red": record.red_agent,
        "blue": record.blue_agent,
        "seed": record.seed,
        "board": [[bench.board.colour((r, c)) for c in range(4)] for r in range(4)],
        "frames": frames,
        "events": events,
        "scores": list(record.scores),
        "raw_scores": list(record.raw_scores),
        "baselines": list(record.baselines),
        "finished": list(record.finished),
        "forfeited": list(record.forfeited),
        "end_reason": record.end_reason,
        "coverage": record.coverage,
        "transcript": record.transcript,
        "negotiation": record.negotiation.model_dump(mode="json", exclude={"contract"}) if record.negotiation else None,
        "terms": record.contract_terms,
        "source": source_view(terms, options) if terms else None,
        "llm_calls": _llm_calls(record.llm_calls),
        "llm_usage": record.llm_usage.model_dump(),
        "goal_bonus": GOAL_BONUS,
    }


def _cover_clause(terms: CTBenchIR | None, giver: str, tile) -> str | None:
    if terms is None:
        return None
    return next(
        (f"cover.{k}" for k, c in enumerate(terms.coverage) if c.giver == giver and list(c.tile) == list(tile)), None
    )


def _frames(log: list[dict], terms: CTBenchIR | None) -> tuple[list[dict], list[dict]]:
    """Frame 0 is the start; one more after every move. Chips after a move are those held before it less the
    chip that paid for it."""
    position = {p: list(START) for p in PLAYERS}
    trail = {p: [list(START)] for p in PLAYERS}
    chips = {p: dict(INITIAL_CHIPS[p]) for p in PLAYERS}
    frames = [
        {
            "round": 0,
            "text": "start",
            "position": json.loads(json.dumps(position)),
            "chips": json.loads(json.dumps(chips)),
            "trail": json.loads(json.dumps(trail)),
        }
    ]
    events = []
    tried: dict | None = None
    contract_paid: str | None = None
    for e in log:
        kind, player = e["type"], e.get("player")
        text, clause = _describe(e), None
        if kind == "move_attempt":
            tried = e
            chips = {p: dict(e["holdings"][p]) for p in PLAYERS}
            contract_paid = None
        elif kind == "contract_transfer":
            clause = _cover_clause(terms, e["giver"], e["tile"])
            if e["pays_move"]:
                contract_paid = e["giver"]
            else:
                chips[e["giver"]][e["colour"]] -= 1
                chips[e["receiver"]][e["colour"]] += 1
        elif kind in ("forfeit", "contract_blocked"):
            clause = _cover_clause(terms, e.get("giver", player), e["tile"])
        events.append(
            {
                "round": e.get("round"),
                "player": player or e.get("giver") or e.get("payer"),
                "type": kind,
                "text": text,
                "clause": clause,
                "frame": len(frames),
            }
        )
        if kind == "moved" and tried is not None:
            colour = tried["tile_colour"]
            payer = {"own": player, "pfp": _other(player), "contract": contract_paid}.get(e.get("paid_by", "own"))
            if payer is not None and chips[payer][colour] > 0:
                chips[payer][colour] -= 1
            position[player] = list(e["tile"])
            trail[player].append(list(e["tile"]))
            frames.append(
                {
                    "round": e.get("round"),
                    "text": text,
                    "mover": player,
                    "position": json.loads(json.dumps(position)),
                    "chips": json.loads(json.dumps(chips)),
                    "trail": json.loads(json.dumps(trail)),
                }
            )
    return frames, events


def _other(player: str) -> str:
    return "blue" if player == "red" else "red"


def _chips(c: dict) -> str:
    return ", ".join(f"{n} {colour}" for colour, n in c.items() if n) or "nothing"


def _describe(e: dict) -> str:
    """One log event in its own words (`describe`)."""
    return LOG_EVENT.validate_python(e).describe()


def ctbench_events_page(raw: bytes, name: str, options: ViewOptions) -> dict:
    """A bare CT-Bench event log against --contract on --board: each attempt taken as a move, the contract's
    transfers as the monitor enforces them."""
    from contractlang.interpreter.trace import TraceError, read_events, replay

    if options.board is None:
        raise PageError("a CT-Bench event log needs its board: run `contractlang view LOG --contract FILE --board ID`")
    ir = options.contract.ir
    try:
        events = read_events(raw, name, ir.kind)
        monitor, steps = replay(ir, events, name)
    except TraceError as exc:
        raise PageError(str(exc)) from None
    log = []
    for step in steps:
        event = step.event
        log.append(event)
        enforced = [{k: v for k, v in a.items() if k != "text"} for a in step.enforcement]
        log += enforced
        if event["type"] == "move_attempt":  # a monitor log holds attempts only: each is drawn as the move
            paid = any(a.get("pays_move") for a in enforced)
            log.append(
                {
                    "type": "moved",
                    "player": event["player"],
                    "tile": event["tile"],
                    "paid_by": "contract" if paid else "own",
                }
            )
    bench = benchmark_board(options.board)
    frames, described = _frames(log, ir)
    return {
        "kind": CTBENCH.name,
        "shown": "events of the log only (each attempt drawn as a move)",
        "board_id": options.board,
        "board_set": bench.board_set,
        "board_class": bench.board_class,
        "rules": "",
        "condition": "file",
        "mode": "",
        "red": "",
        "blue": "",
        "seed": None,
        "board": [[bench.board.colour((r, c)) for c in range(4)] for r in range(4)],
        "frames": frames,
        "events": described,
        "scores": None,
        "raw_scores": None,
        "baselines": None,
        "finished": list(monitor.finished),
        "forfeited": list(monitor.forfeited),
        "end_reason": "",
        "coverage": {},
        "transcript": "",
        "negotiation": None,
        "terms": ir.terms_json(),
        "source": source_view(ir, options),
        "llm_calls": [],
        "llm_usage": None,
        "goal_bonus": GOAL_BONUS,
    }


def _header_setup(header) -> dict:
    """The setup a log's header names, for `load_game`: the fields it holds of the game's setup."""
    named = {
        "env": header.env,
        "floors": header.floors or DEFAULT_FLOORS,
        "guidance": header.guidance or (),
        "board": header.board if header.board_set is None else f"{header.board_set}:{header.board}",
        "mode": header.mode,
        "visible": header.visible,
        "rules": header.rules or "authors",
    }
    fields = game_type(header.game).setup.model_fields
    return {k: v for k, v in named.items() if k in fields and v is not None}


def _ctbench_record_page(obj: dict, row: GameRow, options: ViewOptions, baselines: Baselines) -> dict:
    return ctbench_page(ctbench_record(obj), options)


RECORD_PAGES = {CONTRACTSIM.name: _contractsim_record_page, CTBENCH.name: _ctbench_record_page}
RUN_RECORDS = {CONTRACTSIM.name: ("weeks", _run), CTBENCH.name: ("board_id", ctbench_record)}
"""Per game, the field that marks its `run --json` record and how to read one."""
"""Each game's page of a stored record, by the game's name in the list (`GameRow.game`)."""
RECORD_VIEWS = {
    CONTRACTSIM.name: contractsim_page,
    CTBENCH.name: lambda record, ir, options, baselines: ctbench_page(record, options),
}
"""Each game's page of its own record played again."""
EVENT_PAGES = {CONTRACTSIM.name: contractsim_events_page, CTBENCH.name: ctbench_events_page}
"""Each game's page of a bare event log against the contract given."""
