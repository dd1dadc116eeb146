# lam_ref: the two commands of the README (`make demo`, `make test`) create/refresh .venv themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.lam_ref-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export HYPOTHESIS_PROFILE ?= ci
export NO_MKDOCS_2_WARNING := 1
export DISABLE_MKDOCS_2_WARNING := true

.PHONY: venv demo test lint docs bench thorough clean

$(STAMP): pyproject.toml Makefile lam_ref/text/_l0.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check "torch==2.13.0"
	$(PY) -m pip install -q --disable-pip-version-check -e ".[encoder,docs,dev]"
	touch $(STAMP)

venv: $(STAMP)

demo: venv
	$(PY) -m lam_ref.demo

lint: venv
	$(VENV)/bin/ruff check .

docs: venv
	$(VENV)/bin/mkdocs build --strict -q -d site

test: venv
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -p no:cacheprovider
	$(VENV)/bin/mkdocs build --strict -q -d site

thorough: venv
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -p no:cacheprovider

bench: venv
	$(PY) benchmarks/bench_substitution.py

clean:
	rm -rf $(VENV) site .pytest_cache .hypothesis
