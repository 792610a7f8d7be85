"""The viewer's files: the page (package data), and its data as JSON built from what lies under the viewed path,
served on loopback while a run is still writing, or written once as a static site (`--bundle`)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache, partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from contractlang.api.view.index import GameRow, ViewIndex
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
LOOPBACK = ("127.0.0.1", "::1")


class Viewer:
    """The data the page reads, by the names it reads them under (`index.json`, `list/K.json`, `game/ID.json`);
    game pages are built when first asked for and the last PAGES_KEPT kept."""

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

    def index_json(self) -> dict:
        if self.live:
            self.index.refresh(wait=False)
        return {**self.index.summary().model_dump(), "live": self.live}

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
                from contractlang.api.view.games import Baselines  # the games and solvers: only now

                if self._baselines is None:
                    from solver.dp import TableCache

                    self._baselines = Baselines(self._tables or TableCache())
                self._pages[key] = page_of(self.index.line(row), row, self.options, self._baselines)
                while len(self._pages) > PAGES_KEPT:
                    self._pages.popitem(last=False)
            self._pages.move_to_end(key)
            return self._pages[key]

    def data(self, name: str) -> dict | list | None:
        """The JSON under `data/NAME`, or None when there is none."""
        if name == "index.json":
            return self.index_json()
        match = re.fullmatch(r"list/([0-9]{1,6})\.json", name)
        if match:
            return self.index.chunk(int(match[1]))
        match = re.fullmatch(r"game/(.+)\.json", name)
        if match and GAME_ID.fullmatch(match[1]):
            return self.game(match[1])
        return None

    def file(self, name: str) -> Path | None:
        """A figure under the viewed path, by its number in the index (`files/K.png`); never a path from a URL."""
        match = re.fullmatch(r"([0-9]{1,6})\.png", name)
        return self.index.figure(int(match[1])) if match else None


def page_of(raw: bytes, row: GameRow, options: ViewOptions, baselines) -> dict:
    """A game's page data as the page reads it: {"error": why} in place of the game when it cannot be shown."""
    from contractlang.api.view.games import game_page

    try:
        page = game_page(raw, row, options, baselines)
    except (PageError, ValueError, KeyError, OSError) as exc:
        page = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    return {"id": row.id, "row": row.model_dump(), **page}


class _Handler(BaseHTTPRequestHandler):
    viewer: Viewer
    server_version = "contractlang-view"

    def log_message(self, format: str, *args) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, head: bool) -> None:
        if not self._host_allowed():
            self.send_error(HTTPStatus.FORBIDDEN, "unexpected Host header")
            return
        path = unquote(urlsplit(self.path).path)
        body, kind = self._body(path) if ".." not in path and "\\" not in path and "\0" not in path else (None, "")
        if body is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _host_allowed(self) -> bool:
        """On loopback, only requests addressed to loopback: a web page elsewhere cannot read the data through a
        name it points at 127.0.0.1 (DNS rebinding)."""
        if self.server.server_address[0] not in LOOPBACK:
            return True
        host = urlsplit("//" + (self.headers.get("Host") or "")).hostname
        return host in LOOPBACK or host == "localhost"

    def _body(self, path: str) -> tuple[bytes | None, str]:
        if path in ("/", "/index.html"):
            return (STATIC / "index.html").read_bytes(), ASSETS["index.html"]
        if path.startswith("/static/") and path[8:] in ASSETS:
            return (STATIC / path[8:]).read_bytes(), ASSETS[path[8:]]
        if path.startswith("/data/"):
            value = self.viewer.data(path[6:])
            return (None, "") if value is None else (json.dumps(value).encode(), "application/json")
        if path.startswith("/files/"):
            figure = self.viewer.file(path[7:])
            return (None, "") if figure is None else (figure.read_bytes(), "image/png")
        return None, ""


def server(viewer: Viewer, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server of the viewer, bound but not yet serving (`serve_forever`); port 0 picks a free one."""
    handler = type("Handler", (_Handler,), {"viewer": viewer})
    httpd = ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    return httpd


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
    if out.is_symlink() or (
        out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "data" / "index.json").is_file()))
    ):
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
        for name in ASSETS:
            shutil.copyfile(STATIC / name, work / ("index.html" if name == "index.html" else f"static/{name}"))
        index = viewer.index_json()
        for k in range(max(1, -(-index["games"] // index["chunk"]))):
            _write_json(work / "data" / "list" / f"{k}.json", viewer.data(f"list/{k}.json"))
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
            shutil.copyfile(viewer.file(f"{k}.png"), work / "files" / f"{k}.png")
        _write_json(work / "data" / "index.json", index)
        _put_in_place(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Bundle(out=str(out), games=index["games"], failed=failed, figures=len(index["figures"]))


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
    with open(path, "rb") as handle:
        handle.seek(row.offset)
        raw = handle.read() if row.line == 0 else handle.readline()
    return _write_page(folder, page_of(raw, row, options, _process_baselines()))


def _write_page(folder: Path, page: dict) -> bool:
    _write_json(folder / f"{page['id']}.json", page)
    return "error" in page


@lru_cache(maxsize=1)
def _process_baselines():
    """The DP tables and values a bundling process keeps across the pages it builds."""
    from contractlang.api.view.games import Baselines
    from solver.dp import TableCache

    return Baselines(TableCache())


def _write_json(path: Path, value) -> None:
    """One data file of a site still being written in its own new folder: no other reader, so a plain write."""
    path.write_text(json.dumps(value), "utf-8")
