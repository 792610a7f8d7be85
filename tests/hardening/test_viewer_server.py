"""`contractlang view` as a server an attacker can reach: a real `view` process on loopback, driven with raw
sockets and http.client. No request from another site builds a game, no program named in a record starts without
--allow-commands, nothing outside the viewed folder is served or bundled, a Host the server was not addressed by
is refused on every bind, slow or many connections hold bounded resources, and nothing prints a traceback."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contractlang.api.view.site import MAX_PENDING, REQUEST_SECONDS, TOKEN_HEADER
from tests.hardening.hostile import WORKED, cli
from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.e2e  # a real server process


@pytest.fixture(scope="module")
def record() -> dict:
    """A `run --json` record of Example 1 in Env 5 against a random Customer (its events kept)."""
    done = run_cli("run", WORKED, "--env", "5", "--customer", "random", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def without_events(record: dict, **agents) -> dict:
    """The record as a store that keeps no events would hold it, with other agents named: opening it rebuilds it."""
    return {**{k: v for k, v in record.items() if k not in ("trajectory", "log")}, **agents}


class View:
    """A `contractlang view` process and requests to it."""

    def __init__(self, path: Path, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "contractlang", "view", str(path), "--json", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read()
        self.url = json.loads(line)["url"]
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))
        self.token = re.search(r'name="contractlang-token" content="([^"]+)"', self.get("/")[1]).group(1)

    def get(self, path: str, headers: dict | None = None, timeout: float = 60) -> tuple[int, str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", path, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, answer.read().decode()
        finally:
            connection.close()

    def game(self, game_id: str, **headers) -> tuple[int, dict | str]:
        status, body = self.get(f"/data/game/{game_id}.json", {TOKEN_HEADER: self.token, **headers})
        return status, json.loads(body) if status == 200 else body

    def index(self) -> dict:
        """`data/index.json` once the server has read the folder (it reads in the background)."""
        for _ in range(600):
            index = json.loads(self.get("/data/index.json")[1])
            if not index["reading"]:
                return index
            time.sleep(0.1)
        raise AssertionError("the folder was not read within a minute")

    def threads(self) -> int:
        return int(re.search(r"Threads:\s+(\d+)", Path(f"/proc/{self.process.pid}/status").read_text()).group(1))

    def stop(self) -> str:
        """Stop the server; its stderr."""
        self.process.terminate()
        _, stderr = self.process.communicate(timeout=60)
        assert "Traceback" not in stderr, stderr
        return stderr


@pytest.fixture
def view():
    started: list[View] = []

    def start(path: Path, *args: str) -> View:
        started.append(View(path, *args))
        return started[-1]

    yield start
    for v in started:
        if v.process.poll() is None:
            v.stop()


def program(tmp_path: Path) -> tuple[str, Path]:
    """An external agent that leaves a file behind when started: the proof that a rebuild ran it."""
    ran = tmp_path / "ran"
    script = tmp_path / "agent.sh"
    script.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    script.chmod(0o755)
    return f"cmd:{script}", ran


def test_no_request_from_another_site_or_without_the_token_builds_a_game(record, tmp_path, view):
    """A page elsewhere can make the browser send a GET (an <img>, a form, a fetch in no-cors mode): it carries
    the browser's Sec-Fetch-Site and Origin, and never the token this server wrote into its own page."""
    spec, ran = program(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "g.jsonl").write_text(json.dumps(without_events(record, customer=spec)) + "\n")
    v = view(tmp_path / "runs", "--allow-commands")
    cross = [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {TOKEN_HEADER: "guessed"},
        {TOKEN_HEADER: ""},
    ]
    for headers in cross:
        status, _ = v.game("g0-1", **headers)
        assert status == 403, headers
    assert v.get("/data/game/g0-1.json")[0] == 403  # no token at all
    assert v.get("/data/index.json", {"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert v.get("/", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"})[0] == 200  # a link to it
    time.sleep(0.5)
    assert not ran.exists()
    status, page = v.game("g0-1", **{"Sec-Fetch-Site": "same-origin", "Origin": f"http://127.0.0.1:{v.port}"})
    assert status == 200 and "could not be rebuilt" in page["error"] and ran.exists()  # the page's own request
    v.stop()


@pytest.mark.parametrize("spec", ["cmd:{script}", "x=cmd:{script}", "cmd", "x=cmd", "py:{script}:Agent"])
def test_a_program_named_in_a_record_never_starts_without_allow_commands(record, tmp_path, spec):
    """Any spelling of a program (a bare `cmd` is the program `cmd`, a label in front changes nothing) or a
    Python agent named in a record: the page says to pass --allow-commands, and nothing ran."""
    from contractlang.api.view.site import Viewer

    script, ran = program(tmp_path)
    named = spec.format(script=script.removeprefix("cmd:"))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "g.jsonl").write_text(json.dumps(without_events(record, customer=named)) + "\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmd").symlink_to(script.removeprefix("cmd:"))  # a program called `cmd` on PATH
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{bin_dir}:{path}"
    try:
        page = Viewer(tmp_path / "runs", live=False).game("g0-1")
    finally:
        os.environ["PATH"] = path
    assert "--allow-commands" in page["error"] and not ran.exists()


def test_metrics_never_replays_a_labelled_bare_cmd_without_allow_commands(record, tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({**record, "customer": "mine=cmd"}) + "\n")
    done = cli("metrics", runs)
    assert done.returncode == 1 and "pass --allow-commands" in done.stderr and "'mine=cmd'" in done.stderr


def test_links_out_of_the_viewed_folder_are_neither_served_nor_bundled(record, tmp_path, view):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "runs.jsonl").write_text(json.dumps({**record, "seed": 770_123_457}) + "\n")
    (secret / "plot.png").write_bytes(b"\x89PNG secret figure")
    (secret / "tables.md").write_text("| secret |\n|---|\n| 42 |\n")
    viewed = tmp_path / "viewed"
    viewed.mkdir()
    (viewed / "mine.jsonl").write_text(json.dumps(record) + "\n")
    for name in ("runs.jsonl", "plot.png", "tables.md"):
        (viewed / name).symlink_to(secret / name)
    (viewed / "folder").symlink_to(secret, target_is_directory=True)
    v = view(viewed)
    index = v.index()
    assert index["games"] == 1 and index["figures"] == [] and index["tables"] == []
    assert sorted(index["problems"]) == [
        f"{name}: a link to a file outside the viewed folder; not read"
        for name in ("plot.png", "runs.jsonl", "tables.md")
    ]
    assert v.get("/files/0.png")[0] == 404
    v.stop()
    site = tmp_path / "site"
    done = cli("view", viewed, "--bundle", site, "--workers", "1")
    assert done.returncode == 0, done.stderr
    for path in site.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"secret" not in text and b"770123457" not in text and str(tmp_path).encode() not in text, path


def test_a_host_the_server_was_not_addressed_by_is_refused_on_every_bind(record, tmp_path, view):
    """DNS rebinding: a page at attacker.example whose name now points at this machine sends its Host. Refused
    on 127.0.0.2 and Debian's 127.0.1.1 as on 127.0.0.1; a bind reachable from the network is warned of."""
    (tmp_path / "g.jsonl").write_text(json.dumps(record) + "\n")
    for host in ("127.0.0.2", "127.0.1.1", "0.0.0.0"):
        process = subprocess.Popen(
            [sys.executable, "-m", "contractlang", "view", str(tmp_path), "--host", host, "--json"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            port = int(json.loads(process.stdout.readline())["url"].rsplit(":", 1)[1].strip("/"))
            target = "127.0.0.1" if host == "0.0.0.0" else host
            for named, expected in (
                (f"attacker.example:{port}", 403),
                (f"localhost.attacker.example:{port}", 403),
                ("", 403),
                (f"{target}:{port}", 200),
                (f"localhost:{port}", 200),
            ):
                connection = http.client.HTTPConnection(target, port, timeout=30)
                connection.request("GET", "/data/index.json", headers={"Host": named})
                answer = connection.getresponse()
                answer.read()
                connection.close()
                assert answer.status == expected, (host, named)
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=60)
        assert "Traceback" not in stderr
        warned = "warning: 0.0.0.0 is reachable from the network" in stderr
        assert warned == (host == "0.0.0.0"), stderr


def test_slow_and_many_connections_hold_bounded_resources_and_print_nothing(record, tmp_path, view):
    """Slowloris (requests sent a byte at a time, never finished) and a flood of idle connections: the server's
    threads stay bounded, a normal request is answered meanwhile, the slow ones are closed after
    REQUEST_SECONDS, and stderr stays empty."""
    (tmp_path / "g.jsonl").write_text(json.dumps(record) + "\n")
    v = view(tmp_path)
    threads = v.threads()
    slow = []
    try:
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", v.port), timeout=30)
            s.sendall(b"GET /data/index.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
            slow.append(s)
        assert v.get("/data/index.json", timeout=30)[0] == 200
        for _ in range(400):  # past MAX_PENDING: the oldest waiting connections are dropped
            slow.append(socket.create_connection(("127.0.0.1", v.port), timeout=30))
        assert v.get("/data/index.json", timeout=30)[0] == 200
        assert v.threads() <= threads + 2
        time.sleep(REQUEST_SECONDS + 2)
        assert len(slow) > MAX_PENDING and all(closed(s) for s in slow)
    finally:
        for s in slow:
            s.close()
    assert v.get("/", timeout=30)[0] == 200
    assert v.stop().strip() == ""


def closed(connection: socket.socket) -> bool:
    """Whether the server has closed `connection` (waiting at most 10 s for it to say so)."""
    connection.settimeout(10)
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_many_complete_requests_at_once_are_answered_or_turned_away_in_one_line(record, tmp_path, view):
    (tmp_path / "g.jsonl").write_text(json.dumps(record) + "\n")
    v = view(tmp_path)
    sockets = []
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", v.port), timeout=60)
        s.sendall(f"GET /data/game/g0-1.json HTTP/1.0\r\nHost: 127.0.0.1\r\n{TOKEN_HEADER}: {v.token}\r\n\r\n".encode())
        sockets.append(s)
    statuses = []
    for s in sockets:
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        s.close()
        statuses.append(data.split(b" ", 2)[1])
    assert set(statuses) <= {b"200", b"503"} and b"200" in statuses
    assert v.get("/data/index.json")[0] == 200
    assert v.stop().strip() == ""
