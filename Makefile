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

.PHONY: venv demo test lint docs bench thorough sanitize-l0 clean

$(STAMP): pyproject.toml Makefile lam_ref/text/_l0.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check "torch==2.13.0"
	$(PY) -m pip install -q --disable-pip-version-check -e ".[encoder,docs,dev,dask]"
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

# L0's C pass under AddressSanitizer + UBSan: the L0 tests in the thorough Hypothesis profile, then
# the extension is rebuilt normally (gcc only; not part of `make test`).
SO := $(shell $(PY) -c "import sysconfig; print('lam_ref/text/_l0' + sysconfig.get_config_var('EXT_SUFFIX'))" 2>/dev/null)
sanitize-l0: venv
	gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -shared -fPIC \
	  -I$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['include'])") -Ilam_ref/_vendor/xxhash \
	  lam_ref/text/_l0.c -o $(SO)
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -p no:cacheprovider tests/test_text_lines.py; \
	  rc=$$?; rm -f $(SO); $(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .; exit $$rc

clean:
	rm -rf $(VENV) site .pytest_cache .hypothesis
