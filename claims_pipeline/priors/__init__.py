"""Priors: a deterministic, number-aware first look at whether a cited page still carries a claim's figures.

Public API: ``build_prior(claim, page, rules) -> Prior`` (rules = ``PriorRules.of(settings.priors, settings.fetch)``)
and the prior names. See build.py for the rule.
"""

from claims_pipeline.priors.build import (
    PDF_NO_TEXT,
    PRIOR_KINDS,
    SOURCE_BINARY,
    SOURCE_UNAVAILABLE,
    TOKENS_ABSENT,
    TOKENS_PRESENT,
    WEAK_MATCH,
    Hit,
    Prior,
    PriorRules,
    build_prior,
    match_text,
)

__all__ = [
    "PDF_NO_TEXT",
    "PRIOR_KINDS",
    "SOURCE_BINARY",
    "SOURCE_UNAVAILABLE",
    "TOKENS_ABSENT",
    "TOKENS_PRESENT",
    "WEAK_MATCH",
    "Hit",
    "Prior",
    "PriorRules",
    "build_prior",
    "match_text",
]
