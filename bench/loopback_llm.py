"""A loopback LLM API for the scale benchmark (issue #47): on 127.0.0.1 it answers the Anthropic Messages API
(POST …/v1/messages) and the Chat Completions API (POST …/chat/completions) after a fixed delay, with the
all-zero action a ContractSim performance request names (games/contractsim/llm_agents.py: the keys of its
`Reply {...}` or `e.g. {...}` line), so every game plays through without a format retry. It counts the
requests in flight over time, and plays a fault on demand: a burst of 429s (with retry-after) or an outage of
529s, starting a given time after the first request.

Usage as a server of its own: python3 bench/loopback_llm.py [--delay 2] [--fault burst429 --at 10 --for 30]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llm_server import (  # noqa: E402
    as_chat_reply,
    as_messages_request,
    message,
    overloaded,
    prompt_of,
    send_json,
)

FAULTS = ("none", "burst429", "outage529")
_KEYS = re.compile(r'"([a-z][a-z0-9_]*)": ?(?:<|0)')


def zero_action(prompt: str) -> str:
    """The reply a performance request accepts whatever the state: every key it names, as 0 (ordering, making
    and paying nothing is always legal)."""
    keys = list(dict.fromkeys(_KEYS.findall(prompt)))
    return json.dumps({k: 0 for k in keys})


@dataclass(frozen=True)
class Fault:
    """`kind` from FAULTS, played from `at` to `at + seconds` after the first request; its answers say
    `retry_after` seconds (None: no retry-after header, as the API's 529s)."""

    kind: str = "none"
    at: float = 0.0
    seconds: float = 0.0
    retry_after: float | None = None

    def reply(self, since_first: float) -> tuple[int, dict, dict] | None:
        """The fault's answer at `since_first` seconds into the run, or None outside it."""
        if self.kind == "none" or not self.at <= since_first < self.at + self.seconds:
            return None
        headers = {} if self.retry_after is None else {"retry-after": f"{self.retry_after:g}"}
        if self.kind == "burst429":
            return 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}, headers
        status, body = overloaded()
        return status, body, headers


@dataclass
class Counts:
    """What the server saw: requests by status, and every change of the number in flight as (time, number)."""

    started: float = field(default_factory=time.monotonic)
    first: float | None = None
    last: float | None = None
    in_flight: int = 0
    max_in_flight: int = 0
    by_status: dict = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    timeline: list = field(default_factory=list)


class LoopbackLlm:
    """The server; `with LoopbackLlm(delay=2.0) as s:` serves on `s.url` from a thread of this process. Each
    connection gets a thread of its own (keep-alive: a pooled client's connection lasts), so hundreds of
    requests wait their delay at once."""

    def __init__(self, delay: float = 2.0, fault: Fault = Fault()):
        self.delay, self.fault = delay, fault
        self.counts = Counts()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                chat = self.path.rstrip("/").endswith("/chat/completions")
                since_first, status = server._arrive(), 0
                try:
                    status, payload, headers = server._answer(as_messages_request(body) if chat else body, since_first)
                    payload = as_chat_reply(status, payload) if chat else payload
                    send_json(self, status, json.dumps(payload).encode(), headers)
                    self.wfile.flush()
                except OSError:
                    self.close_connection = True  # the client gave up on this request
                finally:
                    server._leave(status)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024  # hundreds of clients connect at once; the default backlog of 5 drops SYNs

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _arrive(self) -> float:
        with self.lock:
            c, now = self.counts, time.monotonic()
            if c.first is None:
                c.first = now
            c.in_flight += 1
            c.max_in_flight = max(c.max_in_flight, c.in_flight)
            c.timeline.append((now, c.in_flight))
            return now - c.first

    def _leave(self, status: int) -> None:
        with self.lock:
            c, now = self.counts, time.monotonic()
            c.in_flight -= 1
            c.last = now
            c.by_status[status] = c.by_status.get(status, 0) + 1
            c.timeline.append((now, c.in_flight))

    def _answer(self, body: dict, since_first: float) -> tuple[int, dict, dict]:
        faulted = self.fault.reply(since_first)
        if faulted is not None:
            return faulted
        time.sleep(self.delay)
        prompt = prompt_of(body)
        text = zero_action(prompt)
        size = sum(len(json.dumps(m)) for m in body["messages"]) + len(json.dumps(body.get("system", "")))
        reply = message(text, input_tokens=size // 4, output_tokens=len(text) // 4 + 1)
        with self.lock:
            self.counts.input_tokens += reply["usage"]["input_tokens"]
            self.counts.output_tokens += reply["usage"]["output_tokens"]
        return 200, reply, {}

    def in_flight_at(self, seconds: float) -> int:
        """Requests in flight `seconds` after the first request (the last change at or before it)."""
        c, found = self.counts, 0
        if c.first is None:
            return 0
        for t, n in c.timeline:
            if t - c.first > seconds:
                break
            found = n
        return found

    def mean_in_flight(self, start: float, end: float) -> float:
        """The time-weighted mean number in flight between `start` and `end` seconds after the first request."""
        c = self.counts
        if c.first is None or end <= start:
            return 0.0
        area, level, at = 0.0, 0, start
        for t, n in c.timeline:
            s = t - c.first
            if s > end:
                break
            if s > at:
                area += level * (s - at)
                at = s
            level = n
        area += level * (end - at)
        return area / (end - start)

    def busy_seconds(self) -> float:
        """From the first request to the last answer."""
        c = self.counts
        return 0.0 if c.first is None or c.last is None else c.last - c.first

    def series(self, step: float = 1.0) -> list[int]:
        """The number in flight every `step` seconds of the busy part (for plots and the limit's history)."""
        return [self.in_flight_at(i * step) for i in range(int(self.busy_seconds() / step) + 1)]

    def __enter__(self) -> LoopbackLlm:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=2.0, help="seconds before each answer")
    parser.add_argument("--fault", choices=FAULTS, default="none")
    parser.add_argument("--at", type=float, default=10.0, help="seconds after the first request the fault starts")
    parser.add_argument("--for", dest="seconds", type=float, default=30.0, help="seconds the fault lasts")
    parser.add_argument(
        "--retry-after",
        type=float,
        help="seconds the fault's answers ask to wait (default: 2 for a 429, none for a 529)",
    )
    args = parser.parse_args()
    retry_after = args.retry_after if args.retry_after is not None or args.fault != "burst429" else 2.0
    with LoopbackLlm(args.delay, Fault(args.fault, args.at, args.seconds, retry_after)) as server:
        print(f"export ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=sk-loopback", flush=True)
        try:
            while True:
                time.sleep(5)
                c = server.counts
                print(f"in flight {c.in_flight} (max {c.max_in_flight}); answers {c.by_status}", flush=True)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
