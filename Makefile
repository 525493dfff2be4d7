# Sextant — two commands matter: `make demo` and `make test`. Everything else is a step they use.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
# the same floats on every CPU: numpy's AVX-512 kernels off (libs/contracts/src/sextant_contracts/simd.py)
export NPY_DISABLE_CPU_FEATURES ?= X86_V4 AVX512_ICL AVX512_SPR
# and one OpenBLAS kernel on every x86-64 CPU (libs/contracts/src/sextant_contracts/simd.py)
export OPENBLAS_CORETYPE ?= $(if $(filter x86_64 amd64,$(shell uname -m)),Haswell,)

PACKAGES := libs/contracts libs/core libs/kit libs/sim \
	services/admission services/profiling services/classification services/planning \
	services/reprovisioning services/telemetry apps/cli apps/agent infra

.PHONY: install browser demo test test-unit up down lint bench clean docs-screens

install: $(STAMP) browser

# the console's browser tests drive Debian's chromium (Playwright with its executable path: no
# browser download); installed once, when the command is missing (about 1.5 min on a clean machine)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends chromium; }

$(STAMP): constraints.txt requirements-dev.txt $(foreach p,$(PACKAGES),$(p)/pyproject.toml)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade "pip==26.3" "setuptools==84.2.1" "wheel==0.48.0"
	$(BIN)/pip install -q -c constraints.txt -r requirements-dev.txt \
		$(foreach p,$(PACKAGES),-e ./$(p))
	touch $(STAMP)

# TEST_WORKERS pytest-xdist workers, each with its own PostgreSQL and Kafka, take whole files, the
# e2e and integration files first (sextant_kit/testing/parallel.py); TEST_WORKERS=0 runs in one process
TEST_WORKERS ?= 2
test: install
	SEXTANT_ENFORCE_INTEGRATION=1 $(BIN)/python -m pytest -p no:cacheprovider -q -n $(TEST_WORKERS) --dist loadfile

# the inner loop: every test that needs no server (no PostgreSQL, no Kafka: tests marked
# `integration` or `e2e` are deselected, and a server requested anyway fails the test)
test-unit: install
	SEXTANT_NO_SERVERS=1 $(BIN)/python -m pytest -p no:cacheprovider -q -m "not integration and not e2e"

# the stack (PostgreSQL + Kafka), then the platform's processes; the API on 127.0.0.1:8080
# (SEXTANT_API_HOST / SEXTANT_API_PORT change it)
up: install
	$(BIN)/sextant-infra up
	$(BIN)/sextant up

down: install
	$(BIN)/sextant down
	$(BIN)/sextant-infra down

demo: install
	$(BIN)/sextant demo --scenario platform-demo --speed 60 --out out/demo

lint: install
	$(BIN)/ruff check libs services apps infra tests bench
	$(BIN)/mypy libs/contracts/src libs/core/src libs/kit/src libs/sim/src
	$(BIN)/pylint --score=n libs/*/src services/*/src apps/*/src infra/sextant_infra

bench: install
	$(BIN)/python bench/run_all.py

# a PNG of each web console page into docs/console/ (the console tests' browser harness)
docs-screens: install
	$(BIN)/python bench/console_screens.py

clean:
	rm -rf $(VENV) .run
