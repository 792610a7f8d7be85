"""LLM agents, judges and the shared client, driven through the real `anthropic` client against a scripted
Messages API on 127.0.0.1: negotiation → translation → performance → metrics for ContractSim, one CT-Bench game
per contract condition, the attempt budgets, and offline replay of recorded runs."""

import json
import os
import re
import socket

import pytest

from contractlang.files import FileError
from contractlang.llm import CallFailed, LlmClient, LlmSettings, MissingApiKey, Recordings, cost_of
from games.agents import AgentError
from games.ctbench.board import benchmark_boards
from games.ctbench.play import play as play_ctbench
from tests.helpers import ROOT, run_cli
from tests.llm_server import ScriptedServer, message, overloaded, prompt_of, text_of

pytestmark = pytest.mark.e2e  # whole games with LLM agents against a scripted server on 127.0.0.1

KEY = "sk-test-not-a-real-key"
OFFER = (ROOT / "examples/agents/external_agent.py").read_text().split('OFFER = """')[1].split('"""')[0]
BOARD = next(b for b in benchmark_boards() if b.board_class == "mutually_dependent")


def env_without_key(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return {**env, **extra}


def cli(*args, key: str | None = None):
    """The command with `key` as the only Anthropic API key it can see."""
    return run_cli(*args, env=env_without_key(**({"ANTHROPIC_API_KEY": key} if key else {})))


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def settings(url: str, tmp_path, **update) -> LlmSettings:
    return LlmSettings(
        **{
            "base_url": url,
            "model": "scripted-model",
            "timeout_seconds": 10,
            "max_retries": 2,
            "recordings": tmp_path / "llm.sqlite",
            **update,
        }
    )


# --- the shared client ---------------------------------------------------------------------------------


def test_client_records_and_replays_offline(tmp_path):
    with ScriptedServer([(200, message("first")), (200, message("second"))]) as server:
        client = LlmClient(settings(server.url, tmp_path, effort="high", thinking=True), KEY).for_game("g1")
        answers = [client.complete("test", "SYSTEM", [{"role": "user", "content": "same"}]) for _ in range(2)]
    assert answers == ["first", "second"]  # the same request twice in a game: two recordings, in order
    body = server.requests[0]
    assert body["system"] == [{"type": "text", "text": "SYSTEM", "cache_control": {"type": "ephemeral"}}]
    assert body["output_config"] == {"effort": "high"} and body["thinking"] == {"type": "adaptive"}
    headers = server.headers[0]
    assert (headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")) == KEY
    assert client.usage.calls == 2 and client.usage.input_tokens == 200 and client.usage.cost_usd is None
    # the replay names the (now closed) server the run was recorded from: nothing is asked of it
    replay = LlmClient(settings(server.url, tmp_path, effort="high", thinking=True, replay=True)).for_game("g1")
    assert [replay.complete("test", "SYSTEM", [{"role": "user", "content": "same"}]) for _ in range(2)] == answers
    assert replay.usage.replayed == 2 and replay.usage.input_tokens == 200
    with pytest.raises(CallFailed, match="no recorded response .* run once without --replay"):
        replay.complete("test", "SYSTEM", [{"role": "user", "content": "same"}])
    other_game = LlmClient(settings(server.url, tmp_path, replay=True)).for_game("g2")
    with pytest.raises(CallFailed, match="game g2"):  # recordings belong to the game that made them
        other_game.complete("test", "SYSTEM", [{"role": "user", "content": "same"}])
    assert Recordings(tmp_path / "llm.sqlite").count() == 2
    assert KEY not in (tmp_path / "llm.sqlite").read_bytes().decode("latin-1")


def test_client_retries_transient_errors_and_fails_in_one_line(tmp_path):
    with ScriptedServer([overloaded(), (200, message("ok"))]) as server:
        client = LlmClient(settings(server.url, tmp_path), KEY)
        assert client.complete("test", "S", [{"role": "user", "content": "x"}]) == "ok"
    assert len(server.requests) == 2 and client.usage.calls == 1
    error = (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    with ScriptedServer([error]) as server:
        client = LlmClient(settings(server.url, tmp_path, recordings=None), KEY)
        with pytest.raises(CallFailed, match="API error 400"):
            client.complete("test", "S", [{"role": "user", "content": "y"}])
    assert client.usage.failed == 1


def test_client_without_key_or_with_a_foreign_recordings_file(tmp_path):
    with pytest.raises(MissingApiKey, match="export ANTHROPIC_API_KEY"):
        LlmClient(LlmSettings())
    import sqlite3

    with sqlite3.connect(tmp_path / "other.sqlite") as db:
        db.execute("CREATE TABLE photos (x)")
    with pytest.raises(FileError, match="not a recordings file of LLM responses"):
        LlmClient(LlmSettings(recordings=tmp_path / "other.sqlite"), KEY)


def test_cost_ledger_uses_list_prices():
    assert cost_of("claude-sonnet-5-5", 1_000_000, 1_000_000) == pytest.approx(12.0)
    assert cost_of("claude-sonnet-5-5", 0, 0, cache_read=1_000_000) == pytest.approx(0.2)
    assert cost_of("no-such-model", 1, 1) is None


# --- ContractSim: negotiation → translation → performance → metrics ----------------------------------

CONTRACTSIM_SCRIPT = [
    (200, message('{"response": "Please make me an offer."}')),  # customer, round 1
    (200, message(json.dumps({"response": "Here is my offer.", "contract": OFFER}))),  # supplier, round 1
    (200, message('{"response": "Deal.", "accept": true}')),  # customer, round 2: agreement [CS-20]
    (200, message("I will pay twenty dollars.")),  # week 1: no JSON → format feedback
    (200, message('{"payment": 20}')),
    (200, message('{"payment": 500}')),  # week 3: over the remaining budget
    (200, message('{"payment": 2.5}')),  # not a whole number
    (200, message('{"amount": 20}')),  # wrong key: the third failure → zero [CS-30]
    (200, message('{"payment": 20}')),  # week 5
    overloaded(),  # week 7: a transport error, retried; it changes nothing
    (200, message('{"payment": 20}')),
    (200, message('{"payment": 20}')),  # week 9
    (200, message('Paying the rest:\n```json\n{"payment": 10}\n```')),  # week 11
]


def negotiate_args(url: str, recordings) -> list[str]:
    return [
        "negotiate",
        "--env",
        "1",
        "--customer",
        "llm",
        "--supplier",
        "llm:claude-opus-5",
        "--perform-customer",
        "llm",
        "--base-url",
        url,
        "--recordings",
        str(recordings),
        "--json",
    ]


def test_a_negotiated_contractsim_game_with_llm_agents_and_its_offline_replay(tmp_path):
    recordings = tmp_path / "llm.sqlite"
    with ScriptedServer(CONTRACTSIM_SCRIPT) as server:
        proc = cli(*negotiate_args(server.url, recordings), key=KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [out] = json.loads(proc.stdout)["runs"]
    negotiation, [performance] = out["negotiation"], out["performances"]
    assert negotiation["outcome"] == "agreed" and negotiation["agreed"]["status"] == "ok"
    assert [t["role"] for t in negotiation["turns"]] == ["customer", "supplier", "customer"]
    assert len(negotiation["llm_calls"]) == 3 and out["metrics"]["agreed"] is True
    paid = [w["paid"] for w in performance["weeks"] if w["role"] == "customer"]
    assert paid == [20, 0, 20, 20, 20, 10] and performance["llm_defaults"] == {"customer": 1}
    assert len(performance["llm_calls"]) == 9 and len(server.requests) == 13
    # negotiation metrics (ContractSim paper, App. C.5) from the DP, the performance game (App. B.2): Env 1 is deterministic, so the RC Supplier's part is exact
    assert out["metrics"]["p_sat"] is not None and performance["u_customer"] == 200 - 90 + sum(
        w["value"] for w in performance["weeks"]
    )
    prompts = [prompt_of(r) for r in server.requests]
    systems = [r["system"][0]["text"] for r in server.requests]
    assert "You open the negotiation." in prompts[0] and "Available actions" in prompts[0]
    assert "accept" in prompts[2].split("Available actions:")[1]  # the Customer may accept now
    assert "Private information" in systems[3] and "$20" in systems[3]  # the contract is in the prompt
    assert "is not a JSON object with the keys payment" in prompts[4]
    assert "you have only $180 of budget left" in prompts[6] and "whole number" in prompts[7]
    assert all(r["system"][0]["cache_control"] == {"type": "ephemeral"} for r in server.requests)
    # the Customer's conversation is append-only: each request repeats every earlier message
    assert len(server.requests[12]["messages"]) == len(server.requests[11]["messages"]) + 2
    cost = sum(c["cost_usd"] for c in performance["llm_calls"])
    assert cost == pytest.approx(9 * cost_of("claude-sonnet-5-5", 100, 50))
    # the recorded run replays offline, with no key and no server, to the same result
    again = cli(*negotiate_args(server.url, recordings), "--replay")
    assert again.returncode == 0, again.stdout + again.stderr
    [replayed] = json.loads(again.stdout)["runs"]

    def outcome(o):
        [game] = o["performances"]
        return (
            o["negotiation"]["turns"],
            o["metrics"],
            game["weeks"],
            game["u_customer"],
            game["u_supplier"],
            [c["reply"] for c in game["llm_calls"]],
        )

    assert outcome(replayed) == outcome(out)
    assert all(c["replayed"] for c in replayed["performances"][0]["llm_calls"])


def test_llm_negotiations_into_a_job_store_are_played_once(tmp_path):
    """With --out the negotiation is a job of the store, its LLM client made from the run's settings: the
    first run asks the server, a rerun reads the record and asks nothing."""
    out = tmp_path / "out"
    args = [*negotiate_args("", tmp_path / "llm.sqlite"), "--out", out, "--workers", "1"]
    with ScriptedServer(CONTRACTSIM_SCRIPT) as server:
        args[args.index("--base-url") + 1] = server.url
        first = cli(*args, key=KEY)
        assert first.returncode == 0, first.stdout + first.stderr
        asked = len(server.requests)
        again = cli(*args, key=KEY)
    assert asked == 13 and len(server.requests) == asked, again.stderr
    [run], [rerun] = json.loads(first.stdout)["runs"], json.loads(again.stdout)["runs"]
    assert run == rerun and run["metrics"]["agreed"] is True and len(run["negotiation"]["llm_calls"]) == 3
    assert json.loads(again.stdout)["played_now"] == 0
    assert (out / "jobs" / "negotiations.jsonl").read_text().count("\n") == 1


def supplier_script(body):
    """An LLM Supplier that buys one of each input and makes one of the first item; its first production answer
    asks for more than the inventory holds."""
    prompt = prompt_of(body)
    keys = re.findall(r'"((?:buy|produce)_\w+)"', prompt)
    if "purchasing" in prompt:
        return 200, message(json.dumps({k: 1 for k in keys}))
    if "production" in prompt and len(body["messages"]) == 3:
        return 200, message(json.dumps({k: 5 for k in keys}))
    if keys:
        return 200, message(json.dumps({k: int(i == 0) for i, k in enumerate(keys)}))
    return 200, message(
        '{"produce_conference_room_cleaning": 1, "produce_king_sized_room_cleaning": 0, '
        '"produce_single_room_cleaning": 0}'
    )


def test_an_llm_supplier_buys_and_produces_with_the_settings_keys(tmp_path):
    """Hotel Cleaning: [CS-29] keys from the setting's names, money in its dollars, infeasible production sent
    back with the inventory it lacks."""
    with ScriptedServer(supplier_script) as server:
        proc = cli(
            "run",
            "examples/hotel-cleaning.contract",
            "--env",
            "1",
            "--supplier",
            "llm",
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            "--json",
            key=KEY,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    prompts = [prompt_of(r) for r in server.requests]
    assert '"buy_detergent": <units>, "buy_disinfectant": <units>, "buy_wet_wipes": <units>' in prompts[0]
    assert "Cash: $" in prompts[0] and "00." in prompts[0].split("Cash: ")[1].split("\n")[0]  # ×100 dollars
    assert '"produce_conference_room_cleaning"' in prompts[1]
    assert "not enough inventory" in prompts[2] and out["llm_defaults"] == {"supplier": 0}
    orders = [e for e in out["trajectory"] if e["type"] == "order"]
    deliveries = [e for e in out["trajectory"] if e["type"] == "delivery" and e["qty"]]
    assert [e["order"] for e in orders] == [[1, 1, 1]] * 5 and len(deliveries) == 5
    assert out["llm_usage"]["calls"] == len(server.requests) == 11


def test_an_empty_negotiation_reply_is_retried_once_then_the_run_is_invalid(tmp_path):
    with ScriptedServer([(200, message("")), (200, message("  "))]) as server:
        proc = cli(
            "negotiate",
            "--env",
            "1",
            "--customer",
            "llm",
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            key=KEY,
        )
    assert proc.returncode == 1 and "two empty responses: the run is invalid" in proc.stderr
    assert "Traceback" not in proc.stderr and len(server.requests) == 2


# --- CT-Bench: one game per contract condition -----------------------------------------------------


def path_tiles(player: str, colour: str):
    path, _ = BOARD.board.best_path(player)
    return [t for t in path[1:] if BOARD.board.colour(t) == colour]


class CTBenchScript:
    """Scripted players and judge that read their prompts: players follow the best path they are told, agree at
    once and never trade; the judge summarises the coverage both need. The first move decision and the first
    NL judgement are wrong once, to exercise the corrective re-prompt and the judge's validation."""

    def __init__(self, broken_summary: bool = False):
        self.broken_summary = broken_summary
        self.moved_once = False
        self.judged_once = False

    def __call__(self, body):
        prompt, system = prompt_of(body), body["system"][0]["text"]
        if system.startswith("You are the neutral judge"):
            return 200, message(self.judge(text_of(body["messages"][0]["content"])))
        if "Contract negotiation" in prompt:
            return 200, message("agree")
        if "Do you accept this contract" in prompt:
            return 200, message('{"accept": true}')
        if "Move decision" in prompt:
            if not self.moved_once:
                self.moved_once = True
                return 200, message("I would rather think about it.")
            here = re.search(r"You are at \((\d),(\d)\)", prompt).groups()
            path = re.findall(r"\((\d),(\d)\)", prompt.split("Your best path to the goal: ")[1].split(";")[0])
            step = path[path.index(here) + 1] if path.index(here) + 1 < len(path) else None
            return 200, message(json.dumps({"move": [int(step[0]), int(step[1])] if step else None}))
        if "proposal" in prompt.split("\n")[-1]:
            return 200, message('{"propose": null}')
        if "Honour" in prompt:
            return 200, message('{"honor": true}')
        return 200, message('{"accept": false}')

    def judge(self, prompt: str) -> str:
        if "Summarise the agreed terms" in prompt:
            if self.broken_summary:
                return "The players agreed on something."
            if "p-red_reaches_goal" in prompt:
                return json.dumps(
                    {
                        "p-red_reaches_goal": {"giver": "P-Red", "receiver": "P-Blue", "amount": "10"},
                        "p-blue_reaches_goal": {"giver": "P-Blue", "receiver": "P-Red", "amount": "5"},
                    }
                )
            entries = {
                f"({r},{c})": {"giver": "P-Blue", "receiver": "P-Red", "color": "Blue"}
                for r, c in path_tiles("red", "blue")
            }
            entries.update(
                {
                    f"({r},{c})": {"giver": "P-Red", "receiver": "P-Blue", "color": "Red"}
                    for r, c in path_tiles("blue", "red")
                }
            )
            return json.dumps(entries)
        mover, colour = re.search(r"(P-Red|P-Blue) now moves from .* a (\w+) tile", prompt).groups()
        partner = "P-Blue" if mover == "P-Red" else "P-Red"
        if not self.judged_once:
            self.judged_once = True
            return json.dumps({"covered": True, "giver": mover, "color": colour})  # invalid: the mover itself
        own = "red" if mover == "P-Red" else "blue"
        if colour in (own, "green"):
            return '{"covered": false}'
        return json.dumps({"covered": True, "giver": partner, "color": colour.capitalize()})


def play(condition, url, tmp_path, replay=False, script=None):
    client = LlmClient(settings(url, tmp_path, replay=replay), None if replay else KEY)
    return play_ctbench(BOARD, condition, "pfp", "llm", "llm", llm=client, judge="llm", keep_log=True)


@pytest.mark.parametrize("condition", ["none", "prog_trading", "prog_points", "nl_trading"])
def test_one_ctbench_game_per_condition_with_llm_players_and_judge(condition, tmp_path):
    with ScriptedServer(CTBenchScript()) as server:
        record = play(condition, server.url, tmp_path)
    prompts = [c.prompt for c in record.llm_calls]
    assert record.llm_usage.calls == len(server.requests) and record.llm_usage.failed == 0
    assert any(p.startswith("That answer cannot be used") for p in prompts)  # the move re-prompt [CT-12]
    assert all(
        "Act selfishly" in r["system"][0]["text"]
        for r in server.requests
        if not r["system"][0]["text"].startswith("You are the neutral judge")
    )
    assert any("P-Blue's best path" in p for p in prompts)  # the partner's path, visible by default
    if condition == "none":
        assert record.negotiation is None and not record.contract_active
    else:
        assert record.negotiation.agreed and record.negotiation.messages == ("P-Red: agree", "P-Blue: agree")
    if condition == "prog_trading":
        assert record.negotiation.confirmations == (True, True) and record.contract_active
        assert len(record.contract_terms["coverage"]) == len(path_tiles("red", "blue") + path_tiles("blue", "red"))
        assert record.coverage["blue"]["contract_paid"] >= 1 and set(record.finished) == {"red", "blue"}
    if condition == "prog_points":
        assert [(p["giver"], p["amount"]) for p in record.contract_terms["points"]] == [("red", 10), ("blue", 5)]
        assert record.scores[0] - record.raw_scores[0] == (-10 if "red" in record.finished else 0) + (
            5 if "blue" in record.finished else 0
        )
    if condition == "nl_trading":
        assert record.transcript == "P-Red: agree\nP-Blue: agree" and record.contract_active
        transfers = [e for e in record.log if e.type == "contract_transfer"]  # enforced by the monitor
        assert transfers and all(e.giver != e.receiver for e in transfers)
        assert any("the giver must be the mover's partner" in p for p in prompts)  # [CT-25] validation
        assert set(record.finished) == {"red", "blue"}
    # replayed offline from the recordings: the same game, call for call
    again = play(condition, server.url, tmp_path, replay=True)  # the server is closed now
    assert again.model_dump(exclude={"llm_calls"}) == record.model_dump(exclude={"llm_calls"})
    assert [c.reply for c in again.llm_calls] == [c.reply for c in record.llm_calls]


def test_a_judge_that_never_gives_valid_json_forms_no_contract(tmp_path):
    with ScriptedServer(CTBenchScript(broken_summary=True)) as server:
        record = play("prog_trading", server.url, tmp_path)
    summaries = [c for c in record.llm_calls if c.purpose == "judge summary"]
    assert len(summaries) == 3 and record.negotiation.agreed and record.negotiation.contract is None  # [CT-20]
    assert not record.contract_active and record.condition == "prog_trading"


def test_llm_players_that_never_answer_validly_fall_back_to_the_null_action(tmp_path):
    with ScriptedServer(lambda body: (200, message("no idea"))) as server:
        record = play("none", server.url, tmp_path)
    assert not any(e.type == "moved" for e in record.log) and record.stats.trades == 0
    decisions = [c for c in record.llm_calls if not c.prompt.startswith("That answer")]
    assert len(record.llm_calls) == 2 * len(decisions)  # one corrective re-prompt each, then the null action
    assert sum(record.llm_null_actions.values()) == len(decisions)


def test_ctbench_sweep_with_llm_players_resumes_and_replays(tmp_path):
    args = [
        "ctbench",
        "sweep",
        "--boards",
        str(BOARD.id),
        "--condition",
        "nl_trading",
        "--mode",
        "pfp",
        "--red",
        "llm",
        "--blue",
        "llm",
        "--judge",
        "llm",
        "--workers",
        "1",
        "--json",
    ]
    with ScriptedServer(CTBenchScript()) as server:
        first = cli(
            *args,
            "--out",
            str(tmp_path / "a"),
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            key=KEY,
        )
        assert first.returncode == 0, first.stdout + first.stderr
        again = cli(
            *args,
            "--out",
            str(tmp_path / "a"),
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            key=KEY,
        )
    assert json.loads(again.stdout)["played"] == 0  # resumed: every game already recorded
    replayed = cli(
        *args,
        "--out",
        str(tmp_path / "b"),
        "--base-url",
        server.url,
        "--recordings",
        str(tmp_path / "r.sqlite"),
        "--replay",
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert json.loads(replayed.stdout)["rows"] == json.loads(first.stdout)["rows"]


# --- every LLM option without a key ----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("run", "examples/worked-example-1.contract", "--env", "5", "--customer", "llm"),
        ("run", "examples/worked-example-1.contract", "--env", "5", "--supplier", "llm:claude-haiku-4-5"),
        ("run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--red", "llm"),
        ("negotiate", "--env", "1", "--supplier", "llm"),
        ("negotiate", "--env", "1", "--translator", "llm"),
        ("negotiate", "--env", "1", "--perform-supplier", "llm"),
        ("ctbench", "sweep", "--boards", "0", "--red", "llm", "--blue", "planner"),
        ("ctbench", "sweep", "--boards", "0", "--agents", "planner vs llm:claude-haiku-4-5"),
        ("ctbench", "sweep", "--boards", "0", "--judge", "llm"),
        ("translate", "tests/nl/01-plain-lists.txt", "--backend", "anthropic"),
    ],
)
def test_every_llm_option_without_a_key_says_how_to_set_one(args, tmp_path):
    args = (*args, "--out", str(tmp_path / "o")) if "sweep" in args else args
    proc = cli(*args)
    assert proc.returncode == 1 and "export ANTHROPIC_API_KEY=" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()  # refused before anything is written
    if "llm" in args[-3:]:  # the --json form for a sample of the forms: its error path is shared
        as_json = cli(*args, "--json")
        assert as_json.returncode == 1 and "export ANTHROPIC_API_KEY=" in json.loads(as_json.stdout)["error"]


@pytest.mark.parametrize(
    "args,message",
    [
        (("run", "examples/worked-example-1.contract", "--env", "5", "--replay"), "--replay applies to LLM agents"),
        (
            (
                "run",
                "examples/worked-example-1.contract",
                "--env",
                "5",
                "--customer",
                "llm",
                "--replay",
                "--effort",
                "huge",
            ),
            "unknown effort 'huge'",
        ),
        (
            ("run", "examples/worked-example-1.contract", "--env", "5", "--guidance", "kindness"),
            "unknown prompt guidance 'kindness'",
        ),
        (("ctbench", "sweep", "--boards", "0", "--agents", "llm:x:planner"), "'RED vs BLUE'"),
        (("ctbench", "sweep", "--boards", "0", "--red", "llm"), "--red and --blue go together"),
        (("ctbench", "sweep", "--boards", "0", "--judge", "oracle"), "unknown judge 'oracle'"),
        (("negotiate", "--env", "1", "--translator", "google"), "unknown translator 'google'"),
        (("negotiate", "--env", "1", "--perform-supplier", "oracle"), "unknown performing Supplier 'oracle'"),
        (
            (
                "run",
                "examples/worked-example-1.contract",
                "--env",
                "5",
                "--customer",
                "llm",
                "--replay",
                "--recordings",
                "README.md",
            ),
            "README.md: not a usable recordings file of LLM responses (file is not a database)",
        ),
        (
            (
                "run",
                "examples/worked-example-1.contract",
                "--env",
                "5",
                "--customer",
                "llm",
                "--replay",
                "--recordings",
                "examples",
            ),
            "examples: not a usable recordings file of LLM responses",
        ),
        (
            (
                "run",
                "examples/worked-example-1.contract",
                "--env",
                "5",
                "--customer",
                "llm",
                "--replay",
                "--base-url",
                "ftp://x",
            ),
            "--base-url must be an http:// or https:// address",
        ),
    ],
)
def test_llm_option_misuse_is_one_line(args, message):
    proc = cli(*args)
    assert proc.returncode in (1, 2) and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_replay_with_nothing_recorded_is_one_line(tmp_path):
    Recordings(tmp_path / "empty.sqlite")
    proc = cli(
        "run",
        "examples/worked-example-1.contract",
        "--env",
        "5",
        "--customer",
        "llm",
        "--replay",
        "--recordings",
        str(tmp_path / "empty.sqlite"),
    )
    assert proc.returncode == 1 and "no recorded response" in proc.stderr and "Traceback" not in proc.stderr


def test_a_run_cut_short_by_the_api_resumes_from_its_recordings_to_the_same_game(tmp_path):
    """The API fails after 10 calls: the game ends with one line and the 10 answers stay recorded; the rerun
    serves them and asks the API only for the rest, and the game is the one an uninterrupted run plays."""

    def steady():
        script = CTBenchScript()
        script.moved_once = script.judged_once = True  # no scripted mistakes: the same answer to every prompt
        return script

    with ScriptedServer(steady()) as server:
        whole = play_ctbench(
            BOARD,
            "nl_trading",
            "pfp",
            "llm",
            "llm",
            judge="llm",
            keep_log=True,
            llm=LlmClient(settings(server.url, tmp_path / "whole"), KEY),
        )
    total = len(server.requests)
    script = steady()
    failing = (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "quota"}})
    quota = [10]  # the rerun goes to the same server, its quota lifted
    with ScriptedServer(lambda body: script(body) if len(cut.requests) <= quota[0] else failing) as cut:
        with pytest.raises(AgentError, match="API error 400"):
            play_ctbench(
                BOARD,
                "nl_trading",
                "pfp",
                "llm",
                "llm",
                judge="llm",
                llm=LlmClient(settings(cut.url, tmp_path / "cut"), KEY),
            )
        assert Recordings(tmp_path / "cut" / "llm.sqlite").count() == 10
        quota[0], before = 10**6, len(cut.requests)
        resumed = play_ctbench(
            BOARD,
            "nl_trading",
            "pfp",
            "llm",
            "llm",
            judge="llm",
            keep_log=True,
            llm=LlmClient(settings(cut.url, tmp_path / "cut"), KEY),
        )
    assert len(cut.requests) - before == total - 10 and resumed.llm_usage.replayed == 10
    assert resumed.model_dump(exclude={"llm_calls"}) == whole.model_dump(exclude={"llm_calls"})


def test_run_with_llm_players_prints_the_story_and_the_ledger(tmp_path):
    with ScriptedServer(CTBenchScript()) as server:
        proc = cli(
            "run",
            "examples/ctbench-board-24-swap.contract",
            "--board",
            "24",
            "--red",
            "llm",
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            key=KEY,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = len(server.requests)
    assert (
        f"LLM: {calls} call(s) (0 replayed, 0 failed), {100 * calls:,} input and {50 * calls:,} output tokens, $"
        in proc.stdout
    )
    again = cli(
        "run",
        "examples/ctbench-board-24-swap.contract",
        "--board",
        "24",
        "--red",
        "llm",
        "--replay",
        "--base-url",
        server.url,
        "--recordings",
        str(tmp_path / "r.sqlite"),
    )
    assert again.returncode == 0 and f"({calls} replayed, 0 failed)" in again.stdout
    assert again.stdout.split("LLM:")[0] == proc.stdout.split("LLM:")[0]  # the same story, offline


def test_invalid_ctbench_replies_are_counted_where_the_usage_is_shown(tmp_path):
    """A reply that is invalid twice becomes the null action [CT-12]; `run` and `ctbench sweep` say how many,
    as ContractSim's `run` says how many requests defaulted."""
    common = ["--base-url", "", "--recordings", str(tmp_path / "r.sqlite")]
    with ScriptedServer(lambda body: (200, message("no idea"))) as server:
        common[1] = server.url
        ran = cli("run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--red", "llm", *common, key=KEY)
        swept = cli(
            "ctbench", "sweep", "--boards", "0", "--red", "llm", "--blue", "planner", "--out", str(tmp_path / "s"),
            "--workers", "1", *common, key=KEY,
        )  # fmt: skip
        as_json = cli(
            "ctbench", "sweep", "--boards", "0", "--red", "llm", "--blue", "planner", "--out", str(tmp_path / "s"),
            "--workers", "1", "--json", *common, key=KEY,
        )  # fmt: skip
    assert ran.returncode == 0 and swept.returncode == 0, ran.stderr + swept.stderr
    counted = re.search(r"invalid replies taken as the null action: red (\d+)$", ran.stdout.splitlines()[-1])
    assert counted and int(counted.group(1)) > 0, ran.stdout
    line = next(x for x in swept.stdout.splitlines() if "invalid replies taken as the null action" in x)
    nulls = int(line.rsplit(": ", 1)[1])
    assert nulls > 0 and json.loads(as_json.stdout)["llm_null_actions"] == nulls
