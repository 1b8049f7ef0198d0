"""The fetched-pages step, per scope: every page the scope cites, fetched politely into the page cache, as the
state the cache recorded (without its text: the text stays in the cache's blobs, addressed by text_hash)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from claims_pipeline.steps.corpus import ScopeClaims
from claims_pipeline.steps.stored import StoredStep
from claims_pipeline.store.cache import PageCache
from claims_pipeline.store.records import PageState

_PAGE_FIELDS = frozenset(f.name for f in fields(PageState))

READABLE_STATUSES = ("OK", "NOT_MODIFIED")  # a page whose text was read (a 304 keeps the text read before)


def page_to_json(page: PageState) -> dict[str, Any]:
    """The page state without its text."""
    d = asdict(page)
    d.pop("text", None)
    return d


def page_from_json(d: dict[str, Any]) -> PageState:
    """A stored page state (keys of another version left out), without its text."""
    return PageState(**{**{k: v for k, v in d.items() if k in _PAGE_FIELDS}, "text": None})


def with_text(page: PageState, cache: PageCache) -> PageState:
    """The state with its text, read from the cache's blobs."""
    return replace(page, text=cache.text(page.text_hash)) if page.text_hash else page


@dataclass(frozen=True)
class ScopePages:
    """A scope's cited pages by URL exactly as the corpus cites it (the core's lookups use claim.source_url)."""

    pages: dict[str, PageState]

    def data_hash(self) -> str:
        """Hash of sorted (url, text hash): changes exactly when a cited page's text (or its set of URLs) changes."""
        h = hashlib.sha256()
        for url in sorted(self.pages):
            p = self.pages[url]
            h.update(f"{url}\0{p.text_hash or p.fetch_status}\n".encode())
        return h.hexdigest()[:16]

    def to_json(self) -> dict[str, dict[str, Any]]:
        return {u: page_to_json(p) for u, p in self.pages.items()}

    @classmethod
    def from_json(cls, data: Any) -> ScopePages:
        # a mapping (JSON), or its (url, page) pairs (the stored Arrow map, steps/stored.py)
        return cls({str(u): page_from_json(p) for u, p in dict(data).items()})


_str, _int = pa.string(), pa.int64()
# page_to_json's value: PageState's fields without its text, in their order
PAGE_FORM = pa.struct([
    ("url", _str), ("fetch_status", _str), ("http_status", _int), ("content_kind", _str), ("note", _str),
    ("fetched_at", _str), ("text_hash", _str), ("raw_hash", _str), ("content_changed", pa.bool_()),
    ("changed_at", _str), ("stable_since", _str), ("diff", _str), ("change_confirmed_at", _str),
    ("change_fetch_id", _int), ("change_reported_at", _str), ("unconfirmed_since", _str)])
FETCHED_PAGES = StoredStep("fetched_pages", ScopePages, pa.map_(_str, PAGE_FORM))


@dataclass
class PagesOfScopes:
    values: dict[str, ScopePages]
    missing: list[tuple[str, str]] = field(default_factory=list)  # (scope, url) that came back without a state


def refresh_scope_pages(home: Path, claims: dict[str, ScopeClaims], cache: PageCache,
                        fetch: Callable[[list[str]], dict[str, PageState]]) -> PagesOfScopes:
    """Every page the scopes cite, fetched once per run however many scopes cite it (`fetch(urls)`: the
    fetcher's states by normalized URL), recorded in the cache. home: the home folder, where the changes the
    last report saw are kept.

    A change counts when confirmed after what the last report saw, by this fetch or another
    (store/recent_changes.py)."""
    from claims_pipeline.common.urls import normalize_url
    from claims_pipeline.store.recent_changes import load_reported, mark_unreported

    urls_by_scope = {s: sorted(v.urls()) for s, v in claims.items()}
    all_urls = sorted({u for urls in urls_by_scope.values() for u in urls})
    fetched = fetch(all_urls) if all_urls else {}
    keys = {u: normalize_url(u) for u in all_urls}
    states = mark_unreported({u: fetched[k] for u, k in keys.items() if k in fetched}, keys,
                             load_reported(home, cache.identity()))
    values = {s: ScopePages({u: states[u] for u in urls if u in states}) for s, urls in urls_by_scope.items()}
    missing = [(s, u) for s, urls in urls_by_scope.items() for u in urls if u not in states]
    return PagesOfScopes(values, missing)


def statuses_before(claims: dict[str, ScopeClaims], cache: PageCache) -> dict[str, str]:
    """Each cited URL's fetch status as the cache has it before this run fetches (a URL never fetched has none):
    what tells a source that just became unreadable from one that has been so for months."""
    from claims_pipeline.common.urls import normalize_url

    keys = {u: normalize_url(u) for u in sorted({u for v in claims.values() for u in v.urls()})}
    statuses = cache.fetch_statuses(sorted(set(keys.values())))  # the statuses alone: no PageState per URL
    return {u: statuses[k] for u, k in keys.items() if k in statuses}


def is_readable(page: PageState) -> bool:
    return str(page.fetch_status) in READABLE_STATUSES


def newly_unreadable(before: dict[str, str], pages: ScopePages) -> list[str]:
    """The scope's cited URLs unreadable now that were readable on their previous fetch or never fetched before
    (news for the reader); a source unreadable on both fetches is not new."""
    return sorted(url for url, p in pages.pages.items() if not is_readable(p)
                  and before.get(url, "OK") in READABLE_STATUSES)
