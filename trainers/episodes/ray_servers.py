"""coworkenv servers on a Ray cluster: each actor holds one `coworkenv serve --http` process on its node.

This is how a batch spreads over machines with existing parts: Ray places the actors (one CPU
each, spread over the nodes), each actor starts a server on its node, and the batch reaches them
all with `RemoteServers` (the CLI's `run --connect URL1,URL2,...`), which routes each episode to
one server by its id. Nothing balances load in between: episodes are many and alike, so hashing
their ids spreads them evenly.

    servers = start_ray_servers(4, "--python", "mcp_server.demo:environment", address="auto", token=token)
    try:
        records = run_batch(specs, BatchConfig(policy, connect=servers.remote(token)))
    finally:
        servers.stop()

A server's episode records stay on its node (in `record_dir` there); the batch's own records
come back through the servers' APIs as with any `--connect` run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .ray_executor import _ray, join_ray
from .remote import RemoteServers, RemoteTarget

LISTENING = re.compile(r"listening on (http://\S+?) ")


def _forward(stream: Any) -> None:
    for line in stream:
        sys.stderr.write(line)


class ServerProcess:
    """A `coworkenv serve --http` process on this machine (what each Ray actor holds)."""

    def __init__(self, serve_args: list[str], token: str, record_dir: str, host: str | None = None,
                 timeout: float = 120.0) -> None:
        if host is None:
            import ray

            host = ray.util.get_node_ip_address()
        Path(record_dir).mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coworkenv", "serve", *serve_args, "--http", "--host", host, "--port", "0",
             "--record-dir", record_dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COWORKENV_ADMIN_TOKEN": token})
        assert self.proc.stderr is not None
        said: list[str] = []
        url = None
        for line in self.proc.stderr:  # the server says where it listens once it is bound
            said.append(line.rstrip())
            m = LISTENING.search(line)
            if m:
                url = m.group(1)
                break
        if url is None:
            self.proc.wait(timeout)
            raise RuntimeError(f"coworkenv serve did not start on {host} (exit {self.proc.returncode}): "
                               + " | ".join(said[-5:]))
        self._url = url
        # keep reading what the server says (into this actor's log), or a full pipe would stall it
        threading.Thread(target=_forward, args=(self.proc.stderr,), daemon=True).start()

    def url(self) -> str:
        """The server's base URL."""
        return self._url

    def alive(self) -> bool:
        """Whether the server process still runs."""
        return self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> int:
        """Interrupt the server (it ends and records its live episodes) and return its exit status (0, or 130
        when the interrupt reached it as KeyboardInterrupt; -9 if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return int(self.proc.returncode)


@dataclass
class RayServers:
    """Servers started by `start_ray_servers`: their URLs, and the actors holding them."""

    urls: list[str]
    actors: list[Any]
    started_ray: bool = False

    def remote(self, token: str, timeout: float = 60.0) -> RemoteServers:
        """The `connect=` value that spreads a batch over these servers."""
        return RemoteServers(tuple(RemoteTarget(u, token, timeout) for u in self.urls))

    def stop(self) -> list[int]:
        """Stop every server (each records its live episodes), release the actors; exit statuses in order."""
        ray = _ray()
        try:
            codes = ray.get([a.stop.remote() for a in self.actors])
            for a in self.actors:
                ray.kill(a)
            return [int(c) for c in codes]
        finally:
            if self.started_ray:
                ray.shutdown()


def start_ray_servers(n: int, *serve_args: str, token: str, address: str = "auto",
                      record_dir: str = "runs/episodes", host: str | None = None) -> RayServers:
    """Start `n` servers of `coworkenv serve SERVE_ARGS --http` in Ray actors and return their URLs.

    `address` is joined as `ray.init(address=...)` does ("local" starts a private Ray for the
    servers, stopped with them); `host` is the address each server binds (default: its node's IP,
    so other machines reach it); `record_dir` is the record folder on each node.
    """
    if n < 1:
        raise ValueError(f"start at least one server, got {n}")
    if len(token) < 16:
        raise ValueError("the admin token must be at least 16 characters")
    ray = _ray()
    started = False
    if not ray.is_initialized():
        join_ray(address, n)
        started = True
    try:
        actor = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(ServerProcess)
        actors = [actor.remote(list(serve_args), token, record_dir, host) for _ in range(n)]
        urls = ray.get([a.url.remote() for a in actors])
    except BaseException:
        if started:
            ray.shutdown()
        raise
    return RayServers(list(urls), actors, started)
