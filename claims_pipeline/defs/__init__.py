"""The Dagster layer: wiring only. Each module under this folder is loaded by `dg.load_from_defs_folder`
(claims_pipeline/definitions.py); each asset calls one function of the core and adds UI metadata.

    corpus/      corpus_documents → claims → citation_lint           (per scope)
    pages/       fetched_pages → page_changes, and their checks      (per scope)
    priors/      priors, and its check                               (per scope)
    audit/       audit_tables → audit_report, and their checks       (every scope)
    verdicts/    verdicts (per scope) → verdict_report
    worklist/    worklist (the cost-bounded sample for the verdict step)
    groups.py    the asset groups, named once for the assets and the jobs that select them
    scoped.py    what every per-scope asset returns; scope_state.py what the per-scope checks share
    notify.py    audit_notification, verdict_notification (a message of what is new) and the run-failure sensor
    jobs.py      audit_scope (one scope, then the audit), audit_corpus (every scope), refresh_audit; run tags
    automation.py  the monthly schedule, the corpus sensor, the audit's automation sensor
    resources.py   settings, page cache, fetcher (production or demo), chosen in one place
"""

import warnings

import dagster as dg

# backfill_policy (the single-run backfill of the per-scope assets) is marked beta in Dagster 1.13; used on purpose
warnings.filterwarnings("ignore", category=dg.BetaWarning)
