"""Read a streamed response body under a byte cap counted on DECODED bytes (a gzip bomb stops early).

We ask only for gzip/deflate and decompress ourselves with ``max_length``, so a 10 KB bomb that inflates to
gigabytes costs at most ``cap`` bytes of memory before we stop reading and close the connection.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import httpx

ACCEPT_ENCODING = "gzip, deflate"


class BodyTooLarge(Exception):
    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head  # the first ``cap`` decoded bytes: for readers that may use a prefix (robots.txt)


class UnsupportedEncoding(Exception):
    pass


class UndecodableBody(Exception):
    """The body is not in its declared content-encoding (labelled gzip but not compressed, corrupt)."""


class HeadRejected(Exception):
    """The first bytes failed the caller's check: the rest of the body was not read."""


class _Inflater:
    def __init__(self, encoding: str) -> None:
        # 16+MAX: gzip only; 32+MAX: auto-detect zlib or gzip header ("deflate" is zlib-wrapped per RFC 9110)
        self._encoding = encoding
        self._wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else 32 + zlib.MAX_WBITS
        self._raw_fallback = encoding == "deflate"
        self._d = zlib.decompressobj(self._wbits)
        self._started = False
        self._finished = False  # a member ended and what followed is not another one: ignore the rest

    def feed(self, data: bytes, room: int) -> bytes:
        """Inflate ``data``; returns at most room+1 bytes so the caller can tell 'over the cap'."""
        out = bytearray()
        while data and len(out) <= room and not self._finished:
            try:
                piece = self._d.decompress(data, room + 1 - len(out))
            except zlib.error as exc:
                if self._raw_fallback and not self._started:  # some servers send raw deflate
                    self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._raw_fallback = False
                    continue
                raise UndecodableBody(f"undecodable {self._encoding} body: {exc}") from exc
            self._started = True
            out += piece
            if self._d.unconsumed_tail:
                data = self._d.unconsumed_tail
            elif self._d.eof and self._d.unused_data:
                data = self._d.unused_data
                if data[:2] != b"\x1f\x8b" and not (len(data) < 2 and data == b"\x1f"):
                    # trailing padding (NULs, a newline) after a complete member: browsers ignore it too
                    self._finished = True
                    data = b""
                else:  # concatenated gzip members
                    self._d = zlib.decompressobj(self._wbits)
            else:
                data = b""
        return bytes(out)


async def read_capped(response: httpx.Response, cap: int, *, head_check: Callable[[bytes], bool] | None = None,
                      head_bytes: int = 0) -> bytes:
    """The decoded body, or BodyTooLarge as soon as either the wire bytes or the decoded bytes pass ``cap``.

    With ``head_check``, the first ``head_bytes`` decoded bytes (or the whole body, if shorter) are passed to it
    before reading on; HeadRejected when it says no."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        inflater = None
    elif encoding in ("gzip", "x-gzip", "deflate"):
        inflater = _Inflater(encoding)
    else:
        raise UnsupportedEncoding(f"unsupported content-encoding {encoding!r}")
    body = bytearray()
    wire = 0
    async for chunk in response.aiter_raw():
        wire += len(chunk)
        piece = chunk if inflater is None else inflater.feed(chunk, cap - len(body))
        body += piece
        if wire > cap:
            raise BodyTooLarge(f"body over {cap} bytes on the wire; stopped reading", bytes(body[:cap]))
        if len(body) > cap:
            what = "decoded" if inflater is not None else "on the wire"
            raise BodyTooLarge(f"body over {cap} bytes ({what}, content-encoding {encoding or 'none'}); stopped reading",
                               bytes(body[:cap]))
        if head_check is not None and len(body) >= head_bytes:
            if not head_check(bytes(body)):
                raise HeadRejected
            head_check = None
    if head_check is not None and not head_check(bytes(body)):
        raise HeadRejected
    return bytes(body)
