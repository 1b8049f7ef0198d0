"""Generate a synthetic corpus of realistic shape, and the fixture-web sites that serve every page it cites.

Kept with the tests' support code, which the benchmarks may import (the tests import no benchmark);
benchmarks/make_synthetic_corpus.py is its command. Usage (defaults are the issue's 100k shape; takes ~10 s and ~200 MB of disk at that size):

    .venv/bin/python benchmarks/make_synthetic_corpus.py --claims 100000 --files 10000 --urls 20000 \
        --hosts 500 --out /tmp/synth100k [--scopes 1000] [--seed 7] [--page-kb 6] [--address 127.0.0.1:8765]

It writes, under --out:
- corpus/countries/<code>/<topic>.md and corpus/shared/<topic>/<name>.md: markdown playbooks in the project's
  corpus format (headings, `## Section: --x` blocks, bullets stating figures in bold — percentages, money, law
  numbers, dates, durations — each citing one official page, inline "(YYYY-MM-DD verified, source …)" stamps on
  some and a `**Last verified**: …` footer). One scope per country folder and per shared file (the project's
  scope rule, corpus/scopes.py); --scopes of them (default files ÷ 10), `shared/` takes one in twenty.
- sites/<host>/<path>: the pages, for `FixtureWeb(sites_dir=<out>/sites)`. Each page states the figures of the
  claims citing it, in the page's own wording and, on some, a local number format ("4,5 %", "EUR 1 250").
  The mix (shares of URLs, set by --changed/--dead/--walled/--absent):
    ok       a plain page (the default);
    changed  `page.html.v2` beside `page.html`: from epoch 2 (`web.set_epoch(2)`) the first figure differs;
    dead     half cite a missing file (404), half `/_/status/410?p=…` (410 Gone);
    walled   `/_/cf-challenge?p=…` (a bot wall: 403 + cf-mitigated);
    absent   a plain page missing one claim's figure (that claim is a TOKENS_ABSENT flag).
- synthetic.yaml: a config whose corpus_dir is corpus/, home is home/, and fetch.address_map sends the corpus's
  fictional TLDs (`*.xd` … ) to --address. Start the fixture web first and rewrite that address with its port,
  or load the settings and call `route_to(settings, "127.0.0.1:<port>")` (this module) to get routed ones.
- manifest.json: counts, the TLD wildcards, every host, each scope's hosts (scopes in different regions share
  no host: `regions` lists them, for runs over disjoint hosts), and every URL with its kind.

Hosts: --hosts names like `www.lands.gov.xd`, `impots.gouv.xk`, `www.registry.gob.xr` (government hosts, so
primary sources), grouped into regions of ~10 hosts; each scope cites the hosts of its region. URLs are split
evenly over scopes and, within a scope, over its region's hosts; each URL is cited by claims ÷ urls claims.
Everything is deterministic for a given --seed. The corpus text is generated from templates modelled on the
real playbooks' shapes, never copied from them.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AGENCIES = ("tax", "lands", "stats", "registry", "customs", "housing", "notary", "justice", "finance", "interior",
            "labour", "energy", "planning", "cadastre", "immigration", "courts", "parliament", "centralbank",
            "environment", "transport")
GOV_FORMS = ("www.{a}.gov.{cc}", "{a}.gouv.{cc}", "www.{a}.gob.{cc}", "{a}.gov.{cc}")
# Fictional two-letter TLDs (no real ccTLD starts with x); xa-xc are the demo's.
TLDS = tuple(f"x{c}" for c in "defghijklmnopqrstuvwz")
TOPICS = ("costs", "taxes", "foreign-buyers", "mortgage", "rental", "inheritance", "residency", "permits",
          "utilities", "exit")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
PAD = ("Applicants should read the explanatory notes before filing. Forms are available at every regional office "
       "and online; incomplete applications are returned without processing. ")


@dataclass
class Fact:
    """One claim's statement: the corpus sentence (figures in bold) and how the page states the same figures."""
    claim: str
    page: str
    changed_page: str  # the page's sentence after the change (epoch 2); == page when the fact does not change


@dataclass
class Url:
    url: str
    host: str
    path: str  # the site-relative file for ok/changed/absent; "" for dead (404) and built-in behaviours
    kind: str
    facts: list[Fact] = field(default_factory=list)


def _money(rng: random.Random) -> tuple[str, str, str]:
    """(claim form, page form, page form in a local format)."""
    n = rng.choice((35, 90, 150, 300, 900, 1250, 2400, 7500, 12000, 45000, 185000, 300000, 1200000))
    n = n + rng.randrange(0, 9) * (n // 100 or 1)
    sym = rng.choice(("€", "$", "£"))
    word = {"€": "EUR", "$": "USD", "£": "GBP"}[sym]
    return f"{sym}{n:,}", f"{sym}{n:,}", f"{word} {n:,}".replace(",", "\u00a0")


def _pct(rng: random.Random) -> tuple[float, str, str, str]:
    v = rng.choice((0.5, 0.8, 1.1, 2.5, 3.18, 4.5, 5.09, 6.32, 7.25, 8.1, 10.0, 12.0, 14.0, 20.0, 33.0))
    v = round(v + rng.randrange(0, 5) * 0.1, 2)
    s = f"{v:g}"
    return v, f"{s}%", f"{s} %", f"{s.replace('.', ',')} %"


def _date(rng: random.Random) -> tuple[str, str]:
    y, m, d = rng.choice((2025, 2026, 2027)), rng.randrange(1, 13), rng.randrange(1, 29)
    return f"{d} {MONTHS[m - 1]} {y}", f"{y}-{m:02d}-{d:02d}"


def make_fact(rng: random.Random, subject: str, changes: bool) -> Fact:
    """A claim about `subject` with 1-3 figures of mixed kinds, and the page sentence that supports it."""
    kind = rng.randrange(6)
    local = rng.random() < 0.3  # the page writes its numbers its own way
    if kind == 0:
        v, c, p, pl = _pct(rng)
        money_c, money_p, money_l = _money(rng)
        new = f"{round(v + 0.5, 2):g} %"
        claim = f"**{subject.capitalize()}**: **{c}** of the declared price, plus a fixed fee of **{money_c}** per deed"
        page = f"The {subject} is {pl if local else p} of the declared price; a fixed fee of {money_l if local else money_p} applies per deed."
        changed = page.replace(pl if local else p, new, 1)
    elif kind == 1:
        law = f"{rng.randrange(2015, 2027)}-{rng.randrange(100, 1999)}"
        v, c, p, pl = _pct(rng)
        new = f"{round(v + 0.5, 2):g} %"
        claim = f"The {subject} is set at **{c}** by **Law {law}**"
        page = f"Under Law {law}, the {subject} stands at {pl if local else p}."
        changed = page.replace(pl if local else p, new, 1)
    elif kind == 2:
        days = rng.choice((10, 15, 30, 45, 60, 90, 120))
        money_c, money_p, money_l = _money(rng)
        claim = f"Processing of the {subject} takes **{days} days** at most and the stamp duty is **{money_c}**"
        page = f"Applications for the {subject} are decided within {days} days. Stamp duty: {money_l if local else money_p}."
        changed = page.replace(f"{days} days", f"{days + 15} days", 1)
    elif kind == 3:
        long_d, iso_d = _date(rng)
        act = rng.randrange(3, 120)
        claim = f"The {subject} rules of **Act No. {act}** apply from **{long_d}**"
        page = f"Act No. {act} ({subject}) enters into force on {iso_d if local else long_d}."
        changed = page.replace(str(act), str(act + 1), 1)
    elif kind == 4:
        money_c, money_p, money_l = _money(rng)
        v, c, p, pl = _pct(rng)
        claim = f"Buyers above **{money_c}** pay the {subject} at **{c}**"
        page = f"For purchases above {money_l if local else money_p}, the {subject} rate is {pl if local else p}."
        changed = page.replace(pl if local else p, f"{round(v + 1, 2):g} %", 1)
    else:
        n = rng.randrange(2, 40)
        v, c, p, pl = _pct(rng)
        claim = f"The {subject} applies to **{n} regions**; the median uplift is **{c}**"
        page = f"Across {n} regions the {subject} raised prices by a median {pl if local else p}."
        changed = page.replace(f"{n} regions", f"{n + 2} regions", 1)
    return Fact(claim, page, changed if changes else page)


SUBJECTS = ("transfer duty", "annual property levy", "notarial fee", "registration fee", "capital gains tax",
            "rental income tax", "foreign acquisition licence", "building permit", "inheritance tax",
            "gift tax", "stamp duty", "land registry search fee", "mortgage registration fee", "VAT on new builds",
            "residence permit", "cadastral revaluation", "wealth tax", "municipal surcharge", "energy certificate",
            "tenant deposit cap")


def scope_names(n: int) -> list[str]:
    two = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnopqrstuvwxyz"]
    return [two[i % len(two)] + (str(i // len(two) + 1) if i >= len(two) else "") for i in range(n)]


def host_names(n: int) -> list[str]:
    out = []
    for i in range(n):
        a = AGENCIES[i % len(AGENCIES)]
        rnd, cc = divmod(i // len(AGENCIES), len(TLDS))
        form = GOV_FORMS[(i // len(AGENCIES) + i) % len(GOV_FORMS)]
        out.append(form.format(a=a + (str(rnd + 1) if rnd else ""), cc=TLDS[cc]))
    return out


def page_html(host: str, title: str, sentences: list[str], page_kb: float, rng: random.Random) -> str:
    paras = "".join(f"<p>{s}</p>\n" for s in sentences)
    pad_n = max(1, int(page_kb * 1000 / len(PAD)) - len(sentences))
    # the figures sit among explanatory paragraphs, as on a real page
    pads = [f"<p>{PAD * rng.randrange(1, 3)}</p>\n" for _ in range(pad_n // 2 or 1)]
    half = len(pads) // 2
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title} — {host}</title></head>"
            f"<body><nav><a href='/'>Home</a> › <a href='/property/'>Property</a></nav><main><h1>{title}</h1>\n"
            + "".join(pads[:half]) + paras + "".join(pads[half:])
            + "</main><footer>Official site of the fictional administration. Page updated regularly.</footer>"
            "</body></html>")


def generate(out: Path, *, claims: int = 100_000, files: int = 10_000, urls: int = 20_000, hosts: int = 500,
             scopes: int | None = None, seed: int = 7, changed: float = 0.05, dead: float = 0.03,
             walled: float = 0.02, absent: float = 0.02, page_kb: float = 6.0,
             address: str = "127.0.0.1:8765") -> dict[str, Any]:
    """Write the corpus, the sites, synthetic.yaml and manifest.json under `out` (replaced); return the manifest."""
    from claims_pipeline.config.settings import COUNTRIES_PRESET_DIRS, COUNTRIES_PRESET_RULES  # the corpus's layout

    if min(claims, files, urls, hosts) < 1:
        raise ValueError("claims, files, urls and hosts must be at least 1")
    scopes = scopes or max(1, files // 10)
    scopes = min(scopes, files)
    if urls > claims:
        raise ValueError("each URL is cited at least once: --urls must not exceed --claims")
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    corpus, sites = out / "corpus", out / "sites"
    all_hosts = host_names(hosts)
    n_regions = max(1, hosts // 10)
    # a region is a run of consecutive hosts (mostly one TLD: one country's administrations)
    region_hosts = [all_hosts[r * hosts // n_regions:(r + 1) * hosts // n_regions] for r in range(n_regions)]
    names = scope_names(scopes)
    n_shared = scopes // 20 if scopes >= 20 else 0
    scope_list: list[tuple[str, str]] = []  # (scope, kind)
    for i, name in enumerate(names):
        shared = n_shared and i % 20 == 19
        scope_list.append((f"shared/{TOPICS[i % len(TOPICS)]}/{name}" if shared else name,
                           "shared" if shared else "country"))

    # files per scope: a shared scope is one file; country scopes share the rest
    n_country = sum(1 for _, k in scope_list if k == "country")
    country_files = files - (scopes - n_country)
    files_of: list[int] = []
    ci = 0
    for _, k in scope_list:
        if k == "shared":
            files_of.append(1)
        else:
            files_of.append(country_files // n_country + (1 if ci < country_files % n_country else 0))
            ci += 1

    # URLs: split evenly over scopes, each on one of its region's hosts
    url_rows: list[Url] = []
    urls_of: list[list[int]] = []
    shares = (("changed", changed), ("dead", dead), ("walled", walled), ("absent", absent))
    for si, (scope, _) in enumerate(scope_list):
        region = region_hosts[si % n_regions]
        n = urls // scopes + (1 if si < urls % scopes else 0)
        mine = []
        for j in range(n):
            host = region[(si // n_regions + j) % len(region)]
            uid = len(url_rows)
            r = rng.random()
            kind, acc = "ok", 0.0
            for share_kind, share in shares:
                acc += share
                if r < acc:
                    kind = share_kind
                    break
            slug = f"{TOPICS[j % len(TOPICS)]}/{scope.replace('/', '-')}-{uid}.html"
            if kind == "dead" and uid % 2:
                url, path = f"http://{host}/_/status/410?p={uid}", ""
            elif kind == "dead":
                url, path = f"http://{host}/{slug}", ""  # no file: the site answers 404
            elif kind == "walled":
                url, path = f"http://{host}/_/cf-challenge?p={uid}", ""
            else:
                url, path = f"http://{host}/{slug}", slug
            url_rows.append(Url(url, host, path, kind))
            mine.append(uid)
        urls_of.append(mine)

    # claims: split over scopes (in proportion to their URLs), then over the scope's files; each cites a URL
    written_claims = 0
    absent_claims = 0
    corpus.mkdir(parents=True)
    remaining = claims
    for si, (scope, kind) in enumerate(scope_list):
        mine = urls_of[si]
        n_claims = round(claims * len(mine) / urls) if si < scopes - 1 else remaining
        n_claims = max(n_claims, len(mine)) if mine else 0
        remaining -= n_claims
        per_file = [n_claims // files_of[si] + (1 if f < n_claims % files_of[si] else 0) for f in range(files_of[si])]
        cited = 0
        for fi, nc in enumerate(per_file):
            topic = TOPICS[(fi + si) % len(TOPICS)]
            lines = [f"# {scope.split('/')[-1].upper()} (synthetic) — {topic.replace('-', ' ').capitalize()} playbook", "",
                     f"Scope: `{scope}`. Status: generated for the scale benchmark (fictional figures).", "",
                     "## Profile", "",
                     "- Currency: the local unit; euro prices are quoted by most agents.",
                     "- Land register: held by the lands office, searchable online.", ""]
            sections = max(1, nc // 6)
            for c in range(nc):
                if c % max(1, nc // sections) == 0:
                    lines += ["", f"## Section: `--{TOPICS[(c // 6 + fi) % len(TOPICS)]}`", ""]
                u = url_rows[mine[cited % len(mine)]]
                cited += 1
                subject = rng.choice(SUBJECTS)
                fact = make_fact(rng, subject, u.kind == "changed" and not u.facts)
                u.facts.append(fact)
                if u.kind == "absent" and len(u.facts) == 1:
                    fact.page = fact.changed_page = "The figures for this procedure are published in the annual schedule."
                    absent_claims += 1
                label = f"{u.host.split('.')[-3 if u.host.count('.') >= 2 else 0].capitalize()} office — {subject}"
                cite = f"[{label}]({u.url})"
                if rng.random() < 0.35:
                    m, d = rng.randrange(1, 10), rng.randrange(1, 29)
                    lines.append(f"- {fact.claim} ({cite}) (2026-{m:02d}-{d:02d} verified, source {u.host})")
                else:
                    lines.append(f"- {fact.claim} ({cite}).")
                written_claims += 1
            lines += ["", "## Sources", "", f"- [Official portal](http://{region_hosts[si % n_regions][0]}/) — the "
                      "portal's home page (a sources section: never a claim).", "",
                      f"**Last verified**: 2026-{1 + (si + fi) % 9:02d}-{1 + (si * 7 + fi) % 27:02d}", ""]
            if kind == "shared":
                target = corpus / f"{scope}.md"
            else:
                target = corpus / "countries" / scope / f"{topic}{'' if fi < len(TOPICS) else fi}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(lines), encoding="utf-8")

    # the sites: one file per readable page, a .v2 variant for changed ones
    for u in url_rows:
        if not u.path:
            continue
        f = sites / u.host / u.path
        f.parent.mkdir(parents=True, exist_ok=True)
        title = u.path.rsplit("/", 1)[-1].removesuffix(".html").replace("-", " ")
        prng = random.Random(u.url)
        f.write_text(page_html(u.host, title, [x.page for x in u.facts], page_kb, prng), encoding="utf-8")
        if u.kind == "changed":
            prng = random.Random(u.url)
            f.with_name(f.name + ".v2").write_text(
                page_html(u.host, title, [x.changed_page for x in u.facts], page_kb, prng), encoding="utf-8")
    for h in all_hosts:  # every host has a site (a missing page is then a plain 404) and a home page
        (sites / h).mkdir(parents=True, exist_ok=True)
        (sites / h / "index.html").write_text(page_html(h, "Home", ["Welcome to the official portal."], 1, rng),
                                               encoding="utf-8")

    tlds = sorted({h.rsplit(".", 1)[1] for h in all_hosts})
    config = {
        "home": str((out / "home").resolve()),
        "extraction": {"corpus_dir": str(corpus.resolve()), "scope_dirs": COUNTRIES_PRESET_DIRS,
                       "scope_rules": COUNTRIES_PRESET_RULES},
        "fetch": {
            "concurrency": 64, "req_per_sec": 2000,
            "default_host": {"concurrency": 2, "interval_ms": 10}, "gov_host": {"concurrency": 2, "interval_ms": 10},
            "per_host_overrides": {}, "request_timeout_s": 10, "max_retries": 2, "retry_backoff_s": [0.05],
            "address_map": {f"*.{t}": address for t in tlds},
            "allow_networks": [f"{address.rsplit(':', 1)[0]}/32"],
        },
    }
    import yaml

    (out / "synthetic.yaml").write_text(
        "# Generated by benchmarks/make_synthetic_corpus.py. The fictional TLDs go to the fixture web at\n"
        "# fetch.address_map's address: rewrite it with the running fixture web's port (or use route_to()).\n"
        + yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    counts: dict[str, int] = {}
    for u in url_rows:
        counts[u.kind] = counts.get(u.kind, 0) + 1
    manifest = {
        "claims": written_claims, "files": files, "scopes": scopes, "urls": len(url_rows), "hosts": hosts,
        "seed": seed, "url_kinds": counts, "absent_claims": absent_claims,
        "tld_wildcards": [f"*.{t}" for t in tlds], "all_hosts": all_hosts,
        "regions": [{"hosts": region_hosts[r], "scopes": [s for i, (s, _) in enumerate(scope_list) if i % n_regions == r]}
                    for r in range(n_regions)],
        "urls_by_kind": {k: [u.url for u in url_rows if u.kind == k] for k in counts},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def route_to(settings: Any, address: str) -> Any:
    """`settings` (claims_pipeline.config.settings.Settings loaded from synthetic.yaml) with every fictional TLD sent to
    the fixture web at `address` ("127.0.0.1:<port>") and only that address allowed."""
    amap = {k: address for k in settings.fetch.address_map}
    fetch = settings.fetch.model_copy(update={"address_map": amap,
                                              "allow_networks": [f"{address.rsplit(':', 1)[0]}/32"]})
    return settings.model_copy(update={"fetch": fetch})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--urls", type=int, default=20_000)
    ap.add_argument("--hosts", type=int, default=500)
    ap.add_argument("--scopes", type=int, default=None, help="default: files ÷ 10")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--page-kb", type=float, default=6.0, help="approximate size of each page's HTML")
    ap.add_argument("--changed", type=float, default=0.05, help="share of URLs whose page changes at epoch 2")
    ap.add_argument("--dead", type=float, default=0.03, help="share of URLs that answer 404 or 410")
    ap.add_argument("--walled", type=float, default=0.02, help="share of URLs behind a bot wall")
    ap.add_argument("--absent", type=float, default=0.02, help="share of URLs whose page lacks one claim's figure")
    ap.add_argument("--address", default="127.0.0.1:8765", help="the fixture web's ip:port written in synthetic.yaml")
    a = ap.parse_args(argv)
    m = generate(a.out, claims=a.claims, files=a.files, urls=a.urls, hosts=a.hosts, scopes=a.scopes, seed=a.seed,
                 changed=a.changed, dead=a.dead, walled=a.walled, absent=a.absent, page_kb=a.page_kb,
                 address=a.address)
    print(f"{m['claims']} claims in {m['files']} files over {m['scopes']} scopes; {m['urls']} URLs over "
          f"{m['hosts']} hosts {m['url_kinds']} → {a.out}")
    return 0
