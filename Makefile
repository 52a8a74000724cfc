# Thin wrapper around CMake (the build itself is in CMakeLists.txt).
#
#   make            build/: libstreamfat.a, streamfat (CLI), tests and helpers (-O2)
#   make asan       build-asan/: the same with AddressSanitizer + UBSan (-O1 -g)
#   make check      install missing tools (scripts/deps.sh), build build-asan/, run ctest
#                   there (unit tests, script tests, ARM core build); CTEST_ARGS=... passes
#                   options to ctest, e.g. CTEST_ARGS='-R unit_' or CTEST_ARGS='-L script';
#                   CTEST_PARALLEL (default 3) tests at a time. Then the skip policy
#                   (scripts/skip_policy.py): the tests that did not run (exit 77) are
#                   listed, and with CI=true any not in tests/allowed-skips.txt fails
#   make check-long  the same with SF_LONG=1: the heavy cases as well
#   make test-quick  build-asan/ (incremental), then ctest -L quick there: the unit tests
#                   and one smoke test per command, for the edit loop (docs/TESTING.md)
#   make soak       build/, then SOAK_SECONDS (default 3600) of cyclic logging with rotation on
#                   a RAM volume: memory, descriptors and time per file must not grow
#   make arm        build-arm/libstreamfat-core.a for Cortex-M4 and its size
#   make size       code size and stack per feature set on Cortex-M4, linked as a firmware
#                   would (scripts/size.sh; build-arm/size/; docs/BENCHMARKS.md "Code size")
#   make demo       build/, then `streamfat demo` in DEMO_DIR (default build/demo) and
#                   fsck.exfat -n on the image it made; needs cmake, cc, pkg-config and
#                   zlib's headers (says so if missing; make check installs them)
#
#   Every target that builds (make, asan, test-quick, demo, install, fuzz, hw-*, soak, ...)
#   prints one line per optional feature that is off (libcjson-dev, liburing-dev,
#   libdeflate-dev) and finds a library installed since its tree was configured at its
#   next build (CMakeLists.txt, "Optional libraries"): no target depends on deps.sh
#   having run first.
#   make hw-sd      the SD-over-SPI logger (examples/sd-spi, drivers/sd_spi) on QEMU's
#                   lm3s6965evb: builds it, makes HW_BUILD/sd.img (4 GiB SDHC, FAT32) and
#                   sd256.img (256 MiB SDSC, FAT16), runs it on both, checks them with
#                   fsck.fat and streamfat export, then no card and a failing card
#                   (scripts/hw_sd.sh)
#   make install    PREFIX=/usr/local, DESTDIR honoured: lib, headers, streamfat.pc, CLI
#   make bench      bench/run.sh if it exists
#   make fuzz       build/ (for the seeds) and build-fuzz/ (clang, libFuzzer, ASan, UBSan),
#                   then each fuzz target for FUZZ_SECONDS (default 600) s; the corpus grows
#                   in build-fuzz/corpus/ from run to run (fuzz/run.sh, fuzz/README.md)
#   make hw-nvme    build/, then examples/nvme (bare-metal AArch64, clang, drivers/nvme) on
#                   QEMU's virt board with an emulated NVMe SSD: 256 MiB streamed, a rotated
#                   CAN log, checked on the host (scripts/hw_nvme.sh; outputs in build-hw/)
#   make compare    BASE=REF [HEAD_REF=HEAD]: tests/compare/run.sh, the CLIs of two commits
#                   built in temporary worktrees on the same seeded workloads: outputs,
#                   images and device write traces compared (not part of make check)
#   make clean      remove every build directory: build/, build-asan/, build-arm/,
#                   build-fuzz/ and build-hw/ (make hw-sd, make hw-nvme)

BUILD      ?= build
ASAN_BUILD ?= build-asan
ARM_BUILD  ?= build-arm
PREFIX     ?= /usr/local
DEMO_DIR   ?= $(BUILD)/demo
JOBS       ?= 2
CMAKE      ?= cmake
CTEST      ?= ctest
CTEST_ARGS ?=
# Three tests at a time on 2 cores: at two, a quarter of the cores' time went idle while
# tests waited (fsck, FUSE, qemu, sleeps, I/O); docs/TESTING.md.
CTEST_PARALLEL ?= 3
ALLOWED_SKIPS ?= tests/allowed-skips.txt
# ctest, then the skip policy on its JUnit results; ctest's exit status wins if it failed
RUN_CTEST = rc=0; $(CTEST) --test-dir $(ASAN_BUILD) --output-on-failure -j $(CTEST_PARALLEL) \
	--output-junit $(abspath $(ASAN_BUILD))/ctest-junit.xml $(CTEST_ARGS) || rc=$$?; \
	python3 scripts/skip_policy.py $(ASAN_BUILD)/ctest-junit.xml $(ALLOWED_SKIPS) || \
	{ p=$$?; [ $$rc -ne 0 ] || rc=$$p; }; exit $$rc
FUZZ_BUILD ?= build-fuzz
HW_BUILD   ?= build-hw
FUZZ_SECONDS ?= 600

.PHONY: all build asan check check-long test-quick deps arm size demo install bench fuzz clean soak
.PHONY: compare hw-nvme

all: build

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

# After each build: one line per optional feature that is off and the package that turns it
# on (CMakeLists.txt writes features-off.txt; a tree re-detects a missing library at its
# next build once the package is installed, so no target needs a fresh configure).
FEATURES_OFF = cat $(1)/features-off.txt 2>/dev/null || true

build: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)
	@$(call FEATURES_OFF,$(BUILD))

$(ASAN_BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(ASAN_BUILD) -DSF_SANITIZE=ON

asan: $(ASAN_BUILD)/CMakeCache.txt
	$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	@$(call FEATURES_OFF,$(ASAN_BUILD))

deps:
	bash scripts/deps.sh
	bash scripts/pyenv.sh

# pyenv.sh (pip, mostly one core) runs beside the build (-j JOBS) instead of before it.
DEPS_AND_ASAN = bash scripts/deps.sh && { bash scripts/pyenv.sh & py=$$!; \
	$(MAKE) asan; rc=$$?; wait $$py; exit $$rc; }

check:
	@$(DEPS_AND_ASAN)
	@rm -f $(ASAN_BUILD)/ctest-junit.xml
	@$(RUN_CTEST)

# The heavy cases too (300 MB puts with every option, a 4 GiB - 1 file on FAT32, ...):
# the tests read SF_LONG=1. make check stays within 8 minutes on an idle 2-core machine;
# this takes far longer (docs/TESTING.md). CTEST_ARGS='-L long' runs only the tests that
# have a heavier variant.
check-long:
	@$(DEPS_AND_ASAN)
	@rm -f $(ASAN_BUILD)/ctest-junit.xml
	@export SF_LONG=1; $(RUN_CTEST)

# The edit loop: no package installs, an incremental build, the quick label only (the
# skip policy still lists what did not run).
test-quick: CTEST_ARGS += -L quick
test-quick:
	$(MAKE) asan
	@rm -f $(ASAN_BUILD)/ctest-junit.xml
	@$(RUN_CTEST)

SOAK_SECONDS ?= 3600
soak: build
	$(BUILD)/tests/soak $(SOAK_SECONDS)

$(ARM_BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(ARM_BUILD) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/arm-none-eabi.cmake

arm: $(ARM_BUILD)/CMakeCache.txt
	$(CMAKE) --build $(ARM_BUILD) -j $(JOBS)
	arm-none-eabi-size -t $(ARM_BUILD)/libstreamfat-core.a

size:
	bash scripts/size.sh $(ARM_BUILD)/size

# The tools the build needs (make check installs them with scripts/deps.sh; make demo only
# says what is missing: it installs nothing).
DEMO_TOOLS = $(CMAKE) cc pkg-config
demo:
	@for t in $(DEMO_TOOLS); do command -v $$t >/dev/null 2>&1 || { \
		echo "make demo: $$t not found; it needs cmake, make, a C compiler, pkg-config and"; \
		echo "the headers of zlib, and uses libdeflate, cJSON and liburing (Debian: apt-get"; \
		echo "install cmake make gcc pkg-config zlib1g-dev libdeflate-dev libcjson-dev liburing-dev)"; \
		exit 1; }; done
	$(MAKE) build
	mkdir -p $(DEMO_DIR)
	cd $(DEMO_DIR) && $(abspath $(BUILD))/streamfat demo
	@if command -v fsck.exfat >/dev/null 2>&1; then \
		echo "fsck.exfat -n $(DEMO_DIR)/demo.img"; \
		fsck.exfat -n $(DEMO_DIR)/demo.img </dev/null; \
	else \
		echo "fsck.exfat not installed: image not checked"; \
	fi

install:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(BUILD) -j $(JOBS)
	@$(call FEATURES_OFF,$(BUILD))
	DESTDIR=$(DESTDIR) $(CMAKE) --install $(BUILD)

bench:
	@if [ -f bench/run.sh ]; then bash bench/run.sh; else echo "no benchmarks yet"; fi

fuzz: build
	FUZZ_BUILD=$(abspath $(FUZZ_BUILD)) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) \
		SF=$(abspath $(BUILD))/streamfat bash fuzz/run.sh

# SD card over SPI on QEMU's lm3s6965evb (docs/PORTING.md, "SD card over SPI"): the core for
# the Cortex-M3, the firmware, two cards, a remount, no card, injected faults, the host's checks.
.PHONY: hw-sd
hw-sd: build
	SF=$(abspath $(BUILD))/streamfat JOBS=$(JOBS) nice -n 10 bash scripts/hw_sd.sh $(abspath $(HW_BUILD))

# examples/nvme under QEMU: the core for bare-metal AArch64, the firmware, three runs (the
# stream, an injected write fault, no controller) and the host's checks of the image.
hw-nvme: build
	SF=$(abspath $(BUILD))/streamfat JOBS=$(JOBS) nice -n 10 bash scripts/hw_nvme.sh $(abspath $(HW_BUILD))

HEAD_REF ?= HEAD
compare:
	@if [ -z "$(BASE)" ]; then echo "make compare: BASE=REF needed (e.g. BASE=main)"; exit 2; fi
	JOBS=$(JOBS) bash tests/compare/run.sh $(BASE) $(HEAD_REF)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(ARM_BUILD) $(FUZZ_BUILD) $(HW_BUILD)
