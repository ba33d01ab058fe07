# Convenience entry points over CMake (see README.md).
#   make example   install deps, build, dump the bundled example trace
#   make test      install deps, build (plain and ASan+UBSan), run all tests
#   make fuzz      run the reader fuzzer for FUZZ_SECONDS (default 60), then the
#                  writer/reader round-trip fuzzer and the commands' fuzzer
#                  for half as long each
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60

.PHONY: all deps build build-asan example test test-plain test-asan fuzz bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMT_SANITIZE=ON -DMT_BUILD_BENCH=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

example: build
	$(BUILD)/memtrace dump examples/example.ctf

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

test: test-plain test-asan

fuzz: deps
	fuzz/run.sh $(FUZZ_SECONDS) fuzz_reader
	half=$$(( $(FUZZ_SECONDS) / 2 )); fuzz/run.sh $$(( half > 0 ? half : 1 )) fuzz_roundtrip
	half=$$(( $(FUZZ_SECONDS) / 2 )); fuzz/run.sh $$(( half > 0 ? half : 1 )) fuzz_commands

bench: deps
	bench/run.sh

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz build-bench
