# Set-up and entry points. Needs only python3 (3.11+) and make; system packages come from apt when run as root.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system-deps test-deps demo lint test check-defs bench dev

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# poppler-utils gives pdftotext (PDF -> text); without it the pure-Python pypdf fallback is used.
system-deps:
	@command -v pdftotext >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; \
	  else echo "note: install poppler-utils (pdftotext) for the best PDF text; using pypdf meanwhile"; fi; }

# The browser test drives Debian's chromium headless through Playwright; the cache tests also run on a
# throwaway PostgreSQL server (Debian's postgresql; the tests start and stop their own on 127.0.0.1), and the
# Celery executor test on a throwaway Redis broker (Debian's redis-server, likewise).
test-deps: system-deps
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install chromium for the UI browser test"; fi; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else echo "note: install postgresql for the cache-on-PostgreSQL tests"; fi; }
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else echo "note: install redis-server for the Celery executor test"; fi; }

setup: $(STAMP) system-deps

demo: setup
	$(BIN)/claims-pipeline demo

check-defs: setup
	$(BIN)/dg check defs

# ruff (settings in pyproject's [tool.ruff]) and mypy ([tool.mypy]: the claims_pipeline package), both from the dev extras
lint: $(STAMP)
	$(BIN)/ruff check claims_pipeline claims_pipeline_demo claims_pipeline_tests benchmarks
	$(BIN)/mypy

test: $(STAMP) test-deps lint
	$(BIN)/dg check defs
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup

bench: setup
	$(BIN)/python benchmarks/bench_extract.py

# The UI on the instance the commands' runs went to: the same settings chain and deployment as theirs
# ($CLAIMS_PIPELINE_CONFIG, $CLAIMS_PIPELINE_DEPLOYMENT); `make dev DEPLOYMENT=demo` opens the demo's runs.
DEPLOYMENT ?= $(CLAIMS_PIPELINE_DEPLOYMENT)
dev: setup
	home="$$(CLAIMS_PIPELINE_DEPLOYMENT=$(DEPLOYMENT) $(BIN)/python -m claims_pipeline.orchestration.instance)" && CLAIMS_PIPELINE_DEPLOYMENT=$(DEPLOYMENT) DAGSTER_HOME="$$home" $(BIN)/dg dev
