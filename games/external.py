"""External agents: any program that speaks the agent protocol (games/agents.py) as JSON lines.

An agent receives its role's typed observation (`state.observe(role)`) and returns a typed action. The
built-in baselines do this in-process; an external agent (`cmd:PROGRAM`) is a child process that gets one
request line per decision on its stdin,

    {"game": "NAME", "role": "...", "request": N, "observation": {...}}

(NAME: the game's registered name, `games.game`) and answers with one line on its stdout: `{"action": {...}}`,
the action in the game's JSON form (`kind` plus its fields; money in base units). Whatever it writes to stderr passes through to ours.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterable
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from contractlang.files import parse_json
from games.errors import AgentError

EXTERNAL_PREFIX = "cmd:"
MAX_ANSWER_BYTES = 2**20  # an action is a few hundred bytes; a program writing without end is stopped here
EXIT_SECONDS = 2.0
"""How long a program may take to exit on its own once a game it played to the end closes its stdin."""


class ExternalAgent:
    """A program playing one role over JSON lines; started at its first decision, ended by `close`."""

    def __init__(self, name: str, game: str, action_type=None, reply_seconds: float | None = None):
        self.name = name
        self.argv = shlex.split(name.removeprefix(EXTERNAL_PREFIX))
        if not self.argv:
            raise AgentError(f"agent {name!r}: give the program to run after 'cmd:', e.g. cmd:./my_agent.py")
        self.game = game
        self.actions = TypeAdapter(Annotated[action_type, Field(discriminator="kind")]) if action_type else None
        # read when the agent starts, not at import, so a run (or an in-process test) can set it
        self.reply_seconds = (
            reply_seconds if reply_seconds is not None else float(os.environ.get("CONTRACTLANG_AGENT_TIMEOUT", "60"))
        )
        self.requests = 0
        self.process: subprocess.Popen | None = None
        self.lines: queue.Queue[bytes] = queue.Queue(maxsize=2)  # each start makes its own (`_start`)
        self.closed = threading.Event()

    def _start(self) -> subprocess.Popen:
        try:
            # in our process group, so that a Ctrl-C at the terminal reaches it as it reaches us; `close` ends
            # what it started as well (see `_kill`)
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            raise AgentError(f"agent {self.name!r}: cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        # bounded: lines the game never asks for (a program writing without end) wait in the pipe, not in memory
        lines: queue.Queue[bytes] = queue.Queue(maxsize=2)
        closed = threading.Event()

        def hand_over(line: bytes) -> bool:
            while not closed.is_set():
                try:
                    lines.put(line, timeout=0.1)
                    return True
                except queue.Full:
                    pass
            return False

        def pump() -> None:
            # bytes, not text: whatever the program writes (binary garbage, endless output) reaches `exchange`
            # as lines to judge, and this thread never dies with a traceback of its own
            try:
                while (line := process.stdout.readline(MAX_ANSWER_BYTES + 1)) and hand_over(line):
                    pass
            except (OSError, ValueError):
                pass  # the pipe was closed under us: the game is over
            hand_over(b"")  # end of output
            process.stdout.close()

        self.lines, self.closed = lines, closed
        threading.Thread(target=pump, daemon=True).start()
        return process

    def exchange(self, observation) -> str:
        """Send one request and return the program's answer line, which must be UTF-8 text of at most
        MAX_ANSWER_BYTES."""
        if self.process is None:
            self.process = self._start()
        self.requests += 1
        role = getattr(observation, "role", None) or observation.player
        request = {
            "game": self.game,
            "role": role,
            "request": self.requests,
            "observation": observation.model_dump(mode="json"),
        }
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise AgentError(f"agent {self.name!r} {self._exited()} before request {self.requests}") from None
        try:
            line = self.lines.get(timeout=self.reply_seconds)
        except queue.Empty:
            raise AgentError(
                f"agent {self.name!r} gave no answer to request {self.requests} within {self.reply_seconds:g} s"
            ) from None
        if not line:
            raise AgentError(f"agent {self.name!r} {self._exited()} without answering request {self.requests}")
        if len(line) > MAX_ANSWER_BYTES:
            raise AgentError(
                f"agent {self.name!r}: answer to request {self.requests} is longer than {MAX_ANSWER_BYTES // 2**20} MiB"
            )
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentError(
                f"agent {self.name!r}: answer to request {self.requests} is not UTF-8 text: {line[:40]!r}"
            ) from None

    def act(self, observation):
        line = self.exchange(observation)
        try:
            reply = parse_json(line)
        except ValueError:
            raise AgentError(
                f"agent {self.name!r}: answer to request {self.requests} is not JSON: {line.strip()[:80]!r}"
            ) from None
        if not isinstance(reply, dict) or "action" not in reply:
            raise AgentError(f'agent {self.name!r}: answer to request {self.requests} has no "action" field')
        try:
            return self.actions.validate_python(reply["action"])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise AgentError(
                f"agent {self.name!r}: answer to request {self.requests} is not a {self.game} action "
                f"({where}: {first['msg']})"
            ) from None

    def close(self, grace: float = EXIT_SECONDS) -> None:
        """Close the program's stdin, let it exit within `grace` seconds, then kill it and everything it started."""
        if self.process is None:
            return
        if grace <= 0:
            self._kill()  # before its input ends, so that it never exits as if the game had finished
        strays = _descendants(self.process.pid) if self.process.poll() is None else []  # its exit orphans them
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        self._kill(strays)
        self.process.wait()
        self.closed.set()
        self.process = None

    def _exited(self) -> str:
        """How the program ended its side of a pipe: by exiting (with its code), or by closing it while it runs on."""
        try:
            return f"exited (code {self.process.wait(timeout=EXIT_SECONDS)})"
        except subprocess.TimeoutExpired:
            return "closed its end of the pipe without exiting"

    def _kill(self, strays: Iterable[int] = ()) -> None:
        """SIGKILL the program and every process it started (its descendants now, and `strays`, those it had
        before it exited): a shell script's children outlive the shell, and one left writing to the pipe would
        never let the pump stop. The tree is read from /proc (without it, the program alone). A program already
        reaped is not signalled, nor is its tree read: its pid may be another process's now."""
        _signal_all(strays)
        if self.process.poll() is None:  # until we reap it, its pid stays its own
            kill_tree(self.process.pid)


def kill_tree(root: int, include_root: bool = True) -> None:
    """SIGKILL every process below `root` (and `root` itself, unless told not to)."""
    _signal_all([*_descendants(root), *([root] if include_root else [])])


def _signal_all(pids: Iterable[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # ended meanwhile


def _descendants(root: int) -> list[int]:
    """The pids below `root` in the process tree, read from /proc once (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found
