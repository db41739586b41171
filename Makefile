# The two commands of the README:
#   make demo   install what is missing, build, train the tiny model on generated cartoons
#   make test   install what is missing, build, run every test (plus sanitizer and fuzz-smoke configurations)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The Python of the module's tests: Debian's python3 (its torch/torchvision are what they compare against) when it
# exists, else python3 on PATH; PYTHON=... picks another.
PYTHON ?= $(shell if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi)
PREFIX ?= /usr/local
# libtorch's intra-op threads are set by bridgetune itself; OpenBLAS must not add its own on top.
export OPENBLAS_NUM_THREADS = 1

.PHONY: deps build demo test test-unit test-python test-asan test-tsan test-fuzz bench clean

deps:
	@bash scripts/install_deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBT_DIST_GLOO=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bridgetune train --output_dir runs/demo --overwrite_output_dir

test: build test-unit test-python test-asan test-tsan test-fuzz

test-unit:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The Python module's tests (pytest) with $(PYTHON). Any pytest exit status but 0 fails the target, "no tests
# collected" (5) included.
test-python:
	PYTHONPATH=$(BUILD)/python BT_BUILD_DIR=$(BUILD) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q \
	  -p no:cacheprovider tests/python

# Unit tests of the libtorch-free modules under ASan+UBSan.
test-asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBT_WITH_TORCH=OFF -DBT_CUDA=OFF \
	  -DBT_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# The threaded loader's tests under ThreadSanitizer.
test-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBT_WITH_TORCH=OFF -DBT_CUDA=OFF \
	  -DBT_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L threads

# Every libFuzzer target, briefly, from its seed corpus (a smoke run; run longer by hand with FUZZ_SECONDS).
FUZZ_SECONDS ?= 15
test-fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBT_WITH_TORCH=OFF \
	  -DBT_CUDA=OFF -DBT_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build build-fuzz -j $(JOBS)
	bash scripts/run_fuzzers.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bridgetune bench

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
