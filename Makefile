# mecha: `make demo` and `make test` do all set-up on a fresh Debian 12 machine.
#
#   make demo              installs what the build needs, builds mecha, runs the demo
#   make test              the release build and every test, once (LABEL=unit runs a slice:
#                          unit, e2e, sandbox or service)
#   make check             make test, then the ASan/UBSan build and its tests, then the
#                          fuzzers: what CI runs
#   make bench             the benchmarks (bench/), built on demand
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
LABEL      ?=
CMAKE_GEN  := -G Ninja
CTEST_ARGS := --output-on-failure -j $(JOBS) $(if $(LABEL),-L '$(LABEL)')

.PHONY: all setup setup-tests configure mecha build test test-asan fuzz check demo bench \
        format format-check clean

all: build

setup:
	@scripts/setup

setup-tests:
	@scripts/setup --for tests

$(BUILD)/build.ninja: | setup
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

configure: setup $(BUILD)/build.ninja

# mecha and the programs it runs (mecha-gateway): what the demo and a user need.
mecha: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mecha

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: setup-tests build
	@ctest --test-dir $(BUILD) $(CTEST_ARGS)

# Every test again under AddressSanitizer and UBSan (a Debug build). The tests that drive
# other projects' servers (PostgreSQL, Slurm, Chromium) skip here, each saying so.
test-asan: setup-tests
	@cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DMECHA_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) $(CTEST_ARGS)

fuzz: setup-tests
	@scripts/fuzz-smoke

check: test test-asan fuzz

demo: mecha
	@scripts/demo

bench: setup-tests
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMECHA_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@scripts/bench

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cc' | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
