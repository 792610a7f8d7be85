"""A user's in-process agent runs in a thread of its own, so that what its code does stays with its game.

An external (`cmd:`) agent is a process the game can wait for, time out and kill; a Python agent shares the
game's process, so the same guarantees need help:

- **time**: each call (`__init__`, `reset`, `act`, `close`, the import of a `py:` file) has the per-move limit
  an external agent has (`CONTRACTLANG_AGENT_TIMEOUT`, 60 s); past it the game ends with one line. A thread
  cannot be killed, so an agent's thread that never returns is left behind as a daemon: it no longer holds
  the game or the process's exit;
- **exits**: `sys.exit()`, `os._exit()`, a `KeyboardInterrupt` or other `BaseException` raised by the agent's own
  code, and a signal it sends this process (`os.kill`, `signal.alarm`) end its game
  with one line naming it, instead of ending the whole command (or, in a worker, hanging the run). A real
  Ctrl-C is delivered to the main thread, never to the agent's, so it still stops the run;
- **the process's state**: what the agent prints goes to stderr, never into the command's output (a `--json`
  answer stays JSON), and the working directory and recursion limit it changes are set back after each call;
- **children**: the processes the agent's thread started (`fork`, `subprocess`, `multiprocessing`) are
  killed when the agent is closed, as an external agent's process group is.

A closed agent's thread is kept for the next agent of the process (a few at most), since starting a thread per
agent and game cost more than a short game itself; a thread whose call never returned is never reused.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT_VARIABLE = "CONTRACTLANG_AGENT_TIMEOUT"
DEFAULT_SECONDS = 60.0
IDLE_THREADS = 4
"""The threads of closed agents a process keeps for its next agents: a game seats two."""


def move_seconds() -> float:
    """The per-call limit of an agent: `CONTRACTLANG_AGENT_TIMEOUT` seconds, 60 by default."""
    return float(os.environ.get(TIMEOUT_VARIABLE, DEFAULT_SECONDS))


class AgentEnded(BaseException):
    """The agent's code tried to end the process (`sys.exit`, `os._exit`, `KeyboardInterrupt`); it ends the
    agent's game instead. A BaseException, so an agent's own `except Exception` does not swallow it."""


class _ProcessExit(BaseException):
    """`os._exit` called in an agent's thread, unwinding that thread's stack."""


class _ProcessSignal(BaseException):
    """A signal an agent's thread would send this process, unwinding that thread's stack instead."""


class AgentTimeout(Exception):
    """The agent's call did not return within its limit."""


class _AgentThread(threading.Thread):
    """The daemon thread that runs one agent's calls, one at a time, until told to stop; marked, so that
    `os._exit` in it unwinds the agent's call instead (`_exit_unless_agent`). One thread for the agent's whole game,
    because Linux lists the processes a thread started under that thread only while it lives; a later agent
    may take it over once the game is over (`_idle`)."""

    confined_agent = True

    def __init__(self):
        super().__init__(daemon=True, name="contractlang-agent")
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()

    def run(self) -> None:
        while (work := self.inbox.get()) is not None:
            fn, args = work
            limit, cwd = sys.getrecursionlimit(), os.getcwd()
            try:
                answer = (True, fn(*args))
            except BaseException as exc:  # noqa: BLE001 - whatever the agent's code raises is reported, not lost
                answer = (False, exc)
            _restore(limit, cwd)  # here, before the game's thread runs again at its own depth
            self.outbox.put(answer)


_idle: list[_AgentThread] = []
"""This process's threads of closed agents (`IDLE_THREADS` at most; `list.pop` and `append` are atomic, so no lock
that a fork could copy held). A forked child has none: threads do not survive the fork."""
os.register_at_fork(after_in_child=_idle.clear)


def _agent_thread() -> _AgentThread:
    """An idle agent thread, else a new one, started."""
    try:
        return _idle.pop()
    except IndexError:
        thread = _AgentThread()
        thread.start()
        return thread


def _exit_unless_agent(real_exit: Callable[[int], None]) -> Callable[[int], None]:
    def _exit(code: int) -> None:
        if getattr(threading.current_thread(), "confined_agent", False):
            raise _ProcessExit(code)
        real_exit(code)

    _exit.confines_agents = True
    return _exit


def _signal_unless_agent(real: Callable, name: str, to_process: Callable[..., bool]) -> Callable:
    """`real`, except that a call from an agent's thread that would signal this process (`to_process` of its
    arguments) unwinds the agent's call instead, as `os._exit` does."""

    def guarded(*args):
        if getattr(threading.current_thread(), "confined_agent", False) and to_process(*args):
            raise _ProcessSignal(name)
        return real(*args)

    guarded.confines_agents = True
    return guarded


def _guard_process_exit() -> None:
    """Route `os._exit`, and the signals an agent's thread would send this process (`os.kill` of its own pid or
    group, `signal.raise_signal`, `signal.alarm`, `signal.setitimer`), to an exception that unwinds the agent's
    call; calls from any other thread act as before. Installed once per process, idempotent."""
    if not getattr(os._exit, "confines_agents", False):
        os._exit = _exit_unless_agent(os._exit)
    if not getattr(os.kill, "confines_agents", False):
        os.kill = _signal_unless_agent(os.kill, "os.kill", lambda pid, sig: pid in (0, os.getpid(), -os.getpgrp()))
        signal.raise_signal = _signal_unless_agent(signal.raise_signal, "signal.raise_signal", lambda sig: True)
        signal.alarm = _signal_unless_agent(signal.alarm, "signal.alarm", lambda seconds: seconds > 0)
        signal.setitimer = _signal_unless_agent(signal.setitimer, "signal.setitimer", lambda which, *rest: True)


class _AgentStdout:
    """`sys.stdout` as the agents see it: what an agent's thread writes goes to stderr, so a command's own output
    (a `--json` answer, a table) is never interleaved with an agent's prints; every other thread writes through."""

    confines_agents = True

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        if getattr(threading.current_thread(), "confined_agent", False):
            return sys.stderr.write(text)
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _guard_stdout() -> None:
    """Put `_AgentStdout` in front of the current `sys.stdout`, once (a caller may have replaced it since)."""
    if not getattr(sys.stdout, "confines_agents", False) and sys.stdout is not None:
        sys.stdout = _AgentStdout(sys.stdout)


class Confined:
    """The calls of the in-process agent `who` names, in its own thread, each within `seconds`; `end()` kills
    the processes its calls started and lets the thread go."""

    def __init__(self, who: str, seconds: float | None = None):
        self.who = who
        self.seconds = move_seconds() if seconds is None else seconds
        self.stuck = False
        _guard_process_exit()
        self.thread = _agent_thread()

    def call(self, fn: Callable, *args) -> Any:
        """`fn(*args)` in the agent's thread. What it raises is raised here, an attempt to end the process
        (`sys.exit`, `os._exit`, `KeyboardInterrupt`) as `AgentEnded`; `AgentTimeout` when it takes longer than
        the limit, and for every call after one that did."""
        if self.stuck:
            raise AgentTimeout(f"{self.who} is still busy with a call that gave no answer")
        _guard_stdout()
        self.thread.inbox.put((fn, args))
        try:
            ok, value = self.thread.outbox.get(timeout=self.seconds)
        except queue.Empty:
            self.stuck = True
            raise AgentTimeout(f"{self.who} gave no answer within {self.seconds:g} s") from None
        if ok:
            return value
        if isinstance(value, SystemExit):
            raise self._ended(f"called sys.exit({value.code!r})") from None
        if isinstance(value, _ProcessExit):
            raise self._ended(f"called os._exit({value.args[0]!r})") from None
        if isinstance(value, KeyboardInterrupt):
            raise self._ended("raised KeyboardInterrupt") from None
        if isinstance(value, _ProcessSignal):
            raise self._ended(f"signalled the process ({value.args[0]})") from None
        if not isinstance(value, Exception):  # GeneratorExit or the agent's own BaseException: past every handler
            raise self._ended(f"raised {type(value).__name__}") from None
        raise value

    def _ended(self, how: str) -> AgentEnded:
        return AgentEnded(f"{self.who} {how}: an agent cannot end the process, so its game ends instead")

    def end(self) -> None:
        """Kill every process the agent's calls started, and theirs (SIGKILL, then reaped); the thread waits for
        the next agent, or stops once its current call, if any, returns."""
        for pid in _children(self.thread.native_id):
            _kill_tree(pid)
        if self.stuck or len(_idle) >= IDLE_THREADS:
            self.thread.inbox.put(None)
        else:
            _idle.append(self.thread)


def _restore(limit: int, cwd: str) -> None:
    """Set back the recursion limit and working directory an agent's call may have changed for the process."""
    if sys.getrecursionlimit() != limit:
        sys.setrecursionlimit(limit)
    if os.getcwd() != cwd:
        os.chdir(cwd)


def _children(tid: int) -> list[int]:
    """The processes thread `tid` of this process started that still run (Linux's per-task children list)."""
    try:
        text = Path(f"/proc/self/task/{tid}/children").read_text()
    except OSError:
        return []
    return [int(pid) for pid in text.split()]


def _kill_tree(pid: int) -> None:
    """SIGKILL `pid` and its descendants (stopped first, so none forks again meanwhile), then reap `pid`."""
    tree = [pid]
    for p in tree:
        try:
            os.kill(p, signal.SIGSTOP)
        except OSError:
            continue
        for task in Path(f"/proc/{p}/task").glob("*"):
            tree.extend(_read_children(task / "children"))
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # its owner (a Popen) reaped it already
        pass


def _read_children(path: Path) -> list[int]:
    try:
        return [int(pid) for pid in path.read_text().split()]
    except OSError:
        return []
