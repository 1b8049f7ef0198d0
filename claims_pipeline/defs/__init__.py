"""The Dagster layer: wiring only. Each module under this folder is loaded by `dg.load_from_defs_folder`
(claims_pipeline/definitions.py); each asset calls one function of the core and adds UI metadata.

    corpus/      corpus_documents → claims → citation_lint           (per scope)
    pages/       fetched_pages → page_changes                        (per scope)
    audit/       priors (per scope) → audit_tables → audit_report, and their checks
    scope_state.py each scope's state at a glance: a check on fetched_pages, page_changes and priors
    worklist/    worklist (the cost-bounded sample for the verdict step)
    notify.py    audit_notification, verdict_notification (a message of what is new) and the run-failure sensor
    jobs.py      audit_scope (one scope, then the audit), audit_corpus (every scope), refresh_audit; run tags
    automation.py  the monthly schedule, the corpus sensor, the audit's automation sensor
    resources.py   settings, page cache, fetcher (production or demo), chosen in one place
"""

import warnings

import dagster as dg

# backfill_policy (the single-run backfill of the per-scope assets) is marked beta in Dagster 1.13; used on purpose
warnings.filterwarnings("ignore", category=dg.BetaWarning)
