"""A scripted LLM API on 127.0.0.1: plays back canned responses, records requests. It speaks the Anthropic
Messages API (POST …/v1/messages) and the OpenAI Chat Completions API (POST …/chat/completions) alike: scripts
are written in the Messages form, and a Chat Completions request is shown to them as one (its system message
as the system block) and answered in its own wire format."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def send_json(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str]) -> None:
    """One JSON response of `data` with `headers`, as the APIs send it."""
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def message(text: str, input_tokens: int = 100, output_tokens: int = 50) -> dict:
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "scripted-model",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def chat_completion(text: str, input_tokens: int = 100, output_tokens: int = 50, cached_tokens: int = 0) -> dict:
    """A Chat Completions reply; `input_tokens` are the uncached ones (the API counts cached ones in too)."""
    prompt = input_tokens + cached_tokens
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output_tokens,
            "total_tokens": prompt + output_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def as_messages_request(body: dict) -> dict:
    """A Chat Completions request as the Messages API would have received it."""
    system = [m for m in body["messages"] if m["role"] == "system"]
    return {
        **body,
        "system": [{"type": "text", "text": m["content"]} for m in system],
        "messages": [m for m in body["messages"] if m["role"] != "system"],
    }


def as_chat_reply(status: int, payload):
    """A scripted Messages reply in the Chat Completions wire format (garbage stays garbage)."""
    if not isinstance(payload, dict):
        return payload
    if payload.get("type") == "message":
        text = "".join(b["text"] for b in payload["content"] if b["type"] == "text")
        usage = payload["usage"]
        return chat_completion(
            text, usage["input_tokens"], usage["output_tokens"], usage.get("cache_read_input_tokens", 0)
        )
    if payload.get("type") == "error":
        return {"error": {"message": payload["error"]["message"], "type": payload["error"]["type"], "code": status}}
    return payload


def text_of(content) -> str:
    """A message's content as text (a string, or text blocks as the Messages API receives a marked message)."""
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def prompt_of(body: dict) -> str:
    """The newest user message of a request, as text."""
    return text_of(body["messages"][-1]["content"])


def overloaded() -> tuple[int, dict]:
    return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class ScriptedServer:
    """Each request pops the next scripted reply: (status, body[, delay_seconds[, headers]]); a bytes body is
    sent as it is (garbage), and `headers` replace the default retry-after-ms of 10. `replies` may instead be a
    function of the request body that returns the reply (a scripted player that reads its prompt). `arrivals`
    holds when each request was read (time.monotonic()); `peak_in_flight` the most requests it held at once."""

    def __init__(self, replies):
        self.respond = replies if callable(replies) else None
        self.replies = [] if callable(replies) else list(replies)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        self.arrivals: list[float] = []
        self.in_flight = self.peak_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                with server._lock:
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                self.counted = True
                try:
                    self.answer()
                finally:
                    self.answered()

            def answered(self):
                """The request leaves the count before its answer is sent: the client may send the next at once."""
                if self.counted:
                    self.counted = False
                    with server._lock:
                        server.in_flight -= 1

            def answer(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                chat = self.path.rstrip("/").endswith("/chat/completions")
                server.arrivals.append(time.monotonic())
                server.requests.append(body)
                server.paths.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.respond is not None:
                    reply = server.respond(as_messages_request(body) if chat else body)
                else:
                    reply = (
                        server.replies.pop(0)
                        if server.replies
                        else (500, {"type": "error", "error": {"type": "api_error", "message": "script exhausted"}})
                    )
                status, payload = reply[0], as_chat_reply(reply[0], reply[1]) if chat else reply[1]
                if len(reply) > 2:
                    time.sleep(reply[2])
                headers = reply[3] if len(reply) > 3 else {"retry-after-ms": "10"}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.answered()
                try:
                    send_json(self, status, data, headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class RawServer:
    """A misbehaving API on 127.0.0.1: each POST is read and recorded (path, headers, body), then `behave(wfile,
    body)` writes whatever bytes it likes — a status line and headers of its own, a trickle, an endless body — until
    it returns or the client goes away. `arrivals` holds when each request was read (time.monotonic())."""

    def __init__(self, behave):
        self.arrivals: list[float] = []
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.arrivals.append(time.monotonic())
                server.requests.append(body)
                server.paths.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    behave(self.wfile, body)
                    self.wfile.flush()
                except OSError:
                    pass  # the client gave up: what the test wants
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def head(status: int = 200, *headers: str) -> bytes:
    """A status line and headers, as a misbehaving server writes them."""
    return (f"HTTP/1.1 {status} X\r\n" + "".join(f"{h}\r\n" for h in headers) + "\r\n").encode()
