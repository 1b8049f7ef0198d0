"""robots.txt per origin through protego: fetched once (under a lock), 4xx or errors mean "allow all"."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

# origin ("http://host:port") -> (http status or None on error, body text)
RobotsFetch = Callable[[str], Awaitable[tuple[int | None, str]]]


@dataclass
class RobotsRules:
    parser: Protego | None  # None: no usable robots.txt, everything allowed
    note: str

    def allows(self, url: str, agent: str) -> bool:
        return True if self.parser is None else bool(self.parser.can_fetch(url, agent))

    def crawl_delay(self, agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(agent)
        return float(delay) if delay is not None else None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class RobotsCache:
    def __init__(self, fetch: RobotsFetch) -> None:
        self._fetch = fetch
        self._rules: dict[str, RobotsRules] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def rules(self, url: str) -> RobotsRules:
        origin = origin_of(url)
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:  # one fetch per origin even when many workers ask at once
            if origin not in self._rules:
                self._rules[origin] = await self._load(origin)
        return self._rules[origin]

    async def _load(self, origin: str) -> RobotsRules:
        try:
            status, text = await self._fetch(origin)
        except Exception as exc:  # any failure to read robots.txt means no restrictions (reference §6.2)
            return RobotsRules(None, f"robots.txt unreadable ({type(exc).__name__}): allow all")
        if status is None or status >= 400:
            return RobotsRules(None, f"robots.txt http {status}: allow all")
        try:
            return RobotsRules(Protego.parse(text), "robots.txt parsed")
        except Exception as exc:
            return RobotsRules(None, f"robots.txt unparsable ({type(exc).__name__}): allow all")
