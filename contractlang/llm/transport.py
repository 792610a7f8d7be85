"""The one HTTP transport under both providers' SDKs (`anthropic`, `openai`): whatever the server does, a call
ends by its deadline, holds at most MAX_RESPONSE_BYTES of decoded body, and never leaves the origin it was sent to.

- Deadline: every socket connect, read and write of a call is limited to the time left before the call's
  deadline, so a server that trickles headers, body or chunks is cut at the deadline, not at a per-read timeout.
- Size: the body is read here, and decoded here (gzip, deflate) within the cap, so neither an endless body nor a
  gzip bomb is ever held whole.
- Redirects: a 3xx answer is refused, never followed, to another origin or the same: the key and the prompt go
  only to the address the user named, and the refusal names the address the server pointed to.
- Proxies: the environment's HTTP_PROXY / HTTPS_PROXY / NO_PROXY are applied here, over the same sockets, so a
  proxied call keeps the deadline, the cap and the redirect rule.
- Pooling: one transport serves every SDK client, game and thread of a connection; the pool sets no cap of its
  own on connections (the rate limiters above it bound the requests in flight) and keeps `keepalive` of them open.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urljoin, urlsplit
from urllib.request import getproxies, proxy_bypass

import httpcore2 as core
import httpx2 as httpx

MAX_RESPONSE_BYTES = 8 * 2**20  # decoded; a reply of the largest output limit (128k tokens) is about 0.5 MiB of JSON
_DECODED_CODINGS = "gzip, deflate"  # the codings asked for, and the only ones read


class ResponseRefused(Exception):
    """A response the transport will not hand to the SDK (too large, redirected, undecodable): one line."""


class _Deadlines:
    """The deadline of the call each thread is making (the SDKs' sync clients do all I/O in the caller's thread)."""

    def __init__(self):
        self._local = threading.local()

    @contextmanager
    def until(self, deadline: float) -> Iterator[None]:
        """This thread's calls inside the block end by `deadline` (time.monotonic())."""
        self._local.at = deadline
        try:
            yield
        finally:
            self._local.at = None

    def left(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """`timeout` shortened to the time left before this thread's deadline; `expired` once it has passed."""
        at = getattr(self._local, "at", None)
        if at is None:
            return timeout
        left = at - time.monotonic()
        if left <= 0:
            raise expired("the call's deadline passed")
        return left if timeout is None else min(timeout, left)


def _network_backend(deadlines: _Deadlines):
    """httpcore's socket backend with every operation's timeout bounded by the call's deadline."""

    class Stream(core.NetworkStream):
        def __init__(self, stream):
            self._stream = stream

        def read(self, max_bytes, timeout=None):
            return self._stream.read(max_bytes, deadlines.left(timeout, core.ReadTimeout))

        def write(self, buffer, timeout=None):
            return self._stream.write(buffer, deadlines.left(timeout, core.WriteTimeout))

        def close(self):
            self._stream.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(
                self._stream.start_tls(ssl_context, server_hostname, deadlines.left(timeout, core.ConnectTimeout))
            )

        def get_extra_info(self, info):
            return self._stream.get_extra_info(info)

    class Backend(core.NetworkBackend):
        def __init__(self):
            self._sync = core.SyncBackend()

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(
                self._sync.connect_tcp(
                    host, port, deadlines.left(timeout, core.ConnectTimeout), local_address, socket_options
                )
            )

        def connect_unix_socket(self, path, timeout=None, socket_options=None):
            return Stream(
                self._sync.connect_unix_socket(path, deadlines.left(timeout, core.ConnectTimeout), socket_options)
            )

        def sleep(self, seconds):
            self._sync.sleep(seconds)

    return Backend()


def _decoder(coding: str):
    """A function that decodes the next piece of a body in `coding` (gzip members one after another), giving at
    most `limit` + 1 bytes: one more than the cap allows is enough to refuse it."""
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise ResponseRefused(f"the API answered in a content-encoding this client does not read ({coding[:40]})")
    wbits = zlib.MAX_WBITS | 16 if coding != "deflate" else zlib.MAX_WBITS
    state = zlib.decompressobj(wbits)

    def decode(data: bytes, limit: int) -> bytes:
        nonlocal state
        out = b""
        try:
            while data and len(out) <= limit:
                out += state.decompress(data, limit + 1 - len(out))
                data = b""
                if state.eof:  # another gzip member may follow
                    data, state = state.unused_data, zlib.decompressobj(wbits)
        except zlib.error:
            raise ResponseRefused(f"the API's {coding} body is corrupt") from None
        return out

    return decode


def _too_large() -> ResponseRefused:
    return ResponseRefused(f"the API's response is larger than {MAX_RESPONSE_BYTES // 2**20} MiB; not read")


def _origin(base: str, location: str = "") -> str:
    """The origin (scheme://host:port) of `location` read against `base`; an address that is no URL, as given."""
    try:
        parts = urlsplit(urljoin(base, location))
        where = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:{parts.path}"
    except ValueError:
        where = location
    return where[:200]


class Transport(httpx.BaseTransport):
    """The httpx transport of both SDKs' clients: the deadline set by `until`, the size cap and the redirect rule
    of this module."""

    def __init__(self, keepalive: int = 20):
        self._limits = {"max_connections": None, "max_keepalive_connections": keepalive, "keepalive_expiry": 5.0}
        self.deadlines = _Deadlines()
        self._backend = _network_backend(self.deadlines)
        self._ssl = httpx.create_ssl_context()
        self._pools: dict[str | None, core.ConnectionPool | core.HTTPProxy] = {}
        self._lock = threading.Lock()

    def _pool(self, url: httpx.URL):
        """The connections for `url`: direct, or through the proxy the environment names for it (HTTP_PROXY,
        HTTPS_PROXY, NO_PROXY), made with the same deadline-bound sockets."""
        proxy = None if proxy_bypass(url.host) else getproxies().get(url.scheme)
        with self._lock:
            if proxy not in self._pools:
                self._pools[proxy] = (
                    self._through(proxy)
                    if proxy
                    else core.ConnectionPool(ssl_context=self._ssl, network_backend=self._backend, **self._limits)
                )
            return self._pools[proxy]

    def _through(self, address: str):
        """Connections through the proxy at `address` (an http:// or https:// URL, credentials in it allowed)."""
        try:
            proxy = httpx.Proxy(address)
        except (ValueError, httpx.InvalidURL):
            proxy = None
        if proxy is None or proxy.url.scheme not in ("http", "https"):
            raise ResponseRefused(
                f"the proxy the environment names ({address[:80]}) is not an http:// or https:// "
                "proxy; unset HTTP_PROXY / HTTPS_PROXY, or add the API's host to NO_PROXY"
            )
        return core.HTTPProxy(
            proxy_url=core.URL(
                scheme=proxy.url.raw_scheme, host=proxy.url.raw_host, port=proxy.url.port, target=proxy.url.raw_path
            ),
            proxy_auth=proxy.raw_auth,
            proxy_headers=proxy.headers.raw,
            ssl_context=self._ssl,
            proxy_ssl_context=proxy.ssl_context,
            network_backend=self._backend,
            **self._limits,
        )

    def until(self, deadline: float):
        """Every request this thread makes inside the block ends by `deadline` (time.monotonic())."""
        return self.deadlines.until(deadline)

    def handle_request(self, request):
        request.headers["accept-encoding"] = _DECODED_CODINGS
        try:
            response = self._pool(request.url).handle_request(
                core.Request(
                    method=request.method,
                    url=core.URL(
                        scheme=request.url.raw_scheme,
                        host=request.url.raw_host,
                        port=request.url.port,
                        target=request.url.raw_path,
                    ),
                    headers=request.headers.raw,
                    content=request.stream,
                    extensions=request.extensions,
                )
            )
            try:
                headers = httpx.Headers(response.headers)
                if 300 <= response.status < 400:
                    where = headers.get("location")
                    raise ResponseRefused(
                        f"the API at {_origin(str(request.url))} answered {response.status}, a redirect"
                        + (f" to {_origin(str(request.url), where)}" if where else "")
                        + "; redirects are not followed (the key and the prompt go only to the address named): "
                        "name the address it points to with --base-url"
                    )
                body = self._body(response.stream, headers.get("content-encoding", ""))
            finally:
                response.close()
        except core.TimeoutException as exc:
            raise httpx.ReadTimeout(str(exc), request=request) from exc
        except core.NetworkError as exc:
            raise httpx.NetworkError(str(exc), request=request) from exc
        except core.ProtocolError as exc:
            raise httpx.ProtocolError(str(exc), request=request) from exc
        kept = [
            (k, v)
            for k, v in headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx.Response(
            response.status,
            headers=kept,
            content=body,
            request=request,
            extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
        )

    @staticmethod
    def _body(stream, content_encoding: str) -> bytes:
        """The body, decoded, read piece by piece and refused as soon as it passes the cap."""
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip().lower() not in ("", "identity")]
        decoders = [_decoder(c) for c in reversed(codings)]
        body, raw = bytearray(), 0
        for piece in stream:
            raw += len(piece)
            if raw > MAX_RESPONSE_BYTES:
                raise _too_large()
            for decode in decoders:
                piece = decode(piece, MAX_RESPONSE_BYTES - len(body))
            body += piece
            if len(body) > MAX_RESPONSE_BYTES:
                raise _too_large()
        return bytes(body)

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()


def http_client(transport: Transport) -> httpx.Client:
    """An httpx client for an SDK, every request through `transport` (which applies the environment's proxy itself:
    the client's own proxy transports would go around it)."""
    return httpx.Client(transport=transport, trust_env=False, follow_redirects=False, timeout=httpx.Timeout(None))
