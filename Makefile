# Self-attention, step by step — every task a newcomer, a teacher or CI needs.
# Two commands matter: `make lab` and `make test`. Both create the environment first.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# three test workers on two cores: a third of make test's time is spent waiting (hubs and servers starting,
# pages loading, lock-outs expiring), and a third worker fills those waits with work
JOBS ?= 3
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg
# $(JOBS) test workers share the cores: one torch thread each (kernels inherit it) instead of each
# worker's torch spinning up a thread per core. Measured on 2 cores: make test's pytest 435 s -> 295 s,
# with every stored output still reproduced (nbval).
PYTEST := OMP_NUM_THREADS=1 $(BIN)/pytest
LEARNER_STAMP := $(VENV)/.learner-installed
# torch comes from PyTorch's CPU wheel index: on Linux, PyPI's torch of the same version pulls gigabytes of
# CUDA libraries. Only torch is looked up there (one request, before the lock). GPU: TORCH_INDEX=<PyTorch's
# CUDA index>; no extra index at all: TORCH_INDEX= (a torch already installed at the pinned version is kept).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# make test runs under torch's portable (non-vectorised) CPU kernels: the stored outputs come from a vector
# unit (make execute), so a stored number that depends on it fails nbval there (make nbval: this CPU's own)
TEST_KERNEL ?= ATEN_CPU_CAPABILITY=default
# the lessons the real-browser tests open in make test (the ones with checks of their own; nbval runs all)
BROWSER_LESSONS ?= 04,07,12

# install the lock $(1) into $(VENV) with pip options $(2): torch first (CPU index), then the pins ($(3):
# the installer, pip or uv), then attnlib itself (editable)
define install_lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "error: $(PYTHON) is older than 3.11; run e.g. make PYTHON=python3.11"; exit 1; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	@# one quick look at the torch index first: pip would retry an unreachable one five times, with a warning each
	index="$(TORCH_INDEX)"; if [ -n "$$index" ] && ! $(BIN)/python -c "$$REACHABLE" "$$index" 2>/dev/null; then \
		echo "note: $$index cannot be reached; torch comes from your own package index instead"; index=; fi; \
	$(BIN)/python -m pip install --quiet $(2) --no-deps $${index:+--extra-index-url $$index} "$$(grep -m1 '^torch==' $(1))"
	$(or $(3),$(BIN)/python -m pip install --quiet $(2)) -r $(1)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
endef

# exit status 0 when the host of the URL in argv[1] answers a TCP connection within 3 s (used before the torch index)
export REACHABLE := import socket, sys, urllib.parse as u; url = u.urlsplit(sys.argv[1]); \
	socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout=3)

# The workshop's 180 pins go in with uv (from PyPI, pinned in requirements.lock like everything else):
# it fetches and unpacks in parallel, which pip does one package at a time. Learners' installs use pip.
UV_PIN := $(shell grep -m1 '^uv==' requirements.lock)
UV_INSTALL = $(BIN)/python -m pip install --quiet "$(UV_PIN)" && $(BIN)/uv pip install --quiet --python $(BIN)/python

.PHONY: help env learner-env lock lab learn editions bytecode models train-models test unit nbval nbval-kernels lint lint-python lint-js format execute bench bench-ops slides site binder hub figures chromium browser clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

# --no-compile (uv does not compile either): make test writes the bytecode of what it imports, once, instead
# of compiling every module of torch at install
$(STAMP): requirements.lock pyproject.toml
	@echo "installing the whole workshop (requirements.lock: tests, site, hub) into $(VENV); learners need only make learn"
	$(call install_lock,requirements.lock,--no-compile,$(UV_INSTALL))
	@touch $@ $(LEARNER_STAMP)

# --no-compile: Python writes the bytecode of what the lessons import when they first do (the venv is
# 240 MB smaller than with every module compiled at install)
$(LEARNER_STAMP): requirements-learner.lock pyproject.toml
	$(call install_lock,requirements-learner.lock,--no-compile)
	@touch $@

env: $(STAMP)  ## create .venv with the pinned versions of everything (requirements.lock)

learner-env: $(LEARNER_STAMP)  ## create .venv with only what the lessons need (requirements-learner.lock; VENV=… for another folder)

lock: $(STAMP)  ## regenerate requirements.lock and requirements-learner.lock from pyproject.toml and .venv
	$(BIN)/python scripts/lock.py

lab: $(STAMP)  ## teachers: open JupyterLab on notebooks/, the teacher edition (127.0.0.1, token auth)
	@scripts/lab.sh $(BIN) notebooks

learn: $(LEARNER_STAMP)  ## learners: install only what the lessons need, copy them into my-lessons/ (never overwrites), open JupyterLab
	$(BIN)/attnlib-lessons --dir my-lessons

editions: $(STAMP)  ## build the learner, credit, teacher and checked editions into build/editions/
	$(BIN)/python scripts/build_editions.py --out build/editions

# Python writes the bytecode of what the tests import, once: where PYTHONDONTWRITEBYTECODE is set (CI
# machines) every kernel, server and hub the tests start would compile the modules it imports again.
# `bytecode` collects the tests once before they run, so that the pytest workers, which start together,
# do not each compile what collecting imports (torch, transformers, attnlib, the test modules): 16 CPU-s each.
# It imports what a server and a kernel do too: the hub's learners cannot write bytecode into .venv (3 CPU-s a start)
bytecode: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(TEST_KERNEL) BROWSER_LESSONS=$(BROWSER_LESSONS) $(PYTEST) -p no:cacheprovider --collect-only -q tests > /dev/null
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -c "import jupyter_server.serverapp, jupyterlab.labapp, jupyterhub.singleuser, ipykernel.kernelapp, ipywidgets, anywidget, matplotlib.pyplot"

# --durations=30: the log closes with the slowest setups and tests, so a run past its goal (≤ 10 min) says where
test:  ## the whole suite: lint, unit tests, nbval on every lesson (each solution checked in the same run), browser tests
	@# side by side: the Python environment, the npm packages and chromium install; then, as each is there, lint,
	@# the editions and the bytecode (each mostly on one core), every Python process writing the bytecode it compiles
	env -u PYTHONDONTWRITEBYTECODE $(MAKE) --no-print-directory -j4 --output-sync=target chromium lint editions bytecode
	env -u PYTHONDONTWRITEBYTECODE $(TEST_KERNEL) BROWSER_LESSONS=$(BROWSER_LESSONS) $(PYTEST) -n $(JOBS) --dist loadscope --no-loadscope-reorder --durations=30 tests build/editions/checked $(NBVAL)

unit: $(STAMP)  ## unit tests only (fast)
	$(PYTEST) -n $(JOBS) --dist loadscope tests -m "not browser"

nbval: $(STAMP)  ## re-execute every lesson and compare with its stored outputs
	$(PYTEST) -n $(JOBS) --dist loadscope notebooks $(NBVAL)

nbval-kernels: $(STAMP)  ## after make execute: nbval of the lessons and their solutions under each CPU kernel this machine has (portable, AVX2, AVX-512), two threads each
	$(BIN)/python scripts/nbval_kernels.py $(or $(NB),notebooks build/editions/checked) -- $(NBVAL)

FORMATTED := attnlib tests scripts bench harness site deploy etc

lint: lint-python lint-js  ## ruff, mypy; biome (format + lint), tsc and node's tests on the live view's JS

# the two halves of lint: make test runs them side by side (each about 15 s, on one core)
lint-python: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check --quiet $(FORMATTED)
	$(BIN)/mypy

lint-js: $(STAMP) node_modules/.package-lock.json
	node_modules/.bin/biome check .
	node_modules/.bin/tsc --noEmit -p jsconfig.json
	node --test tests/show/*.test.mjs

format: $(STAMP) node_modules/.package-lock.json  ## ruff format and fix imports; biome formats the JS and CSS
	$(BIN)/ruff check --fix --select I .
	$(BIN)/ruff format $(FORMATTED)
	node_modules/.bin/biome format --write .

execute: $(STAMP)  ## store fresh outputs in the notebooks by executing them (never paste outputs)
	$(BIN)/python scripts/execute_notebooks.py $(or $(NB),$(NOTEBOOKS))

bench: $(STAMP) chromium  ## what the course teaches and shows: attention paths, scale, KV cache, live views → docs/performance.md
	$(BIN)/python -m bench.bench_attention
	$(BIN)/python -m bench.bench_scale
	$(BIN)/python -m bench.bench_widgets
	$(BIN)/python -m bench.bench_browser
	$(BIN)/python -m bench.bench_frames
	$(BIN)/python -m bench.report

bench-ops: $(STAMP) chromium  ## running the course: nbval, make test on a fresh clone, the class hub (root) → the docs
	$(BIN)/python -m bench.bench_nbval
	$(BIN)/python -m bench.bench_make_test
	$(BIN)/python -m bench.bench_hub
	$(BIN)/python -m bench.report

slides: $(STAMP) node_modules/.package-lock.json  ## a reveal.js deck per lesson in slides/, explorers drawn with no kernel, offline (executes the lessons into build/slides-src)
	$(BIN)/python scripts/build_slides.py $(or $(NB),$(NOTEBOOKS))

site: $(STAMP) node_modules/.package-lock.json  ## the series as a website in build/site/, explorers drawn with no kernel, offline (executes the lessons; BINDER_REF=tag pins the launch links)
	$(BIN)/python site/build.py --out build/site $(if $(BINDER_REF),--binder-ref $(BINDER_REF))

hub: $(STAMP) node_modules/.package-lock.json  ## a JupyterHub for a class on this machine, as root: one OS account per learner (deploy/classhub.py; http://hub.localhost:8000, ports 8000-8002)
	$(BIN)/python deploy/classhub.py

binder: $(STAMP)  ## regenerate binder/requirements.txt from requirements-learner.lock (commit it; a test checks it is current)
	$(BIN)/python scripts/binder_requirements.py

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

figures: $(STAMP)  ## redraw the diagrams in images/ from attnlib (byte-deterministic; commit the result)
	$(BIN)/python scripts/figures.py

chromium:  ## install Debian's chromium for the browser tests where it is missing (root + apt only)
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "note: chromium is missing and cannot be installed here (needs root and apt-get); browser tests will be skipped"; \
		fi; }

browser: $(STAMP) chromium  ## only the real-browser tests, every lesson in JupyterLab in headless Chromium
	BROWSER_LESSONS=all $(PYTEST) tests/browser -m browser

clean:  ## remove generated folders (not .venv)
	rm -rf test-artifacts slides build .pytest_cache .ruff_cache .hypothesis

models train-models: $(STAMP)  ## retrain the models of lessons 13, 14, 16 and 17 into attnlib/checkpoints/ (commit the result)
	$(BIN)/python scripts/train_models.py
