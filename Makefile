# The two commands of the README:
#   make demo   install what is missing, build, train the tiny model on generated cartoons
#   make test   install what is missing, build, run every test (plus sanitizer and fuzz-smoke configurations)
# Also: make test-quick (ctest -L unit: the quick loop; test-unit runs every label),
# make install PREFIX=... (bin/bridgetune, the Python package, the docs: README.md, "Install").
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The Python of the build (its tests and module: -DBT_PYTHON) and of test-python: Debian's python3 (its torch and
# torchvision are what the tests compare against) when it exists, else python3 on PATH; PYTHON=... picks another.
PYTHON ?= $(shell if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi)
PREFIX ?= /usr/local
# libtorch's intra-op threads are set by bridgetune itself; OpenBLAS must not add its own on top.
export OPENBLAS_NUM_THREADS = 1

.PHONY: deps configure build demo test test-unit test-quick test-python test-asan test-tsan test-fuzz bench install clean

deps:
	@bash scripts/install_deps.sh

# Configuring again rewrites no generated file that a source includes: a second build compiles nothing.
configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBT_DIST_GLOO=ON -DBT_PYTHON=$(PYTHON) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only what the demo runs (the bridgetune program): tests and benchmarks build under `make build` / `make test`.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target bridgetune
	$(BUILD)/bridgetune train --demo --output_dir runs/demo --overwrite_output_dir

# Each phase in turn; a red one does not stop the others, and the end prints each phase's time (scripts/test_phases.sh).
test:
	@bash scripts/test_phases.sh "$(MAKE)" deps build test-unit test-python test-asan test-tsan test-fuzz

# Every test of the build: the labels unit, slow and gpu (skipped without a device) alike.
test-unit:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-quick:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L unit

# The Python module's tests (pytest) with $(PYTHON). Any pytest exit status but 0 fails the target, "no tests
# collected" (5) included.
test-python:
	PYTHONPATH=$(BUILD)/python BT_BUILD_DIR=$(BUILD) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q \
	  -p no:cacheprovider tests/python

# Unit tests of the libtorch-free modules under ASan+UBSan, and the libFuzzer targets: one clang configuration
# (build-asan) serves both, so the torch-free libraries are compiled once for the two (the libraries carry the
# fuzzers' coverage instrumentation, which the tests do not mind). test-asan builds bt_tests (the tests and what
# they run, cmake/bt_tests.cmake), test-fuzz bt_fuzzers; neither builds `all`.
# The sanitizer builds use clang (its ASan+UBSan build of this code compiles in about half gcc's time) with line
# tables only: a report names file and line, without the full debug info's compile time.
SAN_CLANG = CC=clang CXX=clang++ cmake -S . -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBT_WITH_TORCH=OFF \
  -DBT_CUDA=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
SAN_CONFIGURE = $(SAN_CLANG) -B build-asan -DBT_SANITIZE=address,undefined -DBT_FUZZ=ON
test-asan: deps
	$(SAN_CONFIGURE)
	cmake --build build-asan -j $(JOBS) --target bt_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# The threaded loader's tests under ThreadSanitizer: only the tests labelled `threads` are configured and built
# (BT_TEST_LABELS), the rest of the suite runs under ASan.
test-tsan: deps
	$(SAN_CLANG) -B build-tsan -DBT_SANITIZE=thread -DBT_TEST_LABELS=threads
	cmake --build build-tsan -j $(JOBS) --target bt_tests
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L threads

# Every libFuzzer target, briefly, from its seed corpus (a smoke run; run longer by hand with FUZZ_SECONDS), JOBS
# side by side. Only the fuzzers are built (bt_fuzzers), in test-asan's configuration.
FUZZ_SECONDS ?= 15
test-fuzz: deps
	$(SAN_CONFIGURE)
	cmake --build build-asan -j $(JOBS) --target bt_fuzzers
	bash scripts/run_fuzzers.sh build-asan $(FUZZ_SECONDS) $(JOBS)

bench: build
	$(BUILD)/bridgetune bench

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
