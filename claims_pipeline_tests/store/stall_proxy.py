"""A TCP proxy on 127.0.0.1 that passes the first `budget` bytes of each request stream to the upstream server
and then holds the rest: a writer killed while it waits has sent the server a real, partial upload."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class StallProxy:
    def __init__(self, upstream: tuple[str, int], budget: int) -> None:
        self.upstream, self.budget = upstream, budget
        self.stalled = threading.Event()  # set once a request stream has passed its budget
        self.closed_by_client = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []

    def serve(self) -> None:
        self._listener.settimeout(0.2)
        while not self.closed_by_client.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._spawn(self._relay, client)

    def _spawn(self, target, *args) -> None:  # type: ignore[no-untyped-def]
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream, timeout=10)
        self._spawn(self._pump_back, upstream, client)
        passed = 0
        client.settimeout(30)  # bounded: the test kills the writer within seconds
        try:
            while chunk := client.recv(65536):
                room = self.budget - passed
                if room > 0:
                    upstream.sendall(chunk[:room])
                    passed += min(room, len(chunk))
                if passed >= self.budget:
                    self.stalled.set()  # hold the rest; keep reading so the writer blocks on nothing but us
        except OSError:
            pass
        finally:
            self.closed_by_client.set()
            with contextlib.suppress(OSError):
                upstream.close()  # as the dead writer's connection would be: the server sees a cut body
            client.close()

    @staticmethod
    def _pump_back(upstream: socket.socket, client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := upstream.recv(65536):
                client.sendall(chunk)


@contextmanager
def stall_proxy(upstream: tuple[str, int], budget: int) -> Iterator[StallProxy]:
    proxy = StallProxy(upstream, budget)
    server = threading.Thread(target=proxy.serve, daemon=True)
    server.start()
    try:
        yield proxy
    finally:
        proxy.closed_by_client.set()
        proxy._listener.close()
        server.join(5)
