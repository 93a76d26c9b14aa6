# bobc: the two commands a fresh machine needs are
#   make setup build   -> .venv with bobc, then ./bob-host from the bundled Bob example
#   make test          -> the whole test suite (GPU tests skip without a GPU)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.bobc-installed
TARGET ?= sm_90
PLAN   ?= examples/bob/Bob/Build/NativeHost.bob

.PHONY: setup build images test golden bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@echo "setup: creating $(VENV) (Python virtual environment)"
	$(PYTHON) -m venv $(VENV)
	@echo "setup: installing bobc and its test tools into $(VENV) (a few minutes the first time)"
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)
	@echo "setup: done; use $(BIN)/bobc, or '. $(BIN)/activate' to put bobc on PATH"

# The main job: the bundled Bob plan compiled into a native host.
build: $(STAMP)
	$(BIN)/bobc build $(PLAN) --target $(TARGET) -o bob-host

# Bob's device images for both targets, for reading with `bobc dump` (out/ is made here:
# bobc writes into an existing folder only).
images: $(STAMP)
	mkdir -p out
	$(BIN)/bobc build $(PLAN) --target sm_86 --emit-images out/images-sm_86
	$(BIN)/bobc build $(PLAN) --target sm_90 --emit-images out/images-sm_90

# --durations=30: the 30 slowest setups and tests close the transcript (README "Running the tests
# faster"); JOBS=N runs them on N pytest-xdist workers (`make test JOBS=2`), one process by default
test: $(STAMP)
	$(BIN)/python -m pytest -q --durations=30 $(if $(JOBS),-n $(JOBS)) tests

# Regenerate the golden images (kernels, then Bob's whole-program images), printing
# what changed field by field; commit them only with the reason for the change.
golden: $(STAMP)
	$(BIN)/python -m bobc.sass.golden
	$(BIN)/python tests/golden/regenerate.py

# Results go to out/bench/ (not version controlled); `bench/run.py --out bench/results` publishes.
bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf out bob-host build .pytest_cache
