# C13-L5 lesson kit. Two commands matter: `make site` and `make test` (both set everything up).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
SNAKEMAKE := .venv/bin/snakemake --cores 2 --rerun-incomplete --scheduler greedy
QUIET := --quiet rules
VENV_STAMP := .venv/.installed-$(shell sha256sum requirements.txt | cut -c1-16)
export PYTHONHASHSEED := 0


.PHONY: site data publish test check-stale audit bench bench-page bench-serving lint dist serve browser-deps clean

site: data publish  ## build the lesson page (site/index.html) and publish fresh data into precomputed/
	$(SNAKEMAKE) all $(QUIET)
	$(SNAKEMAKE) all --report site/report.html >/dev/null 2>&1 || echo "warning: snakemake --report failed"
	@echo "site: $$(du -b site/index.html | cut -f1) bytes in site/index.html"

data: $(VENV_STAMP)  ## regenerate every derived file under build/precomputed/
	$(SNAKEMAKE) data $(QUIET)

publish: $(VENV_STAMP)
	$(PY) -m scripts.record.publish

test: $(VENV_STAMP) browser-deps data check-stale  ## all tests, the audit and the linter
	$(SNAKEMAKE) all $(QUIET)
	$(PY) -m pytest
	$(PY) -m scripts.audit
	.venv/bin/ruff check .
	.venv/bin/actionlint .github/workflows/*.yml

check-stale: $(VENV_STAMP)  ## fail when committed precomputed/ differs from a fresh build
	$(PY) -m scripts.record.publish --check

audit: $(VENV_STAMP)  ## check every number on the built page against its provenance (regenerates nothing)
	$(PY) -m scripts.audit

bench: $(VENV_STAMP)  ## measure the tiny model on this machine; adds or replaces its record in precomputed/bench/
	$(PY) -m scripts.bench.kv_cache --out-dir precomputed/bench

bench-page: $(VENV_STAMP) browser-deps  ## slider move -> all readouts and charts updated, in the browser (median, p95)
	$(PY) -m scripts.page.bench_page

bench-serving: $(VENV_STAMP)  ## simulator speed (Vidur's comparison point) and the default sweep's cold wall time
	$(PY) -m scripts.serving.bench

lint: $(VENV_STAMP)  ## ruff on the code, actionlint on the CI and Pages workflows
	.venv/bin/ruff check .
	.venv/bin/actionlint .github/workflows/*.yml

dist: site  ## dist/c13-l5-site-<commit>.tar.gz + SHA256SUMS: the deployable site, byte-identical for one commit
	$(PY) -m scripts.record.dist

PORT ?= 8000
serve:  ## serve the built site/ on http://127.0.0.1:$(PORT)/ (stdlib http.server; Ctrl-C stops it)
	@test -f site/index.html || { echo "error: site/index.html is missing: run \`make site\` first"; exit 1; }
	@echo "serving site/ at http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	@python3 -m http.server $(PORT) --bind 127.0.0.1 --directory site

$(VENV_STAMP): requirements.txt
	@command -v python3.11 >/dev/null || { echo "error: python3.11 not found (the kit needs Python 3.11)"; exit 1; }
	test -x $(PY) || python3.11 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	rm -f .venv/.installed-*
	touch $@

browser-deps:  ## Debian Chromium and CJK fonts for the browser tests (never `playwright install`)
	@if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; fi

clean:
	rm -rf build site dist .snakemake
