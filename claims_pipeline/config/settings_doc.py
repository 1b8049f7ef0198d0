"""docs/configuration.md, generated from the settings models (claims_pipeline/config/settings.py), so the key table cannot
drift from the code: every key, its type and bounds, its default and its meaning.

    .venv/bin/python -m claims_pipeline.config.settings_doc > docs/configuration.md

A key's meaning is its field's `description` in its section's model (config/sections/), followed by the text MEANINGS holds for it here
(for the fields that have no description yet, or need more words than one). claims_pipeline_tests/
test_docs.py fails when docs/configuration.md differs from this module's output, when a key has no meaning,
or when MEANINGS names a key the models do not have.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from claims_pipeline.config.deployments import PRODUCTION, deployment_problems
from claims_pipeline.config.settings import (
    DEFAULT_CONFIG_RELPATH,
    ENV_CONFIG,
    ENV_DEPLOYMENT,
    ENV_HOME,
    HostPolicy,
    JudgePrice,
    Settings,
    settings_from_dict,
)

# Sub-models shown as one key (their value is written as one mapping), not walked into.
ONE_KEY_MODELS = (HostPolicy, JudgePrice)

MEANINGS: dict[str, str] = {
    "home": "Holds the page cache, the per-scope asset values, the audit tables, the reports, the verdicts and "
    "(when `$DAGSTER_HOME` is unset) the Dagster instance: see docs/operations.md, \"The home folder\".",
    "extraction.corpus_dir": "A relative path is read against the config file's folder.",
    "extraction.skip_files": "File names (anywhere under the scope folders) never read for claims.",
    "extraction.exclude_dirs": "Folder names never entered, at any depth (their files are not even listed).",
    "extraction.skip_headings": "A section whose heading holds one of these as whole words yields no claims, nor do "
    "its subsections.",
    "extraction.min_salient_values": "Salient figures (percentage, money, statute, specific date, duration, measure, "
    "index, rank, ratio, decade, count of a named thing: docs/decisions/0004) a line needs to be a claim.",
    "extraction.claim_window_chars": "Longest `claim_text`; a longer line is cut to a window holding the citation "
    "and the claim's own figures.",
    "extraction.primary_only": "`true` keeps only citations of official sources (`--include-secondary` overrides); "
    "official: a gov/gouv/gob host, or one listed in the package's `claims_pipeline/corpus/official_sources.yaml` "
    "or in the two keys below.",
    "extraction.scope_dirs": "`[countries, shared]` with the two `scope_rules` `{glob: 'countries/*/**', scope: "
    "'{1}'}` and `{glob: '**', scope: '{path}'}` is the demo's countries preset.",
    "extraction.primary_allowlist_file": "Extra official hosts, added to the package's list, one a line (`#` starts "
    "a comment; `.suffix` = the "
    "domain and its subdomains). A bad entry is named with its file and line at load time.",
    "extraction.primary_allowlist": "Extra official hosts, added to the package's list; `.suffix` = the domain and "
    "its subdomains.",
    "extraction.pointer_lookback_chars": "How far before a link a \"verify at\" clause makes it a pointer (not a "
    "claim).",
    "fetch.user_agent": "Sent with every request; `{version}` becomes the package version. Printable ASCII.",
    "fetch.concurrency": "Requests in flight across all hosts.",
    "fetch.req_per_sec": "Global request rate (a token bucket).",
    "fetch.default_host": "Per-host concurrency and minimum interval between request starts.",
    "fetch.gov_host": "The same for government hosts (a slower floor): gov/gouv/gob, alone or under a two-letter "
    "country code.",
    "fetch.per_host_overrides": "Host (matches its subdomains too) → `{concurrency, interval_ms}`.",
    "fetch.excluded_hosts": "Never fetched (EXCLUDED); matched as domain suffixes.",
    "fetch.connect_timeout_s": "Connect timeout per attempt.",
    "fetch.retry_backoff_s": "Wait before attempt 2, 3, … (the last value repeats).",
    "fetch.retry_jitter_pct": "± random share of each wait.",
    "fetch.retry_after_cap_s": "Longest Retry-After honoured (for every URL of that host).",
    "fetch.max_redirects": "Redirect hops per URL; each hop passes robots, the throttle and the SSRF guard.",
    "fetch.max_html_bytes": "Body cap for non-PDF responses, on decoded bytes (TOO_LARGE beyond).",
    "fetch.max_pdf_bytes": "Body cap for PDFs.",
    "fetch.run_budget_s": "What is left when it is spent is UNAVAILABLE.",
    "fetch.breaker_failures": "A connection failure (refused, reset, connect timeout, TLS) counts at every "
    "attempt, a slow page (read timeout) once per URL; the breaker opens once fetch.breaker_urls distinct URLs are "
    "among them. `claims-pipeline fetch --reset HOST` closes one (docs/operations.md).",
    "fetch.verify_tls": "Verify TLS certificates (turning it off is logged).",
    "fetch.robots_enabled": "Honour robots.txt.",
    "fetch.robots_timeout_s": "Timeout of one robots.txt fetch.",
    "fetch.min_text_chars": "A page with less text whose figures are all missing is unreadable, not \"figure "
    "absent\".",
    "fetch.js_spa_hosts": "Hosts whose pages are built by JavaScript: UNREADABLE, never \"figure absent\".",
    "fetch.binary_content_prefixes": "Content types settled BINARY. image/, audio/ and video/ are never "
    "downloaded; for the others only the first 1,024 bytes are, to find a PDF (`%PDF-`, or a Content-Disposition "
    "filename ending `.pdf`), which is then read as one.",
    "fetch.blocked_status_codes": "Statuses that may signal a bot wall.",
    "fetch.challenge_titles": "Page titles of bot-wall challenges: the whole title is the phrase, optionally "
    "followed by `|` or a dash and a short site name (\"One more step: confirm your 2025 levy\" is a page).",
    "fetch.allow_networks": "The demo allows the fixture web's address.",
    "fetch.address_map": "Names are not resolved; ports are 1–65535. The demo routes its hosts to the fixture web.",
    "pdf.enabled": "Read PDFs (else BINARY).",
    "pdf.max_pages": "Otherwise the number of pages read per PDF.",
    "pdf.timeout_s": "Wall-clock cap of one PDF extraction (pdftotext, or the pypdf fallback).",
    "pdf.max_text_chars": "Cap on a PDF's extracted text.",
    "priors.excerpt_window_chars": "Width of an excerpt, centred on the best hit.",
    "priors.max_excerpts_per_claim": "Excerpts kept per claim.",
    "linter.root_url_allowlist": "Hosts or root URLs (`https://host/`) the portal-root linter accepts.",
    "sampling.default_sample": "Worklist size (`--sample` overrides).",
    "sampling.seed": "Sampling tie-break seed (`--seed` overrides).",
    "sampling.priority_weights.stale_marker": "Score of a stale-marker stamp.",
    "sampling.priority_weights.never_verified": "Score of a claim with no verified date.",
    "sampling.priority_weights.stamp_age_per_30d": "Score per 30 days since last verified.",
    "sampling.priority_weights.salient_statute_or_money": "Score of a statute or money figure.",
    "sampling.priority_weights.changed_after_verified": "Score of a claim whose cited page the page cache already "
    "knows changed after the claim was last verified (looked up, not fetched: sampling stays fetch-free).",
    "sampling.priority_weights.official_source": "Score of a claim citing an official source (tier `primary-gov` "
    "or `primary-allowlist`).",
    "sampling.priority_weights.secondary_source": "Score of a claim citing a secondary source (the project's own "
    "pages, tier `own`, score 0).",
    "extraction.scope_depth": "`claims-pipeline init` writes the depth it chose.",
    "extraction.root_scope": "A scope name (no leading or trailing `/`, no `..`).",
    "cache.db_url": "The file is `<home>/cache/index.sqlite`. PostgreSQL: `postgresql+psycopg://user@host/db` "
    "(psycopg installed). The URL is never echoed in an error: it may hold a password.",
    "cache.ttl_days": "The audit always re-fetches (conditionally: an unchanged page costs a 304).",
    "cache.diff_context_lines": "Context lines around a change in stored diffs.",
    "cache.max_diff_lines": "Longest stored diff.",
    "judge.prices": "A model not listed is priced by the longest key that prefixes its name (dated snapshots), "
    "else at 0 and flagged \"price unknown\".",
}


def _production_table() -> str:
    rows = [f"| {r.key} | {r.required} |" for r in PRODUCTION]
    return "\n".join(["| setting | production requires |", "|---|---|", *rows])


def _production_example() -> str:
    """What a command says on a production file that keeps the page cache in SQLite, as the code says it."""
    settings = settings_from_dict({"home": "/srv/claims", "notify": {"urls": ["json://hooks.example/kb"]}},
                                  source="/srv/claims/claims_pipeline.yaml", deployment="production")
    return "\n".join(f"    claims-pipeline: {line}" for line in deployment_problems(settings, {}))


INTRO = f"""\
# Configuration reference

<!-- Generated by `python -m claims_pipeline.config.settings_doc` from claims_pipeline/config/settings.py; do not edit by hand.
     claims_pipeline_tests/fitness/test_docs.py fails when this file and the generator's output differ. -->

## Which file is loaded

Every command and the Dagster UI take their settings from the first of:

1. `--config FILE` (commands only; `demo` ignores it, see below);
2. the file named by `${ENV_CONFIG}`;
3. `./{DEFAULT_CONFIG_RELPATH.as_posix()}`, relative to the folder the command runs in, when that file exists;
4. else the built-in defaults below, which name no corpus (in the demo deployment: the demo's settings, below).

The UI (`make dev`, `dg dev`, `dagster dev`) follows the same chain from step 2 (the code is
`find_config_file` and `settings_source` in claims_pipeline/config/settings.py, `ClaimsConfig` in
claims_pipeline/defs/resources.py). Every command says first, on stderr, which one it loaded:

    claims-pipeline: config /path/to/claims_pipeline.yaml
    claims-pipeline: built-in defaults (${ENV_CONFIG} unset, no ./{DEFAULT_CONFIG_RELPATH.as_posix()})

and every Dagster run logs the same, with the home folder. A checkout ships no `{DEFAULT_CONFIG_RELPATH.as_posix()}`
(git ignores that file): from the root of a fresh clone the commands use the built-in defaults until
`claims-pipeline init DIR` writes it there for your knowledge base.

## Deployments

`${ENV_DEPLOYMENT}` chooses the resources every command and the UI run with, in one place
(`resources_by_deployment` in claims_pipeline/defs/resources.py); nothing is guessed from the corpus:

| `${ENV_DEPLOYMENT}` | corpus | fetcher | judge | starts on |
|---|---|---|---|---|
| `local` (unset) | `extraction.corpus_dir`, required | the web, through the SSRF guard | `judge.provider` | any valid settings: the page cache in a SQLite file and the outputs under the home, notifications optional |
| `production` | `extraction.corpus_dir`, required | the web, through the SSRF guard | `judge.provider` | settings that meet the requirements below, nothing by default |
| `demo` | the bundled demo corpus unless set | the demo's fixture web, started for the run on 127.0.0.1 | the scripted demo judge, unless `judge.provider` names one | any valid settings (without a file, the demo's) |

`local` and `production` never start the fixture web or the scripted judge, and never import the demo package,
whatever the corpus. A command with no `extraction.corpus_dir` outside the demo stops with one line, exit 2:

    claims-pipeline: no corpus: set extraction.corpus_dir in /path/to/claims_pipeline.yaml (`claims-pipeline init` writes one; `claims-pipeline demo` runs on the bundled demo corpus)

`production` is a deployment other people rely on: the UI, the daemon and their runs, sharing one page cache,
with the monthly audit's news sent to a reader. It runs on nothing it did not name
(claims_pipeline/config/deployments.py):

{_production_table()}

A run the UI or the daemon launches, and a sensor tick, checks them when its resources start (the run fails
before its first step); `fetch`, `audit`, `worklist` and `verify` check them first and stop with exit 2, and
so does `make dev` before it opens the UI. Every missing setting is one line, saying how to set it:

{_production_example()}

The settings are read once per command, where it starts, and its runs take them as read; a run the UI or the
daemon launches reads them once when it starts; a sensor or schedule tick, once per tick. Loading the code
location reads none.

`claims-pipeline demo` is the demo deployment whatever `${ENV_DEPLOYMENT}` says. It always uses the bundled
`claims_pipeline_demo/demo.yaml` (its first line says so): it writes a copy to `<demo home>/demo.yaml`, with
absolute paths and the demo hosts routed to its fixture web, and runs on that copy. In the demo deployment, a
command or the UI without a config file runs on that copy (`${ENV_HOME}/demo/demo.yaml`, else the bundled
`demo.yaml` with its outputs there), and starts a fixture web of its own.

## The file

One YAML mapping of the sections below; every key is optional and takes the default shown. The file is read as
UTF-8, at most 4 MB, and validated when loaded: an unknown key, a key given twice, a wrong type or a value out of
its range stops the command with `claims-pipeline: config error:` and one line `<file>: <dotted.key>: <reason>`
(exit code 2; an unknown key comes with the closest keys of its section: `unknown key, did you mean
scope_depth?`), before any corpus walk or network use. Values a later step would reject are refused at load time
too: network ranges, address-map targets, database URLs, host names (no URL, port, space or empty entry), an
allowlist file that cannot be read, a `home` or `cache.blob_dir` that is an existing file. Every number is finite.
Relative paths (`home`, `extraction.corpus_dir`, `extraction.primary_allowlist_file`, `cache.blob_dir`) are
resolved against the config file's own folder.

The repository's `config/` holds a starting point, read only when named: `claims_pipeline.example.yaml` (the
defaults, with the project's politeness for real official sites and its allowlist) and `primary_allowlist.txt`
(hosts that count as primary sources without a government suffix).

Environment variables: `${ENV_CONFIG}` (the config file, above), `${ENV_DEPLOYMENT}` (`demo`, `local` or
`production`, above), `${ENV_HOME}` (the home folder when `home` is
unset; default `~/.claims_pipeline`), `DAGSTER_HOME` (the Dagster instance; default `<home>/dagster`), and the
judge's API key, whose variable `judge.api_key_env` names (keys are read from the environment only, never from
a file), and the notification channels' secrets, which `notify.urls` reads as `${{VARIABLE}}` and `notify.urls_env`
names (docs/notifications.md).
"""


def _dotted_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and not issubclass(ann, ONE_KEY_MODELS):
            yield from _dotted_fields(ann, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", field


def config_keys() -> list[str]:
    """Every dotted key a config file may set, in the models' order."""
    return [key for key, _ in _dotted_fields(Settings)]


def _bounds(metadata: list[Any]) -> str:
    """The range a number must lie in: `1–64`, `> 0, ≤ 600` (empty when unbounded)."""
    ge = gt = le = lt = None
    for m in metadata:
        ge = getattr(m, "ge", ge)
        gt = getattr(m, "gt", gt)
        le = getattr(m, "le", le)
        lt = getattr(m, "lt", lt)
    if ge is not None and le is not None:
        return f"{_num(ge)}–{_num(le)}"
    low = f"≥ {_num(ge)}" if ge is not None else f"> {_num(gt)}" if gt is not None else ""
    high = f"≤ {_num(le)}" if le is not None else f"< {_num(lt)}" if lt is not None else ""
    return ", ".join(b for b in (low, high) if b)


def _num(v: Any) -> str:
    """A bound as people read it (thousands grouped)."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f"{v:,}" if isinstance(v, int) else str(v)


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return " or ".join(_type_name(a) for a in rest) + ", or unset"
    if origin is typing.Literal:
        names = [f"`{a}`" for a in args]
        return ", ".join(names[:-1]) + " or " + names[-1]
    if origin is typing.Annotated:
        inner = _type_name(args[0])
        info = [m for m in args[1:] if isinstance(m, FieldInfo)]
        bounds = _bounds(info[0].metadata) if info else ""
        return f"{inner} {bounds}" if bounds else inner
    if origin is list:
        inner = _type_name(args[0])
        return "list of " + (inner if inner.startswith("text") else inner.replace("integer", "integers", 1)
                             .replace("number", "numbers", 1))
    if origin is dict:
        return f"map of {_type_name(args[0])} → {_type_name(args[1])}"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        parts = []
        for name, f in ann.model_fields.items():
            b = _bounds(f.metadata)
            parts.append(f"{name} {b}" if b else name)
        return "{" + ", ".join(parts) + "}"
    return {str: "text", int: "integer", float: "number", bool: "true/false", Path: "path"}.get(ann, str(ann))


def _flow(value: Any) -> str:
    """A default written as it would be in the YAML file (flow style)."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def _default(field: FieldInfo) -> Any:
    return field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]


def meaning(key: str, field: FieldInfo) -> str:
    parts = [p.strip() for p in (field.description or "", MEANINGS.get(key, "")) if p and p.strip()]
    return " ".join(p if p.endswith((".", ")", ":")) else p + "." for p in parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    out = [INTRO]
    section = None
    for key, field in _dotted_fields(Settings):
        top = key.split(".", 1)[0] if "." in key else "(top level)"
        if top != section:
            section = top
            out.append(f"\n## `{top}`\n" if top != "(top level)" else "\n## Top level\n")
            doc = Settings.model_fields[top].annotation.__doc__ if top != "(top level)" else None
            if doc and not doc.startswith(("Usage docs", "!!! abstract")):
                out.append(" ".join(doc.split()) + "\n")
            out.append("| key | default | type and range | meaning |\n|---|---|---|---|")
        default = _default(field)
        if key == "judge.prices":
            default_cell = "see the table below"
        else:
            flow = _flow(default)
            default_cell = f"`{flow}`" if flow != "unset" else "unset"
        kind = _type_name(field.annotation)
        bounds = _bounds(field.metadata)
        if bounds:
            kind = f"{kind} {bounds}"
        out.append(f"| `{key}` | {_cell(default_cell)} | {_cell(kind)} | {_cell(meaning(key, field))} |")
    out.append("\n`judge.prices` by default (USD per million tokens):\n")
    out.append("| model | input | output |\n|---|---|---|")
    for model, price in _default(Settings.model_fields["judge"].annotation.model_fields["prices"]).items():
        out.append(f"| `{model}` | {price.input_per_mtok} | {price.output_per_mtok} |")
    return "\n".join(out) + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
