# The README's commands. `make test` and `make demo` work on a fresh machine:
# when python3 already has numpy, pytest and setuptools (the GPU machine) they
# are used as they are and nothing is downloaded; otherwise a .venv is made and
# those three are installed into it from the package index.

HAVE_DEPS := $(shell python3 -c "import numpy, pytest, setuptools" >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_DEPS),yes)
PY := python3
VENV_DEP :=
else
PY := .venv/bin/python
VENV_DEP := .venv/.ready
endif

PYTEST_ARGS ?= -q -ra

.PHONY: build test demo bench test-asan gpu-report clean

.venv/.ready:
	python3 -m venv .venv
	.venv/bin/python -m pip install -q --upgrade pip
	.venv/bin/python -m pip install -q numpy pytest setuptools
	touch $@

build: $(VENV_DEP)
	$(PY) setup.py -q build_ext --inplace

test: build
	$(PY) -m pytest $(PYTEST_ARGS) tests

demo: build
	$(PY) docs/tour.py

bench: build
	$(PY) benchmarks/run.py

# On the GPU machine: the suite, the tour and the benchmarks in one go, each
# log kept under $(REPORT) (the device tool's $OUT, for instance).
REPORT ?= reports
gpu-report: build
	mkdir -p $(REPORT)
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $(REPORT)/gpu.txt 2>&1 || true
	-$(PY) -m pytest $(PYTEST_ARGS) tests > $(REPORT)/test.log 2>&1; tail -n 25 $(REPORT)/test.log
	-$(PY) docs/tour.py > $(REPORT)/demo.log 2>&1; tail -n 5 $(REPORT)/demo.log
	-$(PY) benchmarks/run.py > $(REPORT)/bench.log 2>&1; cat $(REPORT)/bench.log

# The CPU suite under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: $(VENV_DEP)
	PYCUDA_SEM_SANITIZE=1 $(PY) setup.py -q build_ext --inplace --force
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD=$$(gcc -print-file-name=libasan.so) \
	    $(PY) -m pytest $(PYTEST_ARGS) -m "not cuda and not multigpu" tests
	$(PY) setup.py -q build_ext --inplace --force

clean:
	rm -rf build pycuda_sem/*.so .venv
