# hotkeylab: two commands for a newcomer (`make lab`, `make test`), plus helpers.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp
NBVAL   = --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: lab test test-hostile test-browser test-db db-lab stack-lab test-stack verdicts unit nbval notebooks lint bench book clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[dev]"
	touch $(STAMP)

## make lab: set up .venv if needed and open JupyterLab on notebooks/
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/ $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

## make test: set up .venv if needed, lint, unit tests, then nbval over every notebook
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest tests notebooks $(NBVAL)

## make test-hostile: every model at the ends of its declared ranges, in memory- and time-limited children (#20; ~4 min on a quiet machine)
test-hostile: $(STAMP)
	$(PY) -m pytest -q tests/hostile_contract_bounds.py

## make test-browser: JupyterLab driven by Playwright in Debian's chromium (installed if missing)
test-browser: $(STAMP)
	test -x /usr/bin/chromium || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
	$(PY) -m pytest tests/browser -v

## make test-db: the live-database tests only (a private MariaDB; fails, not skips, without mariadbd)
test-db: $(STAMP)
	HOTKEYLAB_REQUIRE_DB=1 $(PY) -m pytest tests/test_db_lab.py -v

## make db-lab: measure the hot row on a private MariaDB (needs mariadb-server, 3-4 min) and
## rewrite hotkeylab/data/db_lab_runs.csv and db_lab_trace.csv, which notebook 01b reads
db-lab: $(STAMP)
	$(PY) -m hotkeylab.db_lab

## make stack-lab: measure 04b's four turns on a real stack (MariaDB + gRPC servers + load generator,
## about 11 min) and rewrite hotkeylab/data/stack_lab_*.csv, which notebook 04b reads
## (more repeats of some turns, kept beside the stored runs: .venv/bin/python -m hotkeylab.stack_lab
##  --turns degrade --repeats 3 --append)
stack-lab: $(STAMP)
	$(PY) -m hotkeylab.stack_lab

## make test-stack: 04b's live tests (fail, not skip, without mariadbd), about 2.5 min
test-stack: $(STAMP)
	HOTKEYLAB_REQUIRE_DB=1 $(PY) -m pytest tests/test_stack_lab.py -v

## make verdicts: run every experiment notebooks 04/04a state a verdict for, over 20 seeds
## (about 8 min on 2 cores), and rewrite hotkeylab/data/verdicts_04.csv, which they read
verdicts: $(STAMP)
	$(PY) -m hotkeylab.metastable.verdicts

unit: $(STAMP)
	$(PY) -m pytest tests

nbval: $(STAMP)
	$(PY) -m pytest notebooks $(NBVAL)

## make notebooks: re-execute every notebook in place, top to bottom, fresh kernel
notebooks: $(STAMP)
	for nb in notebooks/*.ipynb; do \
	  echo "executing $$nb"; \
	  $(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 "$$nb" || exit 1; \
	done

lint: $(STAMP)
	$(VENV)/bin/ruff check .

## make bench: print speed ratios measured in one run
bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

## make book: a static site of every notebook from its stored outputs (offline), in _build/book
book: $(STAMP)
	rm -rf _build/src && mkdir -p _build/src
	cp book/_config.yml book/_toc.yml _build/src/
	cp -r notebooks _build/src/notebooks
	$(VENV)/bin/jupyter-book build _build/src --path-output _build/book -q
	@echo "open _build/book/_build/html/index.html"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache _build
