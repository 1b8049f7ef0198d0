"""Plain records produced by corpus extraction (no behaviour beyond (de)serialisation)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

ValueType = Literal["pct", "money", "number", "statute", "date", "year",  # number: a count with a magnitude word ("2 milliards")
                    "duration", "measure", "count", "rank", "ratio", "decade", "index"]  # the kinds of corpus/figure_kinds.py
LinkKind = Literal["markdown", "backticked", "bare", "reference", "footnote"]
VerifiedOrigin = Literal["inline", "citation", "file", "none"]  # citation: the date beside a footnote's definition


@dataclass(frozen=True, slots=True)
class Value:
    """A figure found in a claim line. pos/end index the (masked) line."""

    type: ValueType
    raw: str
    needles: tuple[str, ...]
    salient: bool
    pos: int
    end: int
    number: float | None = None  # numeric value when the figure is a number (for number-aware priors)

    # Pickled by the extraction pool: rebuilt from a plain tuple, several times faster than the default
    # slots state (a per-field object.__setattr__ on load).
    def __reduce__(self) -> tuple:
        return Value, (self.type, self.raw, self.needles, self.salient, self.pos, self.end, self.number)

    def to_dict(self) -> dict[str, Any]:
        # field by field: dataclasses.asdict deep-copies each field, and this runs once a figure (benchmarks/README.md)
        return {"type": self.type, "raw": self.raw, "needles": list(self.needles), "salient": self.salient,
                "pos": self.pos, "end": self.end, "number": self.number}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Value:
        return cls(**{**d, "needles": tuple(d.get("needles", ()))})


@dataclass(frozen=True, slots=True)
class InlineStamp:
    date: str  # YYYY-MM-DD
    kind: str  # verified | stale-marker | stale | updated

    def __reduce__(self) -> tuple:
        return InlineStamp, (self.date, self.kind)

    @property
    def is_stale(self) -> bool:
        return self.kind.startswith("stale")


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    id: str  # f"{scope}:{line_no}:{sha1(url)[:8]}"
    scope: str
    section: str
    line_no: int
    claim_text: str
    values: tuple[Value, ...]
    source_url: str
    source_host: str
    source_tier: str  # primary-gov | primary-allowlist | secondary
    inline_stamp: InlineStamp | None
    link_kind: LinkKind
    last_verified: str | None  # YYYY-MM-DD: the inline stamp's date, else the file footer's
    last_verified_origin: VerifiedOrigin
    file: str = ""  # corpus-relative path
    # why this URL is the source of these figures: a code of corpus.attribution.REASONS ("" in claims stored
    # before it was recorded)
    source_reason: str = ""

    def __reduce__(self) -> tuple:  # see Value.__reduce__
        return ClaimRecord, (self.id, self.scope, self.section, self.line_no, self.claim_text, self.values,
                             self.source_url, self.source_host, self.source_tier, self.inline_stamp, self.link_kind,
                             self.last_verified, self.last_verified_origin, self.file, self.source_reason)

    @property
    def salient_values(self) -> tuple[Value, ...]:
        return tuple(v for v in self.values if v.salient)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "section": self.section,
            "line_no": self.line_no,
            "claim_text": self.claim_text,
            "values": [v.to_dict() for v in self.values],
            "source_url": self.source_url,
            "source_host": self.source_host,
            "source_tier": self.source_tier,
            "inline_stamp": asdict(self.inline_stamp) if self.inline_stamp else None,
            "link_kind": self.link_kind,
            "last_verified": self.last_verified,
            "last_verified_origin": self.last_verified_origin,
            "file": self.file,
            "source_reason": self.source_reason,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimRecord:
        stamp = d.get("inline_stamp")
        return cls(
            id=d["id"],
            scope=d["scope"],
            section=d["section"],
            line_no=int(d["line_no"]),
            claim_text=d["claim_text"],
            values=tuple(Value.from_dict(v) for v in d.get("values", [])),
            source_url=d["source_url"],
            source_host=d["source_host"],
            source_tier=d["source_tier"],
            inline_stamp=InlineStamp(**stamp) if stamp else None,
            link_kind=d.get("link_kind", "markdown"),
            last_verified=d.get("last_verified"),
            last_verified_origin=d.get("last_verified_origin", "none"),
            file=d.get("file", ""),
            source_reason=d.get("source_reason", ""),
        )


@dataclass(frozen=True, slots=True)
class ExtractWarning:
    """Bad input that extraction skipped or repaired; never fatal."""

    file: str
    line_no: int  # 0 when the warning concerns the whole file
    message: str

    def __reduce__(self) -> tuple:
        return ExtractWarning, (self.file, self.line_no, self.message)

    def __str__(self) -> str:
        """As printed and logged: a file name is as hostile as a page (ESC sequences, bidi controls), so
        whatever a terminal would obey is written out (\\x1b), and so is a line break (a name holding one would
        print a forged line of its own)."""
        from claims_pipeline.common.text_safety import name_escaped

        where = f"{self.file}:{self.line_no}" if self.line_no else self.file
        return name_escaped(f"{where}: {self.message}")


@dataclass(slots=True)
class Extraction:
    claims: list[ClaimRecord] = field(default_factory=list)
    warnings: list[ExtractWarning] = field(default_factory=list)
    skipped_pointer_links: int = 0
    skipped_template_figures: int = 0  # template markers that would print a figure ('{{ RATE|percent }}%')
    # (file, line, URL, row) of table rows citing only a site's home page: no claim, a lint finding (extract_text
    # fills it; the linter reads it, extract_corpus does not carry it across its pool)
    home_page_rows: list[tuple[str, int, str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # corpus-relative paths read
    scopes: dict[str, list[str]] = field(default_factory=dict)  # scope -> files
    workers: int = 1  # processes that extracted the files (1: serial)
