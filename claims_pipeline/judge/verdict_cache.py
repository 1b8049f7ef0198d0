"""The verdict cache: one model answer per (claim text, page text hash, model, prompt version), in SQLite.

What is cached is the model's parsed draft (and the tokens it cost), not the checked verdict: a hit is run
through answer_checks.verify again, so a change of the code checks applies to cached answers without a request.
A first ask's answer is cached only when it parsed: a timeout, a transport error or a malformed answer is asked
again next run. A direction-B answer that came back unparseable twice is cached too, with its error (incomplete,
never passed): the model did answer, and asking again would pay for the same answer.
Every put commits at once (WAL journal), so a run killed half-way keeps every answer it had received.
The direction-B ask's answers live in the same table under keys of their own (prompt.DIRECTION_B_VERSION).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from claims_pipeline.judge.model import DirectionBDraft, DraftVerdict


def cache_key(claim_text: str, page_text_hash: str, model: str, prompt_version: str) -> str:
    blob = json.dumps([claim_text, page_text_hash, model, prompt_version], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedB:
    draft: DirectionBDraft
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class CachedAnswer:
    draft: DraftVerdict
    input_tokens: int
    output_tokens: int
    judged_at: str
    claim_id: str = ""  # the claim the answer was given for (another claim may share its text and page)


class VerdictCache:
    """SQLite file (default <home>/judge/verdicts.sqlite). Use from one thread (the runner's event loop)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: autocommit, each put is its own committed transaction
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, claim_id TEXT, model TEXT, "
            "prompt_version TEXT, draft_json TEXT NOT NULL, input_tokens INTEGER, output_tokens INTEGER, "
            "judged_at TEXT, stored_at REAL)"
        )

    @classmethod
    def in_home(cls, home: Path) -> VerdictCache:
        """The verdict cache of this home folder (created on first use)."""
        from claims_pipeline.config.home import HomeLayout

        return cls(HomeLayout(home).judge_cache)

    def get(self, key: str) -> CachedAnswer | None:
        row = self._db.execute(
            "SELECT draft_json, input_tokens, output_tokens, judged_at, claim_id FROM answers WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        try:
            draft = DraftVerdict.model_validate_json(row[0])
        except ValueError:  # a row written by an incompatible version: judge again
            return None
        return CachedAnswer(draft, int(row[1] or 0), int(row[2] or 0), row[3] or "", row[4] or "")

    def get_b(self, key: str) -> CachedB | None:
        row = self._db.execute("SELECT draft_json, input_tokens, output_tokens FROM answers WHERE key = ?",
                               (key,)).fetchone()
        if row is None:
            return None
        try:
            return CachedB(DirectionBDraft.model_validate_json(row[0]), int(row[1] or 0), int(row[2] or 0))
        except ValueError:
            return None

    def put_b(self, key: str, *, claim_id: str, model: str, prompt_version: str, draft: DirectionBDraft,
              input_tokens: int, output_tokens: int, judged_at: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, claim_id, model, prompt_version, draft.model_dump_json(), input_tokens, output_tokens,
             judged_at, time.time()),
        )

    def put(self, key: str, *, claim_id: str, model: str, prompt_version: str, draft: DraftVerdict,
            input_tokens: int, output_tokens: int, judged_at: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, claim_id, model, prompt_version, draft.model_dump_json(), input_tokens, output_tokens,
             judged_at, time.time()),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
