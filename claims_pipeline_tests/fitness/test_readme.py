"""The README and docs stay true: every command they show runs.

- The Quick start's first block holds exactly the two commands CI runs (`make demo`, `make test`).
- Every line of every ```sh block in README.md, docs/*.md and benchmarks/README.md runs here, in order, in a
  sandbox: HOME is a temporary folder (so `~/.claims_pipeline` is the sandbox's), no CLAIMS_PIPELINE_* or
  DAGSTER_HOME variable is set, the folder is the repository root, `.venv/bin` leads PATH. A line must exit 0,
  or the code its trailing `# exit N` names. `make X` runs what `make -n X` would run from `.venv/bin/`
  (never pip or apt: the suite must not install anything); `make test` is this suite and is not run again.
- A block that cannot run in a test (a server that does not end, a benchmark that needs minutes and the machine
  to itself) is preceded by the line `<!-- not run in tests: <reason> -->`. Its commands are still checked: a
  `make` target exists, a script it names exists.
- Commands shown in prose and tables: each `claims-pipeline SUBCOMMAND --option` names an option that
  subcommand's --help lists, and each `benchmarks/*.py --option` an option of that script.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from claims_pipeline.config.home import HomeLayout
from claims_pipeline_demo.fixture_web.server import FixtureWeb
from claims_pipeline_tests.time_scale import scaled

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent
SKIP_RE = re.compile(r"<!--\s*not run in tests:\s*(\S.*?)\s*-->")
EXIT_RE = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]


@dataclass(frozen=True)
class Command:
    doc: str
    line_no: int
    text: str
    skip_reason: str | None

    @property
    def expected_exit(self) -> int:
        m = EXIT_RE.search(self.text)
        return int(m.group(1)) if m else 0

    @property
    def shell(self) -> str:
        return EXIT_RE.sub("", self.text)

    def __str__(self) -> str:
        return f"{self.doc}:{self.line_no}: {self.text}"


def shown_commands(path: Path) -> list[Command]:
    """The lines of the file's ```sh blocks (a trailing backslash joins the next line; # comments skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(ROOT).as_posix()
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```sh":
            i += 1
            continue
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP_RE.search(before)
        i += 1
        pending, start = "", 0
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i].strip()
            if line and not line.startswith("#"):
                if not pending:
                    start = i + 1
                pending += line[:-1] + " " if line.endswith("\\") else line
                if not line.endswith("\\"):
                    commands.append(Command(rel, start, pending, skip.group(1) if skip else None))
                    pending = ""
            i += 1
        i += 1
    return commands


ALL_COMMANDS = [c for path in doc_files() if path.exists() for c in shown_commands(path)]
QUICK_START = ("make demo", "make test")
RUNNABLE = [c for c in ALL_COMMANDS if c.skip_reason is None and c.text not in QUICK_START]


def test_quick_start_holds_exactly_the_two_commands_and_ci_runs_the_second():
    section = README.split("## Quick start", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.splitlines() if line.strip()]
    assert commands == list(QUICK_START)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci.splitlines()[-1]


def test_docs_show_commands_and_every_skipped_block_says_why():
    assert len(RUNNABLE) >= 4, "the docs' ```sh blocks hold hardly any command"
    for c in ALL_COMMANDS:
        if c.skip_reason is not None:
            assert len(c.skip_reason) > 10, f"{c}: say why it cannot run in a test"


# ---- the sandbox -------------------------------------------------------------------------------------------------

def sandbox_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CLAIMS_PIPELINE_") and k not in ("DAGSTER_HOME", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONWARNINGS"] = "ignore"
    return env


def make_recipe(target: str, env: dict[str, str]) -> list[str]:
    """What `make TARGET` would run from .venv/bin (its set-up lines, pip and apt, left out)."""
    dry = subprocess.run(["make", "-n", target], cwd=ROOT, env=env, capture_output=True, text=True, timeout=scaled(60))
    assert dry.returncode == 0, f"make -n {target}: {dry.stderr}"
    return [line.strip() for line in dry.stdout.splitlines()
            if line.strip().startswith(".venv/bin/") and "/pip " not in line]


def run_shell(command: str, env: dict[str, str], *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=scaled(timeout))


def expand(command: str, env: dict[str, str]) -> list[str]:
    words = shlex.split(command)
    if words[:1] == ["make"] and len(words) == 2:
        return make_recipe(words[1], env)
    return [command]


# One worker runs the whole module: its commands share one sandbox, in the docs' order (a doc's later command reads
# what an earlier one wrote: `init … --config ~/kb.yaml`, then `extract --config ~/kb.yaml`), and `make demo` runs
# once. Needs pytest-xdist's `--dist loadgroup` (the Makefile's test command).
pytestmark = pytest.mark.xdist_group("docs_commands_sandbox")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh HOME where the Quick start's `make demo` has run (the other commands start from its outputs)."""
    env = sandbox_env(tmp_path_factory.mktemp("home"))
    recipe = make_recipe("demo", env)
    assert any(line.endswith("claims-pipeline demo") for line in recipe), recipe
    for line in recipe:
        done = run_shell(line, env)
        assert done.returncode == 0, f"make demo: {line}\n{done.stdout}\n{done.stderr[-3000:]}"
    env["_DEMO_STDERR"] = done.stderr
    return env


def test_make_demo_puts_its_outputs_where_the_quick_start_says(sandbox: dict[str, str]):
    demo = Path(sandbox["HOME"]) / ".claims_pipeline" / "demo"
    report = HomeLayout(demo).latest_report_dir()
    assert report is not None
    assert (report / "report.html").is_file() and (report / "report.md").is_file() and (report / "report.json").is_file()
    assert (demo / "demo.yaml").is_file()
    stderr = sandbox["_DEMO_STDERR"]
    assert f"report for people → {report / 'report.html'}" in stderr
    assert "\nUI: " in stderr and "DAGSTER_HOME=" in stderr
    text = (report / "report.md").read_text(encoding="utf-8")
    # the tour's story: 29 claims, 3 flagged, the levy page's change from 0.8 % to 1.1 %
    assert "Claims checked: 29  ·  flagged: 3" in text
    assert "-For the current year the levy is 0.8 % of the cadastral value." in text
    assert "+From this year the levy is 1.1 % of the cadastral value" in text
    assert "`countries/xa/playbook.md:23`" in text and "`countries/xa/playbook.md:18`" in text
    # step 5: the scripted judge's verdicts and the suggested correction beside the report, never applied
    assert (report / "verdicts.md").is_file()
    assert "countries/xa/playbook.md:18  MISMATCH  0.8% -> 1.1%" in (report / "corrections.patch").read_text(encoding="utf-8")
    corpus = ROOT / "claims_pipeline_demo" / "corpus" / "countries" / "xa" / "playbook.md"
    assert "**0.8%** of the cadastral value" in corpus.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", RUNNABLE, ids=str)
def test_command_shown_in_the_docs_runs(command: Command, sandbox: dict[str, str]):
    for line in expand(command.shell, sandbox):
        done = run_shell(line, sandbox)
        assert done.returncode == command.expected_exit, (
            f"{command}\nexit {done.returncode}, expected {command.expected_exit}\n"
            f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-3000:]}")


@pytest.mark.parametrize("command", [c for c in ALL_COMMANDS if c.skip_reason is not None], ids=str)
def test_command_not_run_still_names_what_exists(command: Command):
    env = sandbox_env(ROOT)
    words = shlex.split(EXIT_RE.sub("", command.text), comments=True)
    for i, word in enumerate(words):
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)+\.(py|yaml|md)", word):  # a file of the repository
            assert (ROOT / word).exists(), f"{command}: no {word}"
        if i and words[i - 1] == "-m":  # a module
            assert importlib.util.find_spec(word) is not None, f"{command}: no module {word}"
    words = shlex.split(command.text)
    if "make" in words:
        target = words[words.index("make") + 1]
        assert subprocess.run(["make", "-n", target], cwd=ROOT, env=env, capture_output=True,
                              timeout=scaled(60)).returncode == 0, f"{command}: no make target {target}"


# ---- commands in prose and tables: their options exist -----------------------------------------------------------

INLINE_RE = re.compile(r"`((?:\.venv/bin/)?claims-pipeline [^`]+|(?:\.venv/bin/python )?benchmarks/\w+\.py[^`]*)`")


def inline_commands() -> list[tuple[str, str]]:
    found = []
    for path in doc_files():
        if path.exists():
            for m in INLINE_RE.finditer(path.read_text(encoding="utf-8")):
                found.append((path.relative_to(ROOT).as_posix(), m.group(1)))
    return found


_HELP: dict[tuple[str, ...], str] = {}


def help_text(argv: tuple[str, ...]) -> str:
    if argv not in _HELP:
        done = subprocess.run([*argv, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(120),
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        assert done.returncode == 0, f"{' '.join(argv)} --help: {done.stderr[-2000:]}"
        _HELP[argv] = done.stdout
    return _HELP[argv]


def test_options_named_in_prose_exist():
    problems = []
    for doc, text in inline_commands():
        words, sub = text.split(), None
        if "claims-pipeline" in words[0]:
            sub = words[1] if len(words) > 1 and not words[1].startswith("-") else None
            argv = (str(BIN / "claims-pipeline"), sub) if sub else (str(BIN / "claims-pipeline"),)
        else:
            script = next(w for w in words if w.startswith("benchmarks/"))
            if not (ROOT / script).is_file():
                problems.append(f"{doc}: `{text}`: no {script}")
                continue
            argv = (sys.executable, str(ROOT / script))
        if sub is not None and f"    {sub}" not in help_text(argv[:1]):
            problems.append(f"{doc}: `{text}`: no subcommand {sub}")
            continue
        usage = help_text(argv)
        for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", text):
            if opt not in usage:
                problems.append(f"{doc}: `{text}`: {opt} is no option of {' '.join(Path(a).name for a in argv)}")
    assert not problems, "\n".join(problems)


# ---- your own knowledge base, from a fresh clone -----------------------------------------------------------------

OWN_SITES = {
    "www.tax.gov.qq/rates.html": "<h1>Rates</h1><p>The standard rate is 21 % from 1 January.</p>",
    "stats.example.net/rents.html": "<h1>Rents</h1><p>Rents in the capital rose 4.1 % last year.</p>",
}
OWN_NOTES = {
    "money/tax.md": "# Tax\n\nThe standard rate is **21 %** ([tax office](http://www.tax.gov.qq/rates.html)).\n",
    "home/rents.md": "# Rents\n\nRents rose **4.9 %** in a year ([a statistics blog](http://stats.example.net/rents.html)).\n",
}


def fresh_clone(dest: Path) -> Path:
    """The repository's tracked files in dest, as a fresh clone holds them (never a settings file someone's own
    `init` wrote in this checkout), with .venv the tests' own environment, as `make demo` would have made it."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    assert listed.returncode == 0, f"git ls-files: {listed.stderr!r}"
    for rel in listed.stdout.decode("utf-8").split("\0"):
        if rel and (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dest / rel)
    (dest / ".venv").symlink_to(BIN.parent, target_is_directory=True)
    return dest


def test_the_readme_path_for_your_own_knowledge_base_runs_from_a_fresh_clone(tmp_path: Path):
    """The README's two commands for one's own notes, as written, from the clone's folder with the venv not on PATH
    (a newcomer who never activated it): init, then audit, no command refused. The only addition is the routing
    of the notes' two hosts to the fixture web on 127.0.0.1 (`--set`, as a user routes an intranet)."""
    block = next(b for b in README.split("```sh")[1:] if "claims-pipeline init" in b.split("```", 1)[0])
    init_line, audit_line = [line.strip() for line in block.split("```", 1)[0].splitlines() if line.strip()]
    assert init_line.startswith(".venv/bin/claims-pipeline init ~/") and audit_line == ".venv/bin/claims-pipeline audit"
    clone = fresh_clone(tmp_path / "clone")
    env = sandbox_env(tmp_path / "home")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p or not Path(p).is_dir() or Path(p).resolve() != BIN.resolve())
    notes = Path(os.path.expanduser(init_line.split()[-1].replace("~", str(tmp_path / "home"), 1)))
    for rel, text in OWN_NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text, encoding="utf-8")
    sites = tmp_path / "sites"
    for rel, body in OWN_SITES.items():
        (sites / rel).parent.mkdir(parents=True, exist_ok=True)
        filler = "<p>" + "Who may claim, how to apply and which documents to bring. " * 6 + "</p>"  # not a thin page
        (sites / rel).write_text(f"<html><head><title>x</title></head><body>{body}{filler}</body></html>", encoding="utf-8")

    def run(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=300)

    with FixtureWeb(sites) as web:
        routes = json.dumps(web.address_map([rel.split("/")[0] for rel in OWN_SITES]))
        init = run(f"{init_line} --set 'fetch.allow_networks=[127.0.0.1/32]' --set {shlex.quote(f'fetch.address_map={routes}')}")
        assert init.returncode == 0, f"{init_line}\n{init.stdout}\n{init.stderr}"
        config = clone / "config" / "claims_pipeline.yaml"
        assert init.stdout.splitlines()[0] == f"wrote {config}"
        # the next command, printed the way the README runs it, is the README's second line
        after = init.stdout.split("\nnext:\n", 1)[1].splitlines()
        assert after[0].split()[:2] == audit_line.split(), after
        audit = run(audit_line)
        assert audit.returncode == 0, f"{audit_line}\n{audit.stdout}\n{audit.stderr[-3000:]}"
    assert audit.stderr.splitlines()[0] == f"claims-pipeline: config {config}"
    report_dir = HomeLayout(tmp_path / "home" / ".claims_pipeline").latest_report_dir()
    assert report_dir is not None
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    # both pages read: 21 % is on its page, 4.9 % is not (the page says 4.1 %)
    assert report["headline"]["total"] == 2 and report["headline"]["tokens_absent"] == 1
    assert report["headline"]["by_prior"]["TOKENS_PRESENT"] == 1
    assert "config" in (clone / ".gitignore").read_text(encoding="utf-8")  # the file init wrote is the user's, ignored
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", "config/claims_pipeline.yaml"], cwd=ROOT, timeout=60)
    assert ignored.returncode == 0, "git would offer config/claims_pipeline.yaml, the user's own settings, for a commit"
