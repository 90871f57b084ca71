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

.PHONY: build test demo bench lint check-errors test-asan sanitize gpu-report clean fuzz fuzz-build

.venv/.ready:
	python3 -m venv .venv
	.venv/bin/python -m pip install -q --upgrade pip
	.venv/bin/python -m pip install -q numpy pytest setuptools hypothesis
	touch $@

build: $(VENV_DEP)
	$(PY) setup.py -q build_ext --inplace

test: build
	$(PY) -m pytest $(PYTEST_ARGS) tests

demo: build
	$(PY) docs/tour.py

bench: build
	$(PY) benchmarks/run.py

# Static checks, not part of `make test` (they need clang-tidy, which CI does
# not have). `make lint` runs clang-tidy with the checks in .clang-tidy over
# every C file under csrc/, in parallel, and fails on any finding; it then
# runs tools/check_errors.py, the exception-convention checker. The include
# paths are the build's: csrc and each folder under it that holds headers,
# CUDA's (next to nvcc), Python's and NumPy's, from the interpreter in use.
CLANG_TIDY ?= $(shell command -v clang-tidy-14 || command -v clang-tidy)
LINT_JOBS ?= $(shell nproc 2>/dev/null || echo 4)
LINT_SRCS = $(shell find csrc -name '*.c' | sort)
LINT_CUDA = $(shell d=$$(command -v nvcc) && dirname $$(dirname $$(readlink -f $$d)) || echo /usr/local/cuda)
LINT_INCS = -Icsrc $(addprefix -I,$(filter-out csrc,$(sort $(patsubst %/,%,$(dir $(shell find csrc -name '*.h')))))) \
	-I$(LINT_CUDA)/include \
	-I$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])') \
	-I$(shell $(PY) -c 'import numpy; print(numpy.get_include())')
LINT_FLAGS = -std=c11 -DPY_SSIZE_T_CLEAN $(LINT_INCS)

lint: $(VENV_DEP)
	@test -n "$(CLANG_TIDY)" || { echo "make lint: clang-tidy not found (apt-get install clang-tidy)"; exit 2; }
	@echo "clang-tidy over $(words $(LINT_SRCS)) files"
	@mkdir -p build
	@printf '%s\n' $(LINT_SRCS) | xargs -P $(LINT_JOBS) -I{} \
	    $(CLANG_TIDY) --quiet {} -- $(LINT_FLAGS) > build/lint.log 2>&1; st=$$?; \
	  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$$' build/lint.log; \
	  if [ $$st -ne 0 ]; then echo "make lint: clang-tidy findings (log: build/lint.log)"; exit 1; fi
	@echo "clang-tidy: no findings"
	$(PY) tools/check_errors.py

check-errors: $(VENV_DEP)
	$(PY) tools/check_errors.py

# compute-sanitizer over the GPU tests (on the GPU machine). For each tool:
# every process's ERROR SUMMARY, the reports counted by kernel (ours and the
# libraries'), the pytest summary; the whole log, compressed, under $(REPORT).
# Left out: test_faults.py (its kernels fault on purpose), and the soak and
# notebook tests (hours under instrumentation). API errors are not reported:
# the bad-input and out-of-memory tests provoke them on purpose, and each is
# checked as a Python exception by the suite itself. Two tests cannot hold
# under a sanitizer, which runs kernels one at a time and gives child
# processes its own device list: one needs a stream to be still busy, the
# other an empty CUDA_VISIBLE_DEVICES in a child.
SAN_TOOLS ?= memcheck racecheck synccheck initcheck
SAN_SKIP := not test_cublas_runs_on_current_stream and not test_cuda_visible_devices_honoured
SAN_TESTS ?= -m cuda -k "$(SAN_SKIP)" --ignore=tests/test_faults.py --ignore=tests/test_notebooks.py \
	--ignore=tests/test_leaks.py tests
SAN_TIMEOUT ?= 3000
# initcheck checks device-side reads only: its host-API check counts pinned
# host memory as never written (it cannot see the CPU's stores), so every
# copy out of a pinned buffer that the CPU filled would be reported.
SAN_INITCHECK ?= --check-api-memory-access no
SAN_BY_KERNEL := /Race reported between/ { n = $$0; sub(/.* access at /, "", n); sub(/\+0x.*/, "", n); c[n]++ } \
	/^=========     at / { n = $$0; sub(/^=========     at (void )?/, "", n); sub(/[<(+].*/, "", n); c[n]++ } \
	END { for (k in c) print "   reports in", k ":", c[k] }
sanitize: build
	mkdir -p $(REPORT)
	for t in $(SAN_TOOLS); do \
	  rm -rf /tmp/pcs-san-$$t && mkdir -p /tmp/pcs-san-$$t; \
	  o=""; [ $$t = initcheck ] && o="$(SAN_INITCHECK)"; \
	  timeout $(SAN_TIMEOUT) compute-sanitizer --tool $$t $$o --report-api-errors no --target-processes all \
	    --show-backtrace no --print-limit 1000000 --log-file /tmp/pcs-san-$$t/%p.log \
	    $(PY) -m pytest -q -p no:cacheprovider $(SAN_TESTS) > /tmp/pcs-san-$$t/pytest.txt 2>&1; \
	  echo "== $$t: $$(grep -h 'SUMMARY' /tmp/pcs-san-$$t/*.log | sort | uniq -c | tr -s ' ')"; \
	  cat /tmp/pcs-san-$$t/*.log | awk '$(SAN_BY_KERNEL)'; \
	  tail -n 1 /tmp/pcs-san-$$t/pytest.txt; \
	  cat /tmp/pcs-san-$$t/*.log /tmp/pcs-san-$$t/pytest.txt | gzip > $(REPORT)/sanitize-$$t.log.gz; \
	done

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
	rm -rf build build-fuzz pycuda_sem/*.so .venv

# ---- fuzzing (issue 18) -----------------------------------------------------
# `make fuzz` runs fuzz/programs.py's program interpreter for FUZZ_SECONDS.
# FUZZ_ENGINE=atheris (the default where atheris and clang are present):
# coverage-guided, over an ASan + libFuzzer-instrumented copy of the extension
# built with clang into build-fuzz/ (the normal build is untouched; the nvcc
# objects are reused). FUZZ_ENGINE=random (the default elsewhere, e.g. the GPU
# machine): seeded random programs, each in a forked child, over the normal
# build. Either way the corpus stays in fuzz/corpus/ and every input that
# kills the interpreter or raises SystemError lands in fuzz/crashes/, which
# tests/test_fuzz_regressions.py replays.
FUZZ_SECONDS ?= 600
FUZZ_CLANG ?= clang
FUZZ_ENGINE ?= $(shell $(PY) -c "import atheris" >/dev/null 2>&1 && command -v $(FUZZ_CLANG) >/dev/null && echo atheris || echo random)
FUZZ_DIR := build-fuzz
FUZZ_PKG := $(FUZZ_DIR)/pkg
# libFuzzer merged into the ASan runtime, as atheris' own setup does: preloading
# plain ASan would shadow libFuzzer's coverage callbacks with its weak stubs.
FUZZ_RT := $(FUZZ_DIR)/asan_with_fuzzer.so
# protect_shadow_gap=0: the CUDA driver maps memory in ASan's shadow gap.
# max_allocation_size_mb: a hostile size fails at once instead of paging.
FUZZ_ASAN ?= detect_leaks=0:protect_shadow_gap=0:allocator_may_return_null=1:max_allocation_size_mb=2048:symbolize=1
FUZZ_FLAGS ?= -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=30 -rss_limit_mb=6144 -max_len=512

$(FUZZ_RT):
	mkdir -p $(FUZZ_DIR)/rt
	cp $$($(FUZZ_CLANG) -print-file-name=libclang_rt.asan-x86_64.a) $(FUZZ_DIR)/rt/asan.a
	ar d $(FUZZ_DIR)/rt/asan.a asan_preinit.cc.o asan_preinit.cpp.o 2>/dev/null || true
	$(FUZZ_CLANG)++ -Wl,--whole-archive $$($(FUZZ_CLANG) -print-file-name=libclang_rt.fuzzer_no_main-x86_64.a) \
	    $(FUZZ_DIR)/rt/asan.a -Wl,--no-whole-archive -lpthread -ldl -shared -o $@

fuzz-build: $(VENV_DEP) $(FUZZ_RT)
	mkdir -p $(FUZZ_DIR)/temp/csrc/kernels
	-cp -n -p build/temp.*/csrc/kernels/*.o $(FUZZ_DIR)/temp/csrc/kernels/ 2>/dev/null
	CC=$(FUZZ_CLANG) LDSHARED="$(FUZZ_CLANG) -shared" PYCUDA_SEM_FUZZ=1 \
	    $(PY) setup.py -q build_ext --build-temp $(FUZZ_DIR)/temp --build-lib $(FUZZ_DIR)/lib
	rm -rf $(FUZZ_PKG) && mkdir -p $(FUZZ_PKG)
	cp -r pycuda_sem $(FUZZ_PKG)/ && rm -f $(FUZZ_PKG)/pycuda_sem/*.so
	cp $(FUZZ_DIR)/lib/pycuda_sem/*.so $(FUZZ_PKG)/pycuda_sem/

ifeq ($(FUZZ_ENGINE),atheris)
fuzz: fuzz-build
	mkdir -p fuzz/corpus fuzz/crashes
	PYCUDA_SEM_FUZZ_PKG=$(FUZZ_PKG) ASAN_OPTIONS=$(FUZZ_ASAN) LD_PRELOAD=$(abspath $(FUZZ_RT)) PYTHONMALLOC=malloc \
	    $(PY) fuzz/fuzz_api.py $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=fuzz/crashes/ fuzz/corpus
else
fuzz: build
	mkdir -p fuzz/crashes
	$(PY) fuzz/run_random.py --seconds $(FUZZ_SECONDS) --crashes fuzz/crashes
endif
