# Entry points of the book. Every target runs in .venv, made from requirements.txt on
# first use (and refreshed when requirements.txt changes).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
# npm ci writes node_modules/.package-lock.json: the browser test's axe-core, as pinned.
NODE_STAMP := node_modules/.package-lock.json
FIGURE_MODULES := $(subst /,.,$(basename $(sort $(wildcard tools/figures/*.py))))

.PHONY: book html test test-fast bench save figures publish readers machines clean venv node

book: $(STAMP)
	$(PY) -m tools build

# The authoring loop: the book built as by `make book`, but rendered quickly (Sphinx
# reads again only the pages that changed, reusing its environment; in full where the
# configuration, toc, templates, render code or d2l_mini changed) and without PDFs.
# The HTML it makes is not what `make book`, CI and publishing take: they render in full.
html: $(STAMP)
	$(PY) -m tools build --quick

# The whole suite, as CI runs it: the linter and the formatter's check first (seconds),
# then the book is built (every notebook of both
# frameworks executed, the HTML rendered with warnings as errors), then pytest checks
# the built artefacts, the unit and parity tests and the browser behaviour. The build
# inside pytest finds everything up to date and re-executes nothing. The browser test
# checks every page with axe-core, installed from package-lock.json. Two pytest-xdist
# processes, a test file (or class) each at a time. The readers' slice (the tests marked
# `minutes`, much of it waiting on pip) needs no build: it runs beside the build, its
# output in $(SLICE_LOG), printed at the end; the target fails if either part fails.
# pytest ends with its 15 slowest tests, where the suite's time goes.
SLICE_LOG := _build/readers-slice.log
test: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	@mkdir -p _build
	@$(PY) -m pytest -m minutes -p no:cacheprovider > $(SLICE_LOG) 2>&1 & slice=$$!; \
	echo "readers' slice: running beside the build, in $(SLICE_LOG)"; \
	$(PY) -m tools build && \
	$(PY) -m pytest -m 'not minutes' --numprocesses 2 --dist loadscope --no-loadscope-reorder \
		--durations 15; \
	status=$$?; \
	[ $$status -eq 0 ] || kill $$slice 2>/dev/null; \
	wait $$slice; slice_status=$$?; \
	echo "== the readers' slice (ran beside the build)"; cat $(SLICE_LOG); \
	[ $$status -eq 0 ] && [ $$slice_status -eq 0 ]

# The edit loop: the linter and the formatter's check, then the tests that start no
# Jupyter kernel, build nothing and open no browser (unit, parity, the pipeline's pieces),
# in two processes (pytest-xdist), a test file per process at a time.
LINTED := d2l_mini tools tests benchmarks
test-fast: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(PY) -m pytest -m "not slow and not browser" --numprocesses 2 --dist loadfile

bench: $(STAMP)
	$(PY) -m benchmarks

# Copy the book's #@save cells into d2l_mini/torch.py and d2l_mini/jax.py.
save: $(STAMP)
	$(PY) -m tools save

# Regenerate the schematic figures in book/img (each script is deterministic).
figures: $(STAMP)
	@for module in $(FIGURE_MODULES); do echo "$(PY) -m $$module"; $(PY) -m $$module || exit 1; done

# Push the built HTML to gh-pages and the notebooks to the notebooks branch of a git
# remote (python -m tools publish): `make publish ARGS="--remote ../book.git"`,
# `make publish ARGS="--dry-run /tmp/published"`. Run after `make book`, on a clean commit.
publish: $(STAMP)
	$(PY) -m tools publish $(ARGS)

# The readers' matrix (python -m tools readers): publish to a local bare repository, then
# run the published notebooks in fresh virtual environments without the project (bare,
# lowest and newest versions) and print the table. Run after `make book`, on a clean
# commit; `make readers ARGS="--environments lowest-jax --notebooks jax/how-to-use"`.
readers: $(STAMP)
	$(PY) -m tools readers $(ARGS)

# The run that stands for other machines (python -m tools machines): every notebook of
# both frameworks again, under the build's numerics, CPU kernels capped at AVX2, one
# compute thread, and kernels without fused multiply-add; prints each claim's values and
# the margin its window leaves, tightest first (the whole table: _build/machines/).
# `make machines ARGS="--environments build one-thread book/transformer-block/vit.md"`.
machines: $(STAMP)
	$(PY) -m tools machines $(ARGS)

# Build products only: downloaded data (data/) stays.
clean:
	rm -rf _build

venv: $(STAMP)

node: $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -r requirements.txt
	@touch $@
