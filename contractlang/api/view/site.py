"""The viewer's files: the page (package data), and its data as JSON built from what lies under the viewed path,
served on loopback while a run is still writing, or written once as a static site (`--bundle`)."""

from __future__ import annotations

import io
import ipaddress
import json
import os
import re
import secrets
import selectors
import shutil
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from functools import lru_cache, partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from contractlang.api.view.index import GameRow, ViewIndex, record_line
from contractlang.api.view.options import PageError, ViewOptions
from contractlang.files import FileError, make_folder
from contractlang.vocab import Frozen

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "view.js": "text/javascript; charset=utf-8",
    "view.css": "text/css; charset=utf-8",
}
GAME_ID = re.compile(r"g[0-9]+(-[0-9]+)*(-[cs])?")
PAGES_KEPT = 64


class Viewer:
    """The data the page reads, by the names it reads them under (`index.json`, `list/K.json`, `game/ID.json`,
    `coverage.json`); game pages are built when first asked for and the last PAGES_KEPT kept."""

    def __init__(self, root: Path, options: ViewOptions | None = None, tables=None, live: bool = True):
        # served, a directory is read in the background: the page opens at once and its list fills as it is read
        background = live and root.is_dir()
        self.index = ViewIndex(root, scan=not background)
        if background:
            threading.Thread(target=self.index.refresh, daemon=True).start()
        self.options = options or ViewOptions()
        self._tables = tables  # a solver.dp.TableCache; by default the on-disk one, made when a game is first built
        self._baselines = None
        self.live = live
        self._pages: OrderedDict[tuple[str, int], dict] = OrderedDict()
        self._build = threading.Lock()  # the table cache and the games are not built for threads
        self._reports: dict[tuple, dict] = {}  # (games file, size, mtime) -> its CT-Bench report
        self._coverage: tuple[tuple[int, int], dict] | None = None  # for the index's (version, rows)

    def index_json(self) -> dict:
        if self.live:
            self.index.refresh(wait=False)
        return {**self.index.summary().model_dump(), "live": self.live, "writing": self.live and self.index.writing()}

    def game(self, game_id: str) -> dict | None:
        """A game's page data ({"error": why} when it cannot be shown); None for an ID the index lacks."""
        row = self.index.by_id.get(game_id)
        if row is None and self.index.reading:
            self.index.refresh()  # waits for the first scan
            row = self.index.by_id.get(game_id)
        if row is None:
            return None
        key = (game_id, self.index.version)
        with self._build:
            if key not in self._pages:
                from contractlang.api.analysis import Baselines  # the games and solvers: only now

                if self._baselines is None:
                    from solver.dp import TableCache

                    self._baselines = Baselines(self._tables or TableCache())
                try:
                    raw = self.index.line(row)
                except FileError as exc:
                    self._pages[key] = {"id": row.id, "row": row.model_dump(), "error": str(exc)}
                else:
                    self._pages[key] = page_of(raw, row, self.options, self._baselines)
                while len(self._pages) > PAGES_KEPT:
                    self._pages.popitem(last=False)
            self._pages.move_to_end(key)
            return self._pages[key]

    def data(self, name: str) -> dict | list | None:
        """The JSON under `data/NAME`, or None when there is none."""
        if name == "index.json":
            return self.index_json()
        if name == "coverage.json":
            return self.coverage()
        match = re.fullmatch(r"list/([0-9]{1,6})\.json", name)
        if match:
            return self.index.chunk(int(match[1]))
        match = re.fullmatch(r"report/([0-9]{1,6})\.json", name)
        if match:
            path = self.index.games_file(int(match[1]), "ctbench-report")
            return None if path is None else self._report(path)
        match = re.fullmatch(r"game/(.+)\.json", name)
        if match and GAME_ID.fullmatch(match[1]):
            return self.game(match[1])
        return None

    def coverage(self) -> dict:
        """The clause coverage of the viewed games and tests (`coverage_view`), made again when the list changed."""
        key = (self.index.version, len(self.index.rows))
        with self._build:
            if self._coverage is None or self._coverage[0] != key:
                from contractlang.api.view.coverage import coverage_view

                self._coverage = (key, coverage_view(self.index))
            return self._coverage[1]

    def _report(self, path: Path) -> dict:
        """A sweep's report, made again only when its games file changed."""
        try:
            status = path.stat()
        except OSError as exc:
            return {"error": f"{path.name}: cannot read: {exc.strerror or exc}"}
        key = (path, status.st_size, status.st_mtime_ns)
        if key not in self._reports:
            self._reports = {key: ctbench_report(path), **{k: v for k, v in self._reports.items() if k[0] != path}}
        return self._reports[key]

    def file(self, name: str) -> Path | None:
        """A figure under the viewed path, by its number in the index (`files/K.png`); never a path from a URL."""
        match = re.fullmatch(r"([0-9]{1,6})\.png", name)
        return self.index.figure(int(match[1])) if match else None


def page_of(raw: bytes, row: GameRow, options: ViewOptions, baselines) -> dict:
    """A game's page data as the page reads it: {"error": why} in place of the game when it cannot be shown."""
    from contractlang.api.view.games import game_page

    try:
        page = game_page(raw, row, options, baselines)
        site_json(page)
    except Exception as exc:  # noqa: BLE001 -- a record is data from anywhere: whatever it breaks ends its page only
        page = {"error": page_error(exc)}
    return {"id": row.id, "row": row.model_dump(), **page}


def ctbench_report(path: Path) -> dict:
    """The CT-Bench paper's tables over a games file, the paper's rows beside ours (`ctbench report --paper`), as
    text; {"error": why} when the file cannot be reported on (still being written, or not a runs file)."""
    from games.ctbench.published import ImportProblem, read_runs
    from games.ctbench.report import report_runs, report_text

    try:
        report = report_runs([item for _, item in read_runs(path)], paper_names=True)
    except (ImportProblem, FileError, ValueError) as exc:
        return {"error": str(exc).splitlines()[0]}
    return {"text": report_text(report, with_paper=True)}


def page_error(exc: Exception) -> str:
    """Why a game cannot be shown, in one line."""
    if isinstance(exc, PageError):
        return str(exc).splitlines()[0]
    if isinstance(exc, ValueError) and "Out of range float values" in str(exc):
        return "the record holds a number that is not finite (NaN or Infinity)"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        return f"the record does not read as a game: {where + ': ' if where else ''}{first['msg']}"
    text = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"the game cannot be shown: {text or type(exc).__name__}"


TOKEN_HEADER = "X-Contractlang-Token"
MAX_WORKERS = 16  # requests answered at once; more complete requests are answered 503 at once
MAX_PENDING = 256  # connections still sending their request; beyond this the oldest is dropped
REQUEST_SECONDS = 10.0  # for a request to arrive whole: a client sending it byte by byte holds nothing longer
SEND_SECONDS = 30.0  # for each write of an answer to a client that reads slowly
MAX_REQUEST_BYTES = 16 * 1024  # a request line and its headers; the page sends a few hundred bytes


class _Handler(BaseHTTPRequestHandler):
    """One request, read whole by `ViewServer` before it gets here."""

    viewer: Viewer
    server: ViewServer
    server_version = "contractlang-view"
    timeout = SEND_SECONDS

    def setup(self) -> None:
        super().setup()
        self.rfile = io.BytesIO(self.server.arrived.pop(self.request, b""))

    def log_message(self, format: str, *args) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, head: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        if not self._host_allowed():
            self.send_error(HTTPStatus.FORBIDDEN, "unexpected Host header")
            return
        if not (path in ("/", "/index.html") or self._same_origin()):
            self.send_error(HTTPStatus.FORBIDDEN, "requests from other sites are refused")
            return
        if path.startswith("/data/game/") and not secrets.compare_digest(
            self.headers.get(TOKEN_HEADER, ""), self.server.token
        ):
            # a game page may rebuild the game, which can run code: only the page this server wrote asks for it
            self.send_error(HTTPStatus.FORBIDDEN, "a game is built only for this server's own page")
            return
        try:
            body, kind = self._body(path) if ".." not in path and "\\" not in path and "\0" not in path else (None, "")
        except (FileError, OSError, ValueError):
            body, kind = None, ""
        if body is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
        )
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _host_allowed(self) -> bool:
        """Only requests addressed to this machine by an IP address, `localhost` or the name it was bound to: a
        web page elsewhere cannot read the data through a name it points at this server (DNS rebinding)."""
        try:
            host = urlsplit("//" + (self.headers.get("Host") or "")).hostname
        except ValueError:  # "[" and the like
            return False
        if host is None:
            return False
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return host in self.server.names
        return True

    def _same_origin(self) -> bool:
        """Whether the request comes from this server's own page (or from no page: a tool such as curl); a browser
        names the site a request comes from in `Sec-Fetch-Site`, and older ones in `Origin`."""
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            return False
        origin = self.headers.get("Origin")
        try:
            return origin is None or urlsplit(origin).netloc == self.headers.get("Host")
        except ValueError:
            return False

    def _body(self, path: str) -> tuple[bytes | None, str]:
        if path in ("/", "/index.html"):
            page = (STATIC / "index.html").read_text("utf-8")
            token = f'<meta name="contractlang-token" content="{self.server.token}">\n</head>'
            return page.replace("</head>", token, 1).encode(), ASSETS["index.html"]
        if path.startswith("/static/") and path[8:] in ASSETS:
            return (STATIC / path[8:]).read_bytes(), ASSETS[path[8:]]
        if path.startswith("/data/"):
            value = self.viewer.data(path[6:])
            return (None, "") if value is None else (site_json(value).encode(), "application/json")
        if path.startswith("/files/"):
            figure = self.viewer.file(path[7:])
            return (None, "") if figure is None else (self.viewer.index.read_figure(figure), "image/png")
        return None, ""


class _Arriving:
    """A connection whose request is still arriving: what came so far, and when it must be whole."""

    def __init__(self, address, deadline: float):
        self.address = address
        self.deadline = deadline
        self.data = bytearray()


class ViewServer(HTTPServer):
    """The viewer's HTTP server. One thread reads every request as it arrives, so a client that sends slowly
    holds only a socket (at most MAX_PENDING, each for REQUEST_SECONDS); a request that arrived whole is answered
    by one of at most MAX_WORKERS threads. Each game page needs the token the page was served with."""

    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler, names: set[str]):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self.token = secrets.token_urlsafe(24)
        self.names = {"localhost", *names}
        self.arrived: dict[socket.socket, bytes] = {}
        self._pending: dict[socket.socket, _Arriving] = {}  # connections whose request is still arriving
        self._workers = threading.BoundedSemaphore(MAX_WORKERS)
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()

    def network_reachable(self) -> bool:
        """Whether the address it listens on is reachable from other machines."""
        return not ipaddress.ip_address(self.server_address[0].split("%")[0]).is_loopback

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._stop.clear()
        self._stopped.clear()
        pending = self._pending
        self.socket.setblocking(False)
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self.socket, selectors.EVENT_READ)
                for connection in pending:  # left arriving by an earlier `shutdown`
                    selector.register(connection, selectors.EVENT_READ)
                while not self._stop.is_set():
                    for key, _ in selector.select(poll_interval):
                        if key.fileobj is self.socket:
                            self._accept(selector, pending)
                        else:
                            self._receive(key.fileobj, selector, pending)
                    now = time.monotonic()
                    for connection in [c for c, a in pending.items() if a.deadline < now]:
                        self._drop(connection, selector, pending)
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serving; connections still arriving stay open, unanswered, until `server_close` (as a stopped
        socketserver leaves them in its backlog)."""
        self._stop.set()
        self._stopped.wait()

    def server_close(self) -> None:
        for connection in self._pending:
            connection.close()
        self._pending.clear()
        super().server_close()

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-answer is nobody's error: nothing is printed."""

    def _accept(self, selector, pending: dict) -> None:
        while True:
            try:
                connection, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: the waiting clients get their turn as others finish
                return
            if len(pending) >= MAX_PENDING:
                self._drop(next(iter(pending)), selector, pending)
            connection.setblocking(False)
            pending[connection] = _Arriving(address, time.monotonic() + REQUEST_SECONDS)
            selector.register(connection, selectors.EVENT_READ)

    def _receive(self, connection: socket.socket, selector, pending: dict) -> None:
        arriving = pending[connection]
        try:
            data = connection.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        arriving.data += data
        if not data or len(arriving.data) > MAX_REQUEST_BYTES:
            self._drop(connection, selector, pending)
        elif b"\r\n\r\n" in arriving.data or b"\n\n" in arriving.data:
            selector.unregister(connection)
            del pending[connection]
            self._dispatch(connection, arriving)

    def _dispatch(self, connection: socket.socket, arriving: _Arriving) -> None:
        connection.setblocking(True)
        connection.settimeout(SEND_SECONDS)
        if not self._workers.acquire(blocking=False):
            with suppress(OSError):
                connection.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n\r\n")
            self.shutdown_request(connection)
            return
        self.arrived[connection] = bytes(arriving.data)
        threading.Thread(target=self._answer, args=(connection, arriving.address), daemon=True).start()

    def _answer(self, connection: socket.socket, address) -> None:
        try:
            self.finish_request(connection, address)
        except Exception:  # a client that went away, or a page that failed: that request's end, never the server's
            pass
        finally:
            self.arrived.pop(connection, None)
            self.shutdown_request(connection)
            self._workers.release()

    def _drop(self, connection: socket.socket, selector, pending: dict) -> None:
        selector.unregister(connection)
        del pending[connection]
        connection.close()


def site_json(value) -> str:
    """The JSON of a data file: strict (a browser refuses NaN or Infinity, and with them the whole file)."""
    return json.dumps(value, allow_nan=False)


def server(viewer: Viewer, host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """An HTTP server of the viewer, bound but not yet serving (`serve_forever`); port 0 picks a free one."""
    handler = type("Handler", (_Handler,), {"viewer": viewer})
    return ViewServer((host, port), handler, {host})


class Bundle(Frozen):
    """What `--bundle` wrote."""

    out: str
    games: int
    failed: int  # games whose page says why it cannot be shown
    figures: int


def bundle(
    viewer: Viewer, out: Path, progress: Callable[[str, int, int], None] | None = None, workers: int | None = None
) -> Bundle:
    """The viewer as a static site under `out`: the page, and every data file it can ask for (a snapshot). It is
    written into a new folder beside `out` and put in place whole at the end, so a bundle that fails or is
    interrupted leaves no half site (and `out` as it was); `progress(phase, done, total)` hears each game page.
    The game pages are built by `workers` forked processes (default: one per core; 1: this one, which must then
    not have run the compiled kernels yet: a fork after their threads started can hang)."""
    if out.is_symlink() or (out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _is_bundle(out)))):
        raise FileError(f"cannot write the site into {out}: it exists and is not a viewer bundle (name a new folder)")
    make_folder(out.parent)
    work = out.parent / f".{out.name}.partial-{secrets.token_hex(6)}"
    try:
        work.mkdir()  # the folder's mode as any new one's (mkdtemp's is private)
    except OSError as exc:
        raise FileError(f"cannot write in {out.parent}: {exc.strerror or exc}") from None
    try:
        (work / "static").mkdir()
        (work / "data" / "list").mkdir(parents=True)
        (work / "data" / "game").mkdir()
        (work / MARKER).write_text(MARKER_TEXT, "utf-8")
        for name in ASSETS:
            shutil.copyfile(STATIC / name, work / ("index.html" if name == "index.html" else f"static/{name}"))
        index = viewer.index_json()
        for k in range(max(1, -(-index["games"] // index["chunk"]))):
            _write_json(work / "data" / "list" / f"{k}.json", viewer.data(f"list/{k}.json"))
        reports = [s["index"] for s in index["sources"] if s["kind"] == "ctbench-report"]
        if reports:
            (work / "data" / "report").mkdir()
        for k in reports:
            _write_json(work / "data" / "report" / f"{k}.json", viewer.data(f"report/{k}.json"))
        rows, folder = viewer.index.rows, work / "data" / "game"
        workers = min(workers or os.cpu_count() or 1, len(rows))
        if progress is not None:
            progress("game pages", 0, len(rows))
        if workers <= 1:
            pages = (_write_page(folder, viewer.game(row.id)) for row in rows)
        else:
            from games.runner import run_jobs

            jobs = [(str(viewer.index.paths[r.source]), r) for r in rows]
            pages = run_jobs(
                partial(_bundle_page, viewer.options, folder),
                jobs,
                workers,
                chunksize=max(1, min(50, len(jobs) // (4 * workers))),
            )
        failed = 0
        for done, page_failed in enumerate(pages, start=1):
            failed += page_failed
            if progress is not None:
                progress("game pages", done, len(rows))
        if index["figures"]:
            (work / "files").mkdir()
        for k, _ in enumerate(index["figures"]):
            try:  # read as the server reads it: capped, and never through a link that now leads out
                figure = viewer.index.read_figure(viewer.file(f"{k}.png"))
            except FileError:
                continue
            (work / "files" / f"{k}.png").write_bytes(figure)
        _write_json(work / "data" / "coverage.json", viewer.coverage())
        _write_json(work / "data" / "index.json", index)
        _put_in_place(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Bundle(out=str(out), games=index["games"], failed=failed, figures=len(index["figures"]))


MARKER = ".contractlang-view-bundle"
MARKER_TEXT = "This folder was written by `contractlang view --bundle`; a later --bundle may replace it whole.\n"


def _is_bundle(folder: Path) -> bool:
    """Whether `folder` is a site `bundle` wrote (its marker file says so): only such a folder is replaced."""
    marker = folder / MARKER
    return not marker.is_symlink() and marker.is_file()


def _put_in_place(work: Path, out: Path) -> None:
    """`work` renamed to `out`; a previous bundle there is set aside first and removed once the new one is in."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{secrets.token_hex(6)}")
        out.rename(old)
    try:
        work.rename(out)
    except OSError as exc:
        if old is not None:
            old.rename(out)
        raise FileError(f"cannot write the site into {out}: {exc.strerror or exc}") from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _bundle_page(options: ViewOptions, folder: Path, job: tuple[str, GameRow]) -> bool:
    """One game's page written into a site under way; whether it holds an error in place of the game."""
    path, row = job
    try:
        raw = record_line(Path(path), row)
    except FileError as exc:
        return _write_page(folder, {"id": row.id, "row": row.model_dump(), "error": str(exc)})
    return _write_page(folder, page_of(raw, row, options, _process_baselines()))


def _write_page(folder: Path, page: dict) -> bool:
    _write_json(folder / f"{page['id']}.json", page)
    return "error" in page


@lru_cache(maxsize=1)
def _process_baselines():
    """The DP tables and values a bundling process keeps across the pages it builds."""
    from contractlang.api.analysis import Baselines
    from solver.dp import TableCache

    return Baselines(TableCache())


def _write_json(path: Path, value) -> None:
    """One data file of a site still being written in its own new folder: no other reader, so a plain write."""
    path.write_text(site_json(value), "utf-8")
