"""The agent protocol: typed observations in, typed actions out, for built-in and external (JSON-lines) agents."""

import json
import os
import signal
import sys
import time

import numpy as np
import pytest
from pydantic import BaseModel

from games.agents import AgentError, closing_agents
from games.ctbench.board import benchmark_board
from games.ctbench.game import CTBenchGame, Move, Propose
from games.external import ExternalAgent
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e  # external agent programs in real processes

EXAMPLE_AGENT = f"cmd:{sys.executable} examples/agents/external_agent.py"
WORKED = "examples/worked-example-1.contract"
SWAP = "examples/ctbench-board-24-swap.contract"


def test_the_example_customer_is_the_rc_customer_through_the_protocol():
    """It pays `payment_due`, which is what RC pays (eq. 7): the two runs must be the same game."""
    ours = json.loads(
        run_cli("run", WORKED, "--env", "3", "--customer", EXAMPLE_AGENT, "--supplier", "rcc", "--json").stdout
    )
    rc = json.loads(run_cli("run", WORKED, "--env", "3", "--customer", "rc", "--supplier", "rcc", "--json").stdout)
    assert (ours["u_customer"], ours["u_supplier"]) == (rc["u_customer"], rc["u_supplier"])
    assert [w["paid"] for w in ours["weeks"]] == [w["paid"] for w in rc["weeks"]]
    assert ours["customer"] == EXAMPLE_AGENT


def test_the_example_agent_plays_both_ctbench_seats_and_both_contractsim_roles():
    proc = run_cli("run", SWAP, "--board", "24", "--red", EXAMPLE_AGENT, "--blue", EXAMPLE_AGENT, "--json")
    assert proc.returncode == 0, proc.stderr
    game = json.loads(proc.stdout)
    # neither seat trades; the swap contract pays the four tiles of the other colour on the best paths, so both
    # finish on length-6 paths: 20 + 5·(16 − 6) = 70 each (X1)
    assert set(game["finished"]) == {"red", "blue"} and game["scores"] == {"red": 70, "blue": 70}
    assert game["stats"]["trades"] == 0 and game["stats"]["contract_moves"] == 4
    both = run_cli("run", WORKED, "--env", "5", "--customer", EXAMPLE_AGENT, "--supplier", EXAMPLE_AGENT, "--json")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["supplier"] == EXAMPLE_AGENT


def test_observations_hide_what_the_rules_hide():
    board = benchmark_board(24).board
    hidden = CTBenchGame(board=board, visible=False).new_initial_state()
    obs = hidden.observe("red")
    assert obs.partner_chips is None and obs.partner_position is None and "blue is at" not in obs.text()
    shown = CTBenchGame(board=board).new_initial_state().observe("blue")
    assert shown.partner_chips.red == 14 and shown.chips.blue == 14
    state = hidden.apply_action(Propose(offer=None)).apply_action(Propose(offer=None))
    moving = state.observe("red")
    assert moving.phase == "move" and set(moving.legal_moves) == {(0, 1), (1, 0)}
    assert [a for a in moving.legal_actions() if isinstance(a, Move)] == state.legal_actions()


def script(tmp_path, body: str) -> str:
    path = tmp_path / "agent.py"
    path.write_text("import json, sys, time\n" + body)
    return f"cmd:{sys.executable} {path}"


@pytest.mark.parametrize(
    "body,message",
    [
        ("print('hello', flush=True)\ntime.sleep(5)\n", "is not JSON: 'hello'"),
        ("sys.exit(3)\n", "exited (code 3)"),
        (
            "for line in sys.stdin:\n    print(json.dumps({'action': {'kind': 'pay', 'amount': 10**9}}), flush=True)\n",
            "chose an illegal action",
        ),
        (
            "for line in sys.stdin:\n    print(json.dumps({'action': {'kind': 'pay'}}), flush=True)\n",
            "is not a contractsim action (pay.amount: Field required)",
        ),
        ("for line in sys.stdin:\n    print(json.dumps({'move': 1}), flush=True)\n", 'has no "action" field'),
        ("time.sleep(30)\n", "gave no answer to request 1 within 1 s"),
        # it closes its output but runs on: reported after 2 s, not waited for (the run once hung here)
        ("import os\nos.close(1)\ntime.sleep(30)\n", "closed its end of the pipe without exiting"),
    ],
)
def test_a_broken_external_agent_is_one_line(tmp_path, body, message):
    agent = script(tmp_path, body)
    # every error reaches the user through one handler, so the --json form is checked for a sample of them
    for extra in ((), ("--json",)) if "sys.exit" in body or "'move'" in body else ((),):
        proc = run_cli(
            "run",
            WORKED,
            "--env",
            "1",
            "--customer",
            agent,
            "--supplier",
            "re",
            *extra,
            env={**os.environ, "CONTRACTLANG_AGENT_TIMEOUT": "1"},
        )
        assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        text = json.loads(proc.stdout)["error"] if extra else proc.stderr
        assert message in text and agent in text and len(text.strip().splitlines()) == 1, text


class _Observation(BaseModel):
    role: str = "customer"


def test_a_game_that_ends_lets_its_agent_exit_and_a_failed_one_kills_it(tmp_path):
    """The same program twice: it answers, then exits 0 at the end of its input. After a game that ended it
    is given that end and exits by itself; after one that failed it is killed (SIGKILL) at once, since a
    program that broke the protocol may never read its input again."""
    body = "for line in sys.stdin:\n    print(json.dumps({'action': {}}), flush=True)\n"
    finished, failed = (ExternalAgent(script(tmp_path, body), "contractsim") for _ in range(2))
    with closing_agents([finished]):
        finished.exchange(_Observation())
        finished_process = finished.process
    with pytest.raises(AgentError), closing_agents([failed]):
        failed.exchange(_Observation())
        failed_process = failed.process
        raise AgentError("the game failed")
    assert finished_process.returncode == 0 and failed_process.returncode == -signal.SIGKILL


def test_lines_the_game_does_not_ask_for_wait_in_the_pipe_not_in_memory(tmp_path):
    """A program that answers once and then writes without end: however long the game takes to ask again,
    at most two unread lines are held; closing the agent ends the program and the reader thread."""
    agent = ExternalAgent(
        script(tmp_path, "while True:\n    print(json.dumps({'action': {}}), flush=True)\n"), "contractsim"
    )
    with closing_agents([agent]):
        assert json.loads(agent.exchange(_Observation())) == {"action": {}}
        process, lines = agent.process, agent.lines
        time.sleep(0.5)  # about 10^5 lines written, had they all been kept
        assert lines.qsize() <= 2
    assert process.returncode == -signal.SIGKILL and agent.closed.is_set()


def test_an_agent_that_cannot_start_and_one_for_the_wrong_game(tmp_path):
    proc = run_cli("run", SWAP, "--board", "24", "--red", f"cmd:{tmp_path}/no-such-program")
    assert proc.returncode == 1 and "cannot start" in proc.stderr and "No such file" in proc.stderr
    pay = script(
        tmp_path,
        "for line in sys.stdin:\n    print(json.dumps({'action': {'kind': 'pay', 'amount': 0}}), flush=True)\n",
    )
    proc = run_cli("run", SWAP, "--board", "24", "--red", pay)
    assert proc.returncode == 1 and "is not a ctbench action" in proc.stderr


def test_the_agent_program_is_ended_with_the_game(tmp_path):
    pid_file = tmp_path / "pid"
    agent = script(
        tmp_path,
        f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'action': {'kind': 'pay', 'amount': 0}}), flush=True)\n",
    )
    proc = run_cli("run", WORKED, "--env", "1", "--customer", agent, "--supplier", "re", "--json")
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_builtin_agents_act_on_observations_only():
    """The rational Customer needs nothing beyond its observation: feed it one built by hand."""
    from games.agents import Seat, make_agent
    from games.contractsim.game import CustomerObservation

    obs = CustomerObservation(
        week=3, total_paid=10, remaining_budget=5, payment_due=8, observed_breach=False, deliveries=(), multiplier=1
    )
    seat = Seat(game="contractsim", role="customer", rng=np.random.default_rng(0))
    assert make_agent("rc", seat).act(obs).amount == 5  # capped by the remaining budget (eq. 7)
    assert make_agent("rcc", seat).act(obs.model_copy(update={"observed_breach": True})).amount == 0


def test_the_example_agent_negotiates_ctbench_contracts_in_a_sweep(tmp_path):
    """Both seats external, through contract negotiation (say / confirm) and play: on board 24 each asks the
    partner to cover the off-colour tiles of its best path, both agree, and the judge's contract is enforced."""
    proc = run_cli(
        "ctbench",
        "sweep",
        "--boards",
        "24",
        "--conditions",
        "prog_trading,nl_trading",
        "--modes",
        "pfp",
        "--agents",
        f"{EXAMPLE_AGENT} vs {EXAMPLE_AGENT}",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert sorted(g["condition"] for g in games) == ["nl_trading", "prog_trading"]
    for g in games:
        assert g["contract_active"] and g["negotiation"]["agreed"] and g["red_agent"] == EXAMPLE_AGENT
        assert g["negotiation"]["messages"][0].startswith("P-Red: P-Blue pays for P-Red's move onto")
        assert sum(c["contract_paid"] for c in g["coverage"].values()) >= 1
        assert sorted(g["finished"]) == ["blue", "red"]
    prog = next(g for g in games if g["condition"] == "prog_trading")
    assert prog["negotiation"]["confirmations"] == [True, True] and prog["contract_terms"]["coverage"]
