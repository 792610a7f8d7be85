"""A scripted Anthropic Messages API on 127.0.0.1: plays back canned responses, records requests."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def message(text: str, input_tokens: int = 100, output_tokens: int = 50) -> dict:
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted-model",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}


def prompt_of(body: dict) -> str:
    """The newest user message of a request, as text."""
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def overloaded() -> tuple[int, dict]:
    return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class ScriptedServer:
    """Each request pops the next scripted reply: (status, body[, delay_seconds[, headers]]); a bytes body is
    sent as it is (garbage), and `headers` replace the default retry-after-ms of 10. `replies` may instead be a
    function of the request body that returns the reply (a scripted player that reads its prompt)."""

    def __init__(self, replies):
        self.respond = replies if callable(replies) else None
        self.replies = [] if callable(replies) else list(replies)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.respond is not None:
                    reply = server.respond(body)
                else:
                    reply = server.replies.pop(0) if server.replies else (500, {"type": "error", "error": {
                        "type": "api_error", "message": "script exhausted"}})
                status, payload = reply[0], reply[1]
                if len(reply) > 2:
                    time.sleep(reply[2])
                headers = reply[3] if len(reply) > 3 else {"retry-after-ms": "10"}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
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
