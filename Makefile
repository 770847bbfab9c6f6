# tracekit: thin wrapper over CMake. `make demo`, `make check`, `make bench`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo check check-unit bench clean format fuzz check-asan

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Fuzzing (fuzz/, docs/robustness.md): libFuzzer targets built with clang, ASan and UBSan.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 60
FUZZ_CHECK_RUNS ?= 20000
FUZZ_TARGETS ?=
TESTDATA ?= $(abspath ../shared/testdata)

# Every fuzz target for FUZZ_SECONDS each (FUZZ_TARGETS: only these); the corpus grows in
# $(FUZZ_BUILD)/corpus, crashes land in $(FUZZ_BUILD)/artifacts.
fuzz:
	cmake -S . -B $(FUZZ_BUILD) -DTK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DBUILD_TESTING=OFF \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTK_TESTDATA=$(TESTDATA)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	FUZZ_EXTRA_ARGS="$(FUZZ_EXTRA_ARGS)" bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(TESTDATA) $(FUZZ_TARGETS)

# The whole test suite under ASan+UBSan, then each fuzz target for FUZZ_CHECK_RUNS inputs from a
# fixed seed (at most FUZZ_CHECK_SECONDS), so that CI runs are repeatable; the fuzzers run even
# if a test failed; the target fails if either did.
check-asan:
	cmake -S . -B build-asan -DTK_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS); t=$$?; \
	    $(MAKE) -C $(CURDIR) fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS) \
	        FUZZ_EXTRA_ARGS="-seed=1 -runs=$(FUZZ_CHECK_RUNS)"; f=$$?; \
	    test $$t -eq 0 -a $$f -eq 0

bench: deps
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
	cmake --build build-bench -j $(JOBS)
	@bash bench/run.sh build-bench

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) build-bench build-asan
