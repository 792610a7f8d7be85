"""The run machinery of LLM sweeps (issue #47): games waiting on the model run --max-connections at once in
threads around one client, apart from the worker processes; a failed call costs a game, not the run; limits stop
work and resume; --estimate; Ctrl-C pays no reply twice; a CT-Bench sweep stores each game as it ends. Against
the scripted loopback server, on test_performance's smallest synthetic set (2 contracts, 6 customer games a
seed)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from contractlang.files import RECORD_CHECK
from contractlang.llm import ESTIMATE_INPUT_TOKENS, ESTIMATE_OUTPUT_TOKENS, cost_of
from tests.contractsim.test_performance import KEY, MODEL, llm_args
from tests.helpers import ROOT, fresh, run_cli
from tests.llm.test_llm_agents import BOARD, CTBenchScript
from tests.llm_server import ScriptedServer, message, prompt_of

pytestmark = pytest.mark.e2e  # the real CLI against scripted LLM servers on 127.0.0.1

ENV = {**os.environ, "ANTHROPIC_API_KEY": KEY}
CALL_COST = cost_of(MODEL, 100, 50, cache_read=30, cache_write=20)


class Customer:
    """The scripted LLM Customer of test_performance (pays $18 but in weeks 7 and 11), answering after `delay`
    seconds; it counts requests and the most in flight at once, and refuses (400) while `failing` says so."""

    def __init__(self, delay: float = 0.0, failing=lambda n: False):
        self.delay, self.failing = delay, failing
        self.requests: list[dict] = []
        self.in_flight = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            self.requests.append(body)
            n = len(self.requests)
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(self.delay)
            if self.failing(n):
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "refused"}}
            week = int(re.findall(r"Week (\d+) \(a payment week\)", prompt_of(body))[-1])
            answer = message(json.dumps({"payment": 18 if week <= 9 and week != 7 else 0}))
            answer["usage"].update(cache_read_input_tokens=30, cache_creation_input_tokens=20)
            return 200, answer
        finally:
            with self.lock:
                self.in_flight -= 1


def store(directory: Path, name: str = "performance.jsonl") -> Path:
    return directory / "jobs" / name


def games(directory: Path) -> list[dict]:
    """The store's records in its order, without what timing alone decides: each call's seconds, whether it was
    replayed, and so each line's check."""
    records = [json.loads(line) for line in store(directory).read_text().splitlines()]
    for record in records:
        record.pop(RECORD_CHECK)
        for call in record["run"]["llm_calls"]:
            call.pop("seconds"), call.pop("replayed")
    return records


def same_outputs(one: Path, other: Path) -> None:
    """The same games in the same order, and byte-identical tables."""
    assert games(one) == games(other)
    for name in ("tables.json", "tables.md"):
        assert (one / "performance" / name).read_bytes() == (other / "performance" / name).read_bytes(), name


def test_many_games_wait_on_the_model_at_once_with_one_worker_and_write_the_same_bytes_with_two(synthetic, tmp_path):
    """18 games (3 seeds): 8 requests in flight with --workers 1 (threads of this process) and with --workers 2
    (a forked game process beside the worker); the same games in the same order, the same tables."""
    stores = []
    for workers in ("1", "2"):
        directory = fresh(synthetic, tmp_path / workers)
        server = Customer(delay=0.3)
        with ScriptedServer(server) as http:
            done = run_cli(
                *llm_args(
                    directory,
                    http.url,
                    tmp_path / f"{workers}.sqlite",
                    "--seeds",
                    "42,43,44",
                    "--max-connections",
                    "8",
                    "--workers",
                    workers,
                    "--json",
                ),
                env=ENV,
            )
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["played_now"]["agents"] == 18
        assert len(server.requests) == 18 * 6 and server.most == 8, server.most
        stores.append(directory)
    same_outputs(*stores)


def test_errored_games_cost_a_game_not_the_run_and_a_rerun_retries_only_them(synthetic, tmp_path):
    """The API refuses the first 3 requests (one game at a time, so 3 games error on their first call): the run
    goes on, its tables say 3 errored; the rerun says it retries 3 and asks the model for exactly their 18
    calls; the final store is an uninterrupted run's. A permanently failing model with --fail-on-error 2 ends
    the run with exit 1 at the third errored game."""
    directory = fresh(synthetic, tmp_path / "cut")
    server = Customer(failing=lambda n: n <= 3)
    with ScriptedServer(server) as http:
        first = run_cli(*llm_args(directory, http.url, tmp_path / "r.sqlite", "--max-connections", "1"), env=ENV)
        assert first.returncode == 0, first.stderr
        assert "3 errored and 0 limited games left out of the tables" in first.stdout
        assert "Completed games only: 3 errored" in (directory / "performance" / "tables.md").read_text()
        assert store(directory, "performance.unfinished.jsonl").read_text().count('"status": "errored"') == 3
        asked = len(server.requests)
        again = run_cli(*llm_args(directory, http.url, tmp_path / "r.sqlite", "--max-connections", "1"), env=ENV)
    assert again.returncode == 0, again.stderr
    assert "retrying 3 errored agent games" in again.stderr and len(server.requests) - asked == 3 * 6
    assert not store(directory, "performance.unfinished.jsonl").exists()
    whole = fresh(synthetic, tmp_path / "whole")
    with ScriptedServer(Customer()) as http:
        assert run_cli(*llm_args(whole, http.url, tmp_path / "w.sqlite"), env=ENV).returncode == 0
    same_outputs(directory, whole)

    failing = fresh(synthetic, tmp_path / "failing")
    with ScriptedServer(Customer(failing=lambda n: True)) as http:
        stopped = run_cli(
            *llm_args(failing, http.url, tmp_path / "f.sqlite", "--max-connections", "1", "--fail-on-error", "2"),
            env=ENV,
        )
    assert stopped.returncode == 1 and "Traceback" not in stopped.stderr
    assert "3 games errored, more than --fail-on-error 2 allows" in stopped.stderr
    [error] = [line for line in stopped.stderr.splitlines() if line.startswith("error:")]
    assert "API error 400" in error and "0 agent games played now" in error, error
    # the game the one connection started while the third error was on its way is stored too, if it ended
    errored = store(failing, "performance.unfinished.jsonl").read_text().count('"status": "errored"')
    assert 3 <= errored <= 4


def test_a_cost_limit_stops_the_run_and_a_higher_one_resumes_to_an_uninterrupted_runs_store(synthetic, tmp_path):
    """A limit of about 10 calls' cost stops the run (exit 3, the limit and how to resume named); rerun with a
    higher one it finishes, every request sent once over both runs, and stores what one run stores."""
    directory = fresh(synthetic, tmp_path / "cut")
    server = Customer()
    with ScriptedServer(server) as http:
        cut = run_cli(
            *llm_args(
                directory,
                http.url,
                tmp_path / "r.sqlite",
                "--max-connections",
                "1",
                "--cost-limit",
                f"{CALL_COST * 9.5:.8f}",
            ),
            env=ENV,
        )
        assert cut.returncode == 3, cut.stdout + cut.stderr
        assert "cost limit" in cut.stderr and "--cost-limit" in cut.stderr and "rerun" in cut.stderr
        assert store(directory).read_text().count("\n") == 1  # the first game; the second stopped mid-way
        resumed = run_cli(*llm_args(directory, http.url, tmp_path / "r.sqlite", "--cost-limit", "1"), env=ENV)
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == 6 * 6  # the stopped game's answered calls were replayed, not paid again
    whole = fresh(synthetic, tmp_path / "whole")
    with ScriptedServer(Customer()) as http:
        assert run_cli(*llm_args(whole, http.url, tmp_path / "w.sqlite"), env=ENV).returncode == 0
    same_outputs(directory, whole)


@pytest.mark.parametrize(
    "option, value, kind, delay",
    [
        ("--game-message-limit", "3", "messages", 0.0),
        ("--game-token-limit", "500", "tokens", 0.0),
        ("--game-time-limit", "0.3", "seconds", 0.2),
    ],
)
def test_a_game_that_reaches_a_game_limit_is_recorded_as_limited(synthetic, tmp_path, option, value, kind, delay):
    """Every game stops before its 6 calls: each stored as limited, naming the limit; the run ends normally, a
    rerun under the same limit keeps them (it plays nothing), and one without it plays them again, paying only
    the calls the first run did not make."""
    directory = fresh(synthetic, tmp_path)
    server = Customer(delay=delay)
    with ScriptedServer(server) as http:
        command = llm_args(directory, http.url, tmp_path / "r.sqlite", "--contracts", "synth-env1-*", "--limit", "1")
        done = run_cli(*command, option, value, "--json", env=ENV)
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["limited"] == 3
        lines = [json.loads(line) for line in store(directory, "performance.unfinished.jsonl").read_text().splitlines()]
        assert [r["status"] for r in lines] == ["limited"] * 3
        assert all(f"game's {kind} limit" in r["reason"] for r in lines), lines[0]["reason"]
        asked = len(server.requests)
        again = run_cli(*command, option, value, "--json", env=ENV)
        assert again.returncode == 0 and json.loads(again.stdout)["played_now"]["agents"] == 0
        assert len(server.requests) == asked
        plan = json.loads(run_cli(*command, "--estimate", "--json", env=ENV).stdout)["estimate"]
        assert (plan["relimited"], plan["limited"], plan["to_play"]) == (3, 0, 3)
        raised = run_cli(*command, env=ENV)
    assert raised.returncode == 0, raised.stderr
    assert "playing again 3 agent games stopped before at per-game limits other than this run's" in raised.stderr
    assert "left out of the tables" not in raised.stdout
    assert len(server.requests) == 3 * 6  # every call of the three games paid once
    assert not store(directory, "performance.unfinished.jsonl").exists()


def test_estimate_counts_games_calls_tokens_and_cost(synthetic, tmp_path):
    """A slice of 1 contract: 3 customer games × 6 payment weeks = 18 calls, priced from the defaults before any
    is recorded; after a run that stored 1 game and errored 1, 1 stored, 1 errored to retry, 12 calls to make,
    at the recorded averages (100 + 30 + 20 input and 50 output tokens a call)."""
    directory = fresh(synthetic, tmp_path)
    slice_ = ("--contracts", "synth-env1-*", "--limit", "1")
    before = run_cli(
        *llm_args(directory, "http://127.0.0.1:9", tmp_path / "r.sqlite", *slice_, "--estimate", "--json"), env=ENV
    )
    assert before.returncode == 0, before.stdout + before.stderr
    plan = json.loads(before.stdout)["estimate"]
    assert (plan["games"], plan["stored"], plan["errored"], plan["to_play"], plan["calls"]) == (3, 0, 0, 3, 18)
    assert (plan["input_tokens"], plan["output_tokens"]) == (18 * ESTIMATE_INPUT_TOKENS, 18 * ESTIMATE_OUTPUT_TOKENS)
    assert plan["cost_usd"] == pytest.approx(18 * cost_of(MODEL, ESTIMATE_INPUT_TOKENS, ESTIMATE_OUTPUT_TOKENS), 1e-4)
    assert not (directory / "jobs").exists()  # nothing played, nothing written
    with ScriptedServer(Customer(failing=lambda n: n == 7)) as http:  # the second game's first call
        assert (
            run_cli(
                *llm_args(
                    directory,
                    http.url,
                    tmp_path / "r.sqlite",
                    *slice_,
                    "--max-connections",
                    "1",
                    "--fail-on-error",
                    "0",
                ),
                env=ENV,
            ).returncode
            == 1
        )
    after = run_cli(*llm_args(directory, "http://127.0.0.1:9", tmp_path / "r.sqlite", *slice_, "--estimate"), env=ENV)
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith(
        "3 games: 1 stored, 1 errored to retry, 0 stopped at a per-game limit (kept); "
        "2 to play now, about 12 LLM calls, 1,800 input and 600 output tokens, about $"
    ), after.stdout
    assert "recorded" in after.stdout


def test_ctrl_c_with_requests_in_flight_pays_none_of_them_twice(synthetic, tmp_path):
    """SIGINT while 4 requests wait 1.5 s at the server: the run waits for their replies (they are recorded),
    stores what finished and exits 130 in one line; the resumed run sends none of them again (every request
    reaches the server once over both runs) and ends with the uninterrupted store."""
    directory = fresh(synthetic, tmp_path / "cut")
    server = Customer(delay=1.5)
    with ScriptedServer(server) as http:
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "contractlang",
                *map(
                    str,
                    llm_args(directory, http.url, tmp_path / "r.sqlite", "--max-connections", "4", "--workers", "2"),
                ),
            ],
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while server.in_flight < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.in_flight == 4
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        assert run.returncode == 130, err
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "interrupted" in lines[0] and "rerun the same command" in lines[0], err
        first = len(server.requests)
        server.delay = 0.0
        resumed = run_cli(*llm_args(directory, http.url, tmp_path / "r.sqlite"), env=ENV)
    assert resumed.returncode == 0, resumed.stderr
    assert first >= 4 and len(server.requests) == 6 * 6
    whole = fresh(synthetic, tmp_path / "whole")
    with ScriptedServer(Customer()) as http:
        assert run_cli(*llm_args(whole, http.url, tmp_path / "w.sqlite"), env=ENV).returncode == 0
    same_outputs(directory, whole)


def test_a_ctbench_sweep_with_an_llm_player_stores_each_game_as_it_ends(tmp_path):
    """Two games, one at a time; the server holds the second game's first request until the first game's record
    is in games.jsonl (handed back in chunks, it would wait for the second)."""
    sweep = [
        "ctbench",
        "sweep",
        "--boards",
        f"{BOARD.id}",
        "--condition",
        "none",
        "--mode",
        "pfp",
        "--red",
        "llm",
        "--blue",
        "planner",
        "--repeats",
        "2",
        "--max-connections",
        "1",
        "--json",
    ]
    with ScriptedServer(CTBenchScript()) as http:
        once = run_cli(
            *sweep,
            "--out",
            tmp_path / "once",
            "--base-url",
            http.url,
            "--recordings",
            tmp_path / "once.sqlite",
            env=ENV,
        )
    assert once.returncode == 0, once.stdout + once.stderr
    first_game = len(json.loads((tmp_path / "once" / "games.jsonl").read_text().splitlines()[0])["llm_calls"])
    games = tmp_path / "held" / "games.jsonl"
    seen: list[int] = []
    script = CTBenchScript()

    def held(body):
        seen.append(1)
        if len(seen) == first_game + 1:
            deadline = time.monotonic() + 30
            while not (games.exists() and games.read_text().count("\n") == 1) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert games.read_text().count("\n") == 1
        return script(body)

    with ScriptedServer(held) as http:
        done = run_cli(
            *sweep,
            "--out",
            tmp_path / "held",
            "--base-url",
            http.url,
            "--recordings",
            tmp_path / "held.sqlite",
            env=ENV,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["played"] == 2 and games.read_text().count("\n") == 2


def ray_processes() -> set[int]:
    """The pids of Ray's processes on this machine (its cluster daemons and workers)."""
    found = subprocess.run(
        ["pgrep", "-f", "raylet|gcs_server|ray::|default_worker.py|dashboard/agent"], capture_output=True, text=True
    ).stdout.split()
    return {int(pid) for pid in found}


@pytest.mark.slow  # a local Ray cluster takes 10-20 s to start
def test_ray_local_honours_the_counts_and_leaves_no_process_after_ctrl_c(synthetic, tmp_path):
    """--ray local --workers 2 --max-connections 4: 4 requests in flight at the server (2 threaded actors);
    Ctrl-C ends the run with 130 and no Ray process is left running."""
    pytest.importorskip("ray", reason="Ray is an optional extra")
    before = ray_processes()
    directory = fresh(synthetic, tmp_path)
    server = Customer(delay=1.0)
    with ScriptedServer(server) as http:
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "contractlang",
                *map(
                    str,
                    llm_args(
                        directory,
                        http.url,
                        tmp_path / "r.sqlite",
                        "--seeds",
                        "42,43",
                        "--max-connections",
                        "4",
                        "--workers",
                        "2",
                        "--ray",
                        "local",
                    ),
                ),
            ],
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while len(server.requests) < 12 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert server.most == 4, (server.most, run.poll())
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    deadline = time.monotonic() + 10
    while ray_processes() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_processes() - before == set()
