"""The lean harness client's HTTP (`trainers.episodes.wire`): httpx2's bytes, keep-alive reuse, stale connections
replaced, clear errors, content codings, and threads sharing one server's connections."""

from __future__ import annotations

import gzip
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx2
import pytest

from trainers.episodes.wire import Wire, WireError, WireTimeout, request_head


class RawServer:
    """A TCP server that hands each accepted connection to `serve(conn, requests_so_far)` on its own thread and
    keeps every byte of every request head and body it reads."""

    def __init__(self, serve: Callable[[socket.socket, "RawServer"], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.requests: list[bytes] = []
        self.accepted = 0
        self._serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn, self), daemon=True).start()

    def read_request(self, conn: socket.socket) -> bytes | None:
        """One request (head and body by its Content-Length), or None at EOF."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            rest += conn.recv(65536)
        self.requests.append(head + b"\r\n\r\n" + rest)
        return head + b"\r\n\r\n" + rest

    def close(self) -> None:
        self.sock.close()


def answer(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%s\r\n%s" % (
        len(body), extra, body)


def keep_alive(conn: socket.socket, server: RawServer) -> None:
    while server.read_request(conn) is not None:
        conn.sendall(answer(b'{"ok":true}'))
    conn.close()


@pytest.fixture
def echo() -> Iterator[RawServer]:
    server = RawServer(keep_alive)
    yield server
    server.close()


def _httpx2_bytes(server: RawServer, send: Callable[[httpx2.Client], object]) -> bytes:
    with httpx2.Client(base_url=server.base, timeout=10) as client:
        send(client)
    return server.requests.pop()


def test_requests_are_the_bytes_httpx2_writes(echo: RawServer) -> None:
    wire = Wire(echo.base, 10)
    try:
        auth = [("Authorization", "Bearer t0k3n")]
        body = '{"note":"d\u00e9j\u00e0 vu","n":1.5}'.encode()
        wire.request("POST", "/admin/episodes", auth, body, {"since": 3, "all": True}, json_body=True)
        ours = echo.requests.pop()
        theirs = _httpx2_bytes(echo, lambda c: c.request("POST", "/admin/episodes", json={"note": "d\u00e9j\u00e0 vu", "n": 1.5},
                                                         params={"since": 3, "all": True}, headers=dict(auth)))
        assert ours == theirs
        wire.request("POST", "/admin/episodes/e1/end", auth)  # no body: Content-Length 0, as httpx2 sends
        assert echo.requests.pop() == _httpx2_bytes(echo, lambda c: c.post("/admin/episodes/e1/end", headers=dict(auth)))
        wire.request("GET", "/admin/episodes/e1", auth)  # a GET has no length
        assert echo.requests.pop() == _httpx2_bytes(echo, lambda c: c.get("/admin/episodes/e1", headers=dict(auth)))
        mcp = [("accept", "application/json, text/event-stream"), ("content-type", "application/json"),
               ("mcp-method", "tools/call")]
        wire.request("POST", "/episodes/e1/mcp", mcp, b'{"jsonrpc":"2.0"}')
        assert echo.requests.pop() == _httpx2_bytes(echo, lambda c: c.post("/episodes/e1/mcp", content=b'{"jsonrpc":"2.0"}',
                                                                           headers=dict(mcp)))
    finally:
        wire.close()


def test_one_keep_alive_connection_carries_every_request(echo: RawServer) -> None:
    wire = Wire(echo.base, 10)
    for _ in range(20):
        r = wire.request("GET", "/x", [])
        assert r.status_code == 200 and r.json() == {"ok": True} and r.headers.get("Content-Type") == "application/json"
    assert wire.opened == 1 and echo.accepted == 1
    wire.close()
    wire.close()  # idempotent


def test_a_connection_the_server_closed_while_idle_is_replaced_not_written_to() -> None:
    closed = threading.Event()

    def one_then_close(conn: socket.socket, server: RawServer) -> None:  # keep-alive answered, then closed (idle)
        if server.read_request(conn) is not None:
            conn.sendall(answer(b"{}"))
        conn.close()
        closed.set()

    server = RawServer(one_then_close)
    wire = Wire(server.base, 10)
    try:
        assert wire.request("POST", "/a", [], b"{}").status_code == 200
        assert closed.wait(10)  # the server has closed the idle connection
        time.sleep(0.05)  # and its FIN has reached this end
        assert wire.request("POST", "/b", [], b"{}").status_code == 200
        assert wire.opened == 2 and [r.split(b" ")[1] for r in server.requests] == [b"/a", b"/b"]  # each sent once
    finally:
        wire.close()
        server.close()


def test_connection_close_answers_and_chunked_and_gzip_bodies_are_read() -> None:
    payload = b'{"big":"' + b"x" * 5000 + b'"}'

    def varied(conn: socket.socket, server: RawServer) -> None:
        n = 0
        while server.read_request(conn) is not None:
            n += 1
            if n == 1:  # chunked
                conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
                             + b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload))
            elif n == 2:  # gzip-coded
                packed = gzip.compress(payload)
                conn.sendall(answer(packed, b"content-encoding: gzip\r\n"))
            else:  # and the server closes after this one
                conn.sendall(answer(b"{}", b"connection: close\r\n"))
                break
        conn.close()

    server = RawServer(varied)
    wire = Wire(server.base, 10)
    try:
        assert wire.request("GET", "/1", []).content == payload
        assert wire.request("GET", "/2", []).content == payload
        assert wire.request("GET", "/3", []).json() == {}
        assert wire.request("GET", "/4", []).content == payload  # on a new connection: the last one was closed
        assert server.accepted == 2 and wire.opened == 2
    finally:
        wire.close()
        server.close()


def test_failures_are_clear_errors_and_leave_no_broken_connection_behind() -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(WireError, match="ConnectionRefused"):
        Wire(f"http://127.0.0.1:{port}", 2).request("GET", "/", [])

    def silent(conn: socket.socket, server: RawServer) -> None:
        server.read_request(conn)
        time.sleep(3)
        conn.close()

    server = RawServer(silent)
    wire = Wire(server.base, 0.3)
    try:
        t0 = time.perf_counter()
        with pytest.raises(WireTimeout, match="within 0.3s"):
            wire.request("POST", "/slow", [], b"{}")
        assert time.perf_counter() - t0 < 2
        assert wire._idle == []  # the timed-out connection is not reused
    finally:
        server.close()
    for bad in ("127.0.0.1:8000", "ftp://host/", "http://"):
        with pytest.raises(ValueError, match="http://HOST"):
            Wire(bad)
    with pytest.raises(WireError, match="not sent: Invalid header"):  # header injection is refused, nothing sent
        Wire("http://127.0.0.1:9", 1).request("GET", "/", [("x-evil", "a\r\nHost: other")])


def test_threads_share_the_connections_and_get_their_own_answers(echo: RawServer) -> None:
    def numbered(conn: socket.socket, server: RawServer) -> None:
        while (req := server.read_request(conn)) is not None:
            path = req.split(b" ")[1]
            conn.sendall(answer(b'{"path":"%s"}' % path))
        conn.close()

    server = RawServer(numbered)
    wire = Wire(server.base, 10)
    wrong: list[str] = []

    def work(t: int) -> None:
        for i in range(25):
            path = f"/t{t}/r{i}"
            if wire.request("GET", path, []).json() != {"path": path}:
                wrong.append(path)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == [] and len(server.requests) == 150
    assert wire.opened <= 6  # at most one per thread at a time
    wire.close()
    server.close()


def test_a_base_path_prefix_and_the_host_header() -> None:
    assert request_head("h", [], None, False)[0] == ("Host", "h")
    names = [n for n, _ in request_head("h", [("accept", "x")], 2, True)]
    assert "Accept" not in names and names[-3:] == ["accept", "Content-Length", "Content-Type"]
    server = RawServer(keep_alive)
    try:
        wire = Wire(server.base + "/prefix/", 5)
        wire.request("GET", "/admin/episodes/a b", [])
        assert server.requests[-1].startswith(b"GET /prefix/admin/episodes/a%20b HTTP/1.1\r\nHost: 127.0.0.1:"
                                              + str(server.port).encode() + b"\r\n")
        wire.close()
    finally:
        server.close()


def test_an_idle_connection_on_a_high_descriptor_is_kept(echo: RawServer) -> None:
    """select() cannot watch a descriptor of 1024 or more; a trainer with many files open has such sockets."""
    import resource

    from trainers.episodes import wire as wire_mod

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:  # raise the soft limit within the hard one (containers allow far more)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    a, b = socket.socketpair()
    high = os.dup2(a.fileno(), 1500)
    try:
        high_sock = socket.socket(fileno=os.dup(high))
        assert high_sock.fileno() >= 1024 or high == 1500
        assert not wire_mod._dropped(socket.socket(fileno=os.dup(high)))  # idle, nothing to read: kept
        b.close()
        assert wire_mod._dropped(socket.socket(fileno=os.dup(high)))  # the other end closed: EOF readable
    finally:
        os.close(high)
        a.close()


def test_queries_in_paths_list_params_prefixes_and_hosts_as_httpx2_writes_them(echo: RawServer) -> None:
    wire = Wire(echo.base.replace("127.0.0.1", "LocalHost") + "/a b", 5)
    try:
        wire.request("GET", "/events?since=2", [], params={"kind": ["call", "message"]})
        assert echo.requests[-1].startswith(b"GET /a%20b/events?since=2&kind=call&kind=message HTTP/1.1\r\n"
                                            b"Host: localhost:" + str(echo.port).encode() + b"\r\n")
        with httpx2.Client(timeout=5) as client:  # (httpx2 drops a path's query when given params; wire keeps both)
            client.get(echo.base.replace("127.0.0.1", "LocalHost") + "/a b/events",
                       params=[("since", "2"), ("kind", "call"), ("kind", "message")])
        assert echo.requests[-1] == echo.requests[-2]
    finally:
        wire.close()


def test_a_connection_in_use_when_closed_is_not_pooled_after() -> None:
    release = threading.Event()

    def slow(conn: socket.socket, server: RawServer) -> None:
        while server.read_request(conn) is not None:
            release.wait(5)
            conn.sendall(answer(b"{}"))
        conn.close()

    server = RawServer(slow)
    wire = Wire(server.base, 5)
    try:
        done = threading.Thread(target=lambda: wire.request("GET", "/", []))
        done.start()
        deadline = time.monotonic() + 10
        while not server.requests and time.monotonic() < deadline:  # the request is with the server
            time.sleep(0.01)
        wire.close()  # while the request is in flight
        release.set()
        done.join(5)
        assert wire._idle == []  # it closed instead of going back to a pool that was closed
        assert wire.request("GET", "/", []).status_code == 200  # and the wire still works after close
        assert len(wire._idle) == 1
    finally:
        wire.close()
        server.close()
