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

.PHONY: install dev serve test lint format unit integration infrastructure e2e browser synth lock bench eval eval-extraction relational-probe eval-ablation eval-fit-weights eval-expansion match-strength mem0-env bench-scale paraphrase-hits clean

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

# `cdk synth` with local bundling (no Docker): pip installs the locked wheels for arm64 / Python 3.12. Its own
# virtualenv with the `synth` extra only (no torch); `make synth SYNTH_VENV=.venv` reuses the development one.
# The first synth fills the wheelhouse (~/.cache/rapport/wheelhouse) from PyPI; later ones need no network.
SYNTH_VENV ?= .venv-synth
LOCK := layers/core/requirements.lock
# Lambda's python3.12 on Graviton; grpc and protobuf come with opensearch-py but nothing imports them.
LOCK_FLAGS := --generate-hashes --python-platform aarch64-manylinux2014 --python-version 3.12 \
	--no-emit-package opensearch-protobufs --no-emit-package grpcio --no-emit-package protobuf \
	--annotation-style line --custom-compile-command 'make lock'

$(SYNTH_VENV)/.synth-installed: pyproject.toml
	$(PYTHON) -m venv $(SYNTH_VENV)
	$(SYNTH_VENV)/bin/python -m pip install -q --upgrade pip
	$(SYNTH_VENV)/bin/python -m pip install -q -e '.[synth]'
	touch $@

synth: $(SYNTH_VENV)/.synth-installed
	npm ci --no-audit --no-fund
	RAPPORT_VENV=$(SYNTH_VENV) npx cdk synth --quiet

# Re-resolve the layer's dependencies within pyproject's ranges (`make lock UPGRADE=1` moves to the newest).
lock: install
	$(VENV)/bin/uv pip compile pyproject.toml $(LOCK_FLAGS) $(if $(UPGRADE),--upgrade) -o $(LOCK)

unit integration infrastructure e2e browser: install
	$(VENV)/bin/pytest -q tests/$@

clean:
	rm -rf $(VENV) $(SYNTH_VENV) cdk.out .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

# Retrieval evaluation and benchmarks (docs/BENCHMARKS.md). Never part of `make test`: they take minutes.
# LOCOMO is the LoCoMo JSON to evaluate on; the product does not depend on where it lives. The LoCoMo evaluations keep
# MiniLM's vectors in ~/.cache/rapport/embeddings.sqlite3 across runs (docs/recall.md, "How the evaluation runs").
LOCOMO ?= ../shared/datasets/locomo/locomo-dev.json
BENCH_RESULTS := bench/results

eval: install
	mkdir -p $(BENCH_RESULTS)
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --out $(BENCH_RESULTS)/locomo.json --markdown $(BENCH_RESULTS)/locomo.md

# The rule-based model (patterns + the semantic layer over MiniLM) on the labelled set's test half, dev beside it
# (docs/pipeline.md, "The semantic layer"); under a minute.
eval-extraction: install
	mkdir -p $(BENCH_RESULTS)
	$(VENV)/bin/rapport eval extraction --out $(BENCH_RESULTS)/extraction.json --markdown $(BENCH_RESULTS)/extraction.md

# The probes the semantic layer ships, trained again from their inputs (docs/pipeline.md, "A probe for ways of
# helping", "A probe for the user's kinds", "A probe for the filter"): a prototype or a labelled line changed, and a
# test asks for it. A minute.
relational-probe: install
	$(PY) -m bench.relational_probe
	$(PY) -m bench.user_probe
	$(PY) -m bench.filter_probe
	$(PY) -m bench.signal_probe

# Where strong / moderate / weak cut (docs/recall.md): relevance of true and false matches, half a minute.
match-strength: install
	$(PY) -m bench.match_strength --locomo $(LOCOMO) --out $(BENCH_RESULTS)/match-strength.json

# The ablation (what each recall change bought) re-runs the evaluation once per change: ~10 minutes.
eval-ablation: install
	mkdir -p $(BENCH_RESULTS)
	$(PY) -m bench.locomo_ablation --data $(LOCOMO) --out $(BENCH_RESULTS)/locomo-ablation.json

# Recall's weights fitted on the tuning set, leave-one-conversation-out, check set beside (docs/recall.md): ~10 minutes.
eval-fit-weights: install
	mkdir -p $(BENCH_RESULTS)
	$(PY) -m bench.fit_weights --data $(LOCOMO) --out $(BENCH_RESULTS)/fit-weights.json

# With and without graph expansion (docs/graph.md), same code, no baselines: two runs of ~10 minutes.
eval-expansion: install
	mkdir -p $(BENCH_RESULTS)
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --no-baselines --quiet --out $(BENCH_RESULTS)/locomo-expansion-off.json
	$(VENV)/bin/rapport eval locomo --data $(LOCOMO) --no-baselines --quiet --expand-relations --out $(BENCH_RESULTS)/locomo-expansion-on.json

# Mem0 open source, for the side-by-side comparison only: its own environment, never the product's dependencies.
MEM0_ENV := bench/mem0_env
mem0-env: $(MEM0_ENV)/.installed

$(MEM0_ENV)/.installed:
	$(PYTHON) -m venv $(MEM0_ENV)
	$(MEM0_ENV)/bin/pip install -q torch==2.13.0
	$(MEM0_ENV)/bin/pip install -q mem0ai faiss-cpu sentence-transformers
	touch $@

# Rapport beside Mem0 at 1,000, 10,000 and 100,000 memories of one person (bench/scale.py): long, about an hour.
SCALE_SIZES ?= 1000,10000,100000
bench-scale: install mem0-env
	$(PY) -m bench.scale --sizes $(SCALE_SIZES)

# One paraphrase set's hit@k beside cosine, the query vector given (bench/paraphrase_hits.py): `fresh` is the set no
# recall rule was chosen on. Half a minute at 10,000; 100,000 takes twenty.
PARAPHRASE_SET ?= fresh
PARAPHRASE_SIZES ?= 1000,10000
paraphrase-hits: install
	$(PY) -m bench.paraphrase_hits --set $(PARAPHRASE_SET) --sizes $(PARAPHRASE_SIZES)

bench: install bench-scale
	$(PY) -m bench.run --out docs/BENCHMARKS.md --locomo $(LOCOMO)
