# The two commands of the README: `make dev` (set up, run the local server) and `make test` (set up, run every test).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export TOKENIZERS_PARALLELISM := false

.PHONY: install dev serve test lint format unit integration infrastructure e2e browser synth bench eval eval-ablation eval-expansion match-strength clean

install: $(STAMP)

$(STAMP): pyproject.toml sdk/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# torch first, pinned: this version's CPU build lies on the machine's disk; a plain `torch` pulls a CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[local,dev,cli]' -e 'sdk/python[mcp,langchain]'
	touch $(STAMP)

dev: install
	$(VENV)/bin/rapport serve

serve: dev

lint: install
	$(VENV)/bin/ruff check layers functions infra tests sdk
	$(VENV)/bin/ruff format --check layers functions infra tests sdk
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo

format: install
	$(VENV)/bin/ruff format layers functions infra tests sdk
	$(VENV)/bin/ruff check --fix layers functions infra tests sdk

test: install lint
	$(VENV)/bin/pytest -q -p no:cacheprovider

# `cdk synth` with local bundling (no Docker): pip builds the layer for arm64 / Python 3.12.
synth: install
	npm ci --no-audit --no-fund
	npx cdk synth --quiet

unit integration infrastructure e2e browser: install
	$(VENV)/bin/pytest -q tests/$@

clean:
	rm -rf $(VENV) cdk.out .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

# Retrieval evaluation and benchmarks (docs/BENCHMARKS.md). Never part of `make test`: they take minutes.
# LOCOMO is the LoCoMo JSON to evaluate on; the product does not depend on where it lives.
LOCOMO ?= ../shared/datasets/locomo/locomo-dev.json
BENCH_RESULTS := bench/results

eval: install
	mkdir -p $(BENCH_RESULTS)
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --out $(BENCH_RESULTS)/locomo.json --markdown $(BENCH_RESULTS)/locomo.md

# Where strong / moderate / weak cut (docs/recall.md): relevance of true and false matches, half a minute.
match-strength: install
	$(PY) -m bench.match_strength --locomo $(LOCOMO) --out $(BENCH_RESULTS)/match-strength.json

# The ablation (what each recall change bought) re-runs the evaluation once per change: ~10 minutes.
eval-ablation: install
	mkdir -p $(BENCH_RESULTS)
	$(PY) -m bench.locomo_ablation --data $(LOCOMO) --out $(BENCH_RESULTS)/locomo-ablation.json

# With and without graph expansion (docs/graph.md), same code, no baselines: two runs of ~10 minutes.
eval-expansion: install
	mkdir -p $(BENCH_RESULTS)
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --no-baselines --quiet --out $(BENCH_RESULTS)/locomo-expansion-off.json
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --no-baselines --quiet --expand-relations --out $(BENCH_RESULTS)/locomo-expansion-on.json

bench: install
	$(PY) -m bench.run --out docs/BENCHMARKS.md
