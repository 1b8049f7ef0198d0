"""Token estimates and prices (no request is made to count tokens: the dry run and the cost cap use these).

The estimate is the usual rule of thumb for BPE tokenizers on English text, one token per 4 characters, with
non-ASCII characters counted one token each (accents, CJK and symbols cost more tokens per character).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from claims_pipeline.config.settings import JudgeSettings

# Per-request overhead of the wire format (roles, document wrapper, schema) in tokens.
REQUEST_OVERHEAD_TOKENS = 24
# A typical answer: the 13-key JSON object with a one-sentence quote and two direction lines.
EXPECTED_OUTPUT_TOKENS = 260
# A typical direction-B answer: five keys, a verdict of one boolean, a quote only when refuted.
EXPECTED_B_OUTPUT_TOKENS = 90


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    known: bool


def price_for(settings: JudgeSettings, model: str) -> Price:
    """The model's price: an exact key, else the longest key that prefixes the name (a dated snapshot such as
    claude-haiku-4-5-20251001), else 0 with known=False (a local server; the report says the price is unknown)."""
    table = settings.prices
    entry = table.get(model)
    if entry is None:
        prefixes = [k for k in table if model.startswith(k)]
        if prefixes:
            entry = table[max(prefixes, key=len)]
    if entry is None:
        return Price(0.0, 0.0, False)
    return Price(entry.input_per_mtok, entry.output_per_mtok, True)


def cost_usd(price: Price, input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1_000_000
