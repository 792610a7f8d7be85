"""ContractSim Customers (py: agents) whose code tries to end, hang or outlive the process; the mode comes from
MISBEHAVE (`where:how`), so one file serves every case of tests/hardening/test_inprocess_agents.py."""

import os
import signal
import subprocess
import sys
import time

WHERE, _, HOW = os.environ.get("MISBEHAVE", "act:exit").partition(":")


class Unsayable(Exception):
    """An exception whose message itself raises."""

    def __str__(self):
        raise RuntimeError("no message")


class Abandon(BaseException):
    """An exception of the agent's own that no `except Exception` catches."""


def misbehave(where: str) -> None:
    if where != WHERE:
        return
    if HOW == "exit":
        sys.exit(3)
    if HOW == "os_exit":
        os._exit(0)
    if HOW == "interrupt":
        raise KeyboardInterrupt
    if HOW == "base":
        raise Abandon("the agent gives up")
    if HOW == "generator_exit":
        raise GeneratorExit
    if HOW == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    if HOW == "alarm":
        signal.alarm(1)
        time.sleep(3)
    if HOW == "unsayable":
        raise Unsayable
    if HOW == "print":  # through Python, below it, and from a program it starts
        print("the agent talks on stdout")
        os.write(1, b"the agent writes to file descriptor 1\n")
        subprocess.run(["echo", "the agent's program talks on stdout"], check=True)
    if HOW == "recursion_limit":
        sys.setrecursionlimit(30)
    if HOW == "chdir":
        os.chdir("/")
    if HOW == "sleep":
        time.sleep(3600)
    if HOW == "fork":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open(os.environ["MISBEHAVE_PIDS"], "a") as pids:
            pids.write(f"{child.pid}\n")


misbehave("import")


class Customer:
    name = "misbehaving"
    roles = ("customer",)

    def __init__(self):
        misbehave("init")

    def act(self, observation):
        misbehave("act")
        if HOW == "flag":  # a payment of `true`, which must not be read as $1
            return {"kind": "pay", "amount": True}
        return {"kind": "pay", "amount": min(observation.payment_due, observation.remaining_budget)}
