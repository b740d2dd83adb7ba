# C13-L5 lesson kit. Two commands matter: `make site` and `make test` (both set everything up).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
# Every build runs under the kit's build lock (scripts/record/build_lock.py), from recovery of an interrupted publish
# through the input check, Snakemake and the report to the publish: a second build says who is building; a dead
# one's locks are cleared. Targets that only read the results (audit, check-stale, dist, serve) recover first.
BUILD_LOCK := $(PY) -m scripts.record.build_lock
SM_ARGS := --cores 2 --rerun-incomplete --scheduler greedy
RECOVER := $(BUILD_LOCK) --recover-only
QUIET := --quiet rules
# Every rule, then publish: the build `make test` and `make test-exhaustive` test against.
BUILD_ALL := $(BUILD_LOCK) --target all --publish -- $(SM_ARGS) $(QUIET)
# The default's audit, then every other anchor's (site/<name>/ against build/<name>/precomputed/).
AUDIT_ANCHORS := $(PY) -m scripts.audit && for a in anchors/*.json; do $(PY) -m scripts.audit --anchor "$$a" || exit 1; done
VENV_STAMP := .venv/.installed-$(shell sha256sum requirements.txt | cut -c1-16)
export PYTHONHASHSEED := 0
# Python keeps each module's compiled bytecode beside it (__pycache__/, git-ignored; a scratch copy compiles its own)
# even where the environment says not to: every Snakemake job, pytest worker and test subprocess otherwise compiled
# the kit's ~110 modules and rewrote every test's assertions again (collection alone 8.4 -> 4.5 s; issue 61).
unexport PYTHONDONTWRITEBYTECODE



.PHONY: test-cluster test-exhaustive test-all bench-cluster sweep-cluster anchors-cluster
.PHONY: anchors site data publish test test-seconds check-stale audit bench bench-lab bench-page bench-serving bench-serving-real bench-serving-heldout lint dist serve browser-deps clean

# Every rule, the render included, writes under build/; only when all of them succeeded does publish replace
# precomputed/ and site/ (crash-safe: a journal, then renames). A failed or killed build leaves both as they were.
# ANCHOR=<file>.json builds that anchor (Snakemake config `anchor`, outputs under build/<name>/) and publishes its
# page as site/<name>/; the default page in site/ and precomputed/ are left as they are.
ANCHOR ?=
LAB_PAIRS ?= 5  # make bench-lab: experiment C's predict-then-run pairs per width and rate
site: $(VENV_STAMP)  ## build the lesson page and its data, then publish precomputed/ and site/ together
ifeq ($(strip $(ANCHOR)),)
	$(BUILD_LOCK) --target all --publish --report build/default/site/report.html -- $(SM_ARGS) $(QUIET)
	@echo "site: $$(du -b site/index.html | cut -f1) bytes in site/index.html"
else
	$(BUILD_LOCK) --anchor "$(ANCHOR)" --publish -- $(SM_ARGS) $(QUIET)
endif

anchors: $(VENV_STAMP)  ## the default and every anchor in anchors/ in one Snakemake run, published together, audited
	$(BUILD_LOCK) --all-anchors --publish -- $(SM_ARGS) $(QUIET)
	$(AUDIT_ANCHORS)

data: $(VENV_STAMP)  ## regenerate the default anchor's derived files under build/default/precomputed/ (publishes nothing)
	$(BUILD_LOCK) --target data -- $(SM_ARGS) $(QUIET)

publish: $(VENV_STAMP)  ## publish the last complete build (build/default/precomputed/, build/default/site/)
	$(RECOVER)
	$(PY) -m scripts.record.publish

# `make test` is the tier a maintainer runs after an edit: at most 300 s on 2 cores with build/ from an earlier build
# (README, "Two commands"); a fresh clone first builds everything (77-90 s on this machine) and its caches are cold. It runs every check at least once; the remaining cases of the long ones
# (every kill point, every anchor built end to end, the large queueing runs, the larger random samples; pytest
# marker `exhaustive`, each naming the make-test case that guards the same defect) and the Slurm run are
# `make test-all`. The tests run in PYTEST_WORKERS processes (pytest-xdist, a test module per process: half of their
# time is spent waiting on Chromium and Snakemake subprocesses). It prints the ten slowest tests and its own total.
PYTEST_WORKERS ?= 2
TEST_CLOCK := build/.make-test-started
test: $(VENV_STAMP) browser-deps  ## the staleness check, the tests, the audit and the linter (budget: 300 s)
	@mkdir -p build && date +%s > $(TEST_CLOCK)
	$(BUILD_LOCK) --target all --fail-if-stale --publish -- $(SM_ARGS) $(QUIET)
	@echo "make test: staleness build done at $$(( $$(date +%s) - $$(cat $(TEST_CLOCK)) )) s"
	C13_REUSE_BUILD=1 $(PY) -m pytest -m "not cluster and not exhaustive" -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  --durations=10
	$(PY) -m scripts.audit --no-resimulate  # the re-simulation: tests/test_audit_report.py (the full audit: make audit)
	.venv/bin/ruff check .
	.venv/bin/actionlint .github/workflows/*.yml
	@echo "make test: finished in $$(( $$(date +%s) - $$(cat $(TEST_CLOCK)) )) s (budget 300 s on 2 cores)"

test-seconds: $(VENV_STAMP) browser-deps  ## measure each test module of make test again into tests/module_seconds.json
	$(BUILD_ALL)
	C13_REUSE_BUILD=1 $(PY) -m pytest -q -m "not cluster and not exhaustive" -n $(PYTEST_WORKERS) --dist loadfile \
	  --no-loadscope-reorder --junitxml=build/test-seconds.xml
	$(PY) -m scripts.bench.test_seconds build/test-seconds.xml

test-exhaustive: $(VENV_STAMP) browser-deps  ## only the exhaustive cases (run by test-all after make test)
	$(BUILD_ALL)
	$(PY) -m pytest -m "exhaustive and not cluster"

test-all: test test-exhaustive test-cluster  ## make test, then the exhaustive cases, then the one-node Slurm run

# The Slurm executor plugins live apart (requirements-cluster.txt, installed into .venv/cluster-plugins/) and are on
# PYTHONPATH for the cluster targets alone: Snakemake imports every executor plugin it finds at each start.
CLUSTER_PLUGINS := $(CURDIR)/.venv/cluster-plugins
CLUSTER_STAMP := $(CLUSTER_PLUGINS)/.installed-$(shell sha256sum requirements-cluster.txt | cut -c1-16)
WITH_SLURM := PYTHONPATH=$(CLUSTER_PLUGINS)
test-cluster: $(CLUSTER_STAMP)  ## boot a one-node Slurm, run a reduced sweep and benchmark through it, compare, stop it
	bash .ci/slurm/up.sh || { bash .ci/slurm/down.sh; exit 1; }
	rc=0; $(WITH_SLURM) $(PY) -m pytest -m cluster tests/test_cluster.py || rc=$$?; bash .ci/slurm/down.sh; exit $$rc

# On a cluster: every job through Slurm (profiles/slurm/config.yaml: partition, account, limits), each wait bounded.
CLUSTER_TIMEOUT ?= 21600
CLUSTER := $(WITH_SLURM) timeout --foreground $(CLUSTER_TIMEOUT) $(BUILD_LOCK)
bench-cluster: $(CLUSTER_STAMP)  ## the benchmark on every partition in config/cluster.yaml, gathered into precomputed/bench/
	$(CLUSTER) --target bench_cluster -- --profile profiles/slurm
	$(PY) -m scripts.bench.gather build/bench/*.json --into precomputed/bench

sweep-cluster: $(CLUSTER_STAMP)  ## the serving sweep (and every other rule) as Slurm jobs, then publish like `make site`
	$(CLUSTER) --target data --publish --data-only -- --profile profiles/slurm

anchors-cluster: $(CLUSTER_STAMP)  ## `make anchors` with every job through Slurm (one DAG), then the audits here
	$(CLUSTER) --all-anchors --publish -- --profile profiles/slurm
	$(AUDIT_ANCHORS)

check-stale: $(VENV_STAMP)  ## rebuild the data from the committed inputs in a scratch dir; fail if precomputed/ differs
	$(RECOVER)
	$(PY) -m scripts.record.publish --check

audit: $(VENV_STAMP)  ## check every number on the built page against its provenance (regenerates nothing); ANCHOR=<file> audits that anchor's pages
	$(RECOVER)
	$(PY) -m scripts.audit $(if $(strip $(ANCHOR)),--anchor $(ANCHOR))

bench: $(VENV_STAMP)  ## measure the tiny model on this machine; adds or replaces its record in precomputed/bench/
	$(PY) -m scripts.bench.kv_cache --out-dir precomputed/bench

bench-lab: $(VENV_STAMP) browser-deps  ## the lab's decode step beside PyTorch's, and experiment C's predict-then-run pairs -> build/bench/
	$(PY) -m scripts.bench.lab_steps
	$(PY) -m scripts.bench.lab_predict --pairs $(LAB_PAIRS)

bench-page: $(VENV_STAMP) browser-deps  ## slider latency (median, p95) and Lighthouse mobile/desktop -> build/bench/
	$(PY) -m scripts.bench.page_latency
	$(PY) -m scripts.bench.lighthouse

bench-serving: $(VENV_STAMP)  ## simulator speed (Vidur's comparison point) and the default sweep's cold wall time
	$(PY) -m scripts.serving.bench

# A real engine under load (issue 26): builds or reuses llama-server, writes or reuses the model, calibrates, runs the
# load cells and writes precomputed/serve/; then, calibrated again, the prefix-reuse workloads (issue 42) into
# precomputed/serve-prefix/. Leave the machine idle while it runs. Not part of `make test`.
bench-serving-real: $(VENV_STAMP)  ## llama.cpp's server on this CPU: load runs -> precomputed/serve/, prefix reuse -> precomputed/serve-prefix/
	$(PY) -m scripts.realengine.harness.run
	$(PY) -m scripts.realengine.harness.run --prefix

# The held-out cells (issue 43): aiperf, pinned, in an environment of its own (config/real_engine.json held_out.client),
# then a calibration and the cells into precomputed/serve-heldout/session-$(SESSION)/ (SESSION=2 repeats the whole
# measurement: each cell's sessions give its run-to-run spread). Leave the machine idle while it runs.
AIPERF_ENV := .cache/aiperf-0.13.0
SESSION ?= 1
bench-serving-heldout: $(VENV_STAMP)  ## the same engine driven by aiperf on shapes it was never fitted on -> precomputed/serve-heldout/session-$(SESSION)/
	test -x $(AIPERF_ENV)/bin/aiperf || { python3.11 -m venv $(AIPERF_ENV) && $(AIPERF_ENV)/bin/pip install -q aiperf==0.13.0; }
	$(PY) -m scripts.realengine.harness.run --held-out --session $(SESSION)

lint: $(VENV_STAMP)  ## ruff on the code, actionlint on the CI and Pages workflows
	.venv/bin/ruff check .
	.venv/bin/actionlint .github/workflows/*.yml

dist: $(VENV_STAMP)  ## dist/c13-l5-site-<commit>.tar.gz + SHA256SUMS: the site HEAD builds, byte-identical for one commit
	$(PY) -m scripts.record.dist --check-clean
	$(BUILD_LOCK) --target all --publish -- $(SM_ARGS) $(QUIET) --forcerun render_site
	$(PY) -m scripts.record.dist

PORT ?= 8000
serve:  ## serve the built site/ on http://127.0.0.1:$(PORT)/ (stdlib http.server; Ctrl-C stops it)
	@if [ -x $(PY) ]; then $(RECOVER); fi
	@test -f site/index.html || { echo "error: site/index.html is missing: run \`make site\` first"; exit 1; }
	@echo "serving site/ at http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	@python3 -m http.server $(PORT) --bind 127.0.0.1 --directory site

$(VENV_STAMP): requirements.txt
	@command -v python3.11 >/dev/null || { echo "error: python3.11 not found (the kit needs Python 3.11)"; exit 1; }
	test -x $(PY) || python3.11 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@# an environment made before requirements-cluster.txt has the Slurm plugins in the venv itself: take them out
	$(PY) -m pip uninstall --quiet -y snakemake-executor-plugin-slurm snakemake-executor-plugin-slurm-jobstep 2>/dev/null || true
	rm -f .venv/.installed-*
	touch $@

$(CLUSTER_STAMP): requirements-cluster.txt $(VENV_STAMP)
	rm -rf $(CLUSTER_PLUGINS)
	$(PY) -m pip install --quiet --no-deps --target $(CLUSTER_PLUGINS) -r requirements-cluster.txt
	touch $@

browser-deps:  ## Debian Chromium and CJK fonts for the browser tests (never `playwright install`)
	@if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; fi

clean:
	rm -rf build site site.new site.old dist .snakemake .publish-journal.json .publish
