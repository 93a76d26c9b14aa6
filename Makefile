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
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job: the bundled Bob plan compiled into a native host.
build: $(STAMP)
	$(BIN)/bobc build $(PLAN) --target $(TARGET) -o bob-host

# Bob's device images for both targets, for reading with `bobc dump`.
images: $(STAMP)
	$(BIN)/bobc build $(PLAN) --target sm_86 --emit-images out/images-sm_86
	$(BIN)/bobc build $(PLAN) --target sm_90 --emit-images out/images-sm_90

test: $(STAMP)
	$(BIN)/python -m pytest -q tests

# Regenerate the golden images (kernels, then Bob's whole-program images), printing
# what changed field by field; commit them only with the reason for the change.
golden: $(STAMP)
	$(BIN)/python -m bobc.sass.golden
	$(BIN)/python tests/golden/regenerate.py

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf out bob-host build .pytest_cache
