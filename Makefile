# Convenience entry points over CMake (see README.md).
#   make example   install deps, build, dump the bundled example trace, profile
#                  the bundled program (scripts/example.sh)
#   make test      install deps, build (plain and ASan+UBSan), run all tests;
#                  then the profiler's tests again in a build by clang
#   make fuzz      run the reader fuzzer for FUZZ_SECONDS (default 60), then the
#                  writer/reader round-trip fuzzer and the commands' fuzzer
#                  for a third of that each
BUILD ?= build
ASAN_BUILD ?= build-asan
CLANG_BUILD ?= build-clang
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60

.PHONY: all deps build build-asan build-clang example test test-plain test-asan test-clang fuzz bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMT_SANITIZE=ON -DMT_BUILD_BENCH=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The preload library and the profiler's test programs built by clang: its
# code generation (allocations it drops, loops it unrolls, its sanitizer
# runtime linked into the program) broke tests that gcc's builds passed.
build-clang: deps
	CC=clang CXX=clang++ cmake -S . -B $(CLANG_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMT_BUILD_BENCH=OFF >/dev/null
	cmake --build $(CLANG_BUILD) -j $(JOBS)

example: build
	scripts/example.sh $(BUILD)

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

test-clang: build-clang
	cd $(CLANG_BUILD) && ctest --output-on-failure -j $(JOBS) -L profiler

test: test-plain test-asan test-clang

fuzz: deps
	fuzz/run.sh $(FUZZ_SECONDS) fuzz_reader
	third=$$(( $(FUZZ_SECONDS) / 3 )); fuzz/run.sh $$(( third > 0 ? third : 1 )) fuzz_roundtrip
	third=$$(( $(FUZZ_SECONDS) / 3 )); fuzz/run.sh $$(( third > 0 ? third : 1 )) fuzz_commands

bench: deps
	bench/run.sh

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(CLANG_BUILD) build-fuzz build-bench
