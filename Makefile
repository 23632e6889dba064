# Kprobes harness: build our kernel tree, boot it in QEMU, run the tests.
# See README.md.  Everything is done by the scripts in harness/; this file
# only strings them together.  Every target installs what it is missing.

H := harness
.NOTPARALLEL:
.PHONY: all help deps prepare build run test shell \
	baseline test-baseline run-baseline shell-baseline bench check clean \
	test-judge test-all-functions clients clients-baseline \
	peer-tests peer-tests-baseline series series-check arches arches-baseline test-mutants

all: build

help:
	@echo 'make run            build if needed, boot, load the kprobe samples, show them'
	@echo 'make test           build if needed, boot, run the tests (KTAP), judge'
	@echo 'make shell          boot our kernel with an interactive shell'
	@echo 'make build          prepare and build our tree, both configurations (build/ours)'
	@echo 'make baseline       build the untouched upstream tree (build/baseline)'
	@echo 'make test-baseline  run the tests on the upstream kernel'
	@echo 'make test-all-functions  probe_all_functions on every probeable'
	@echo '                    function, not one sixteenth (about an hour a configuration)'
	@echo 'make bench          both trees, production-like config, exact hit costs'
	@echo '                    and registration times side by side (build/bench/)'
	@echo 'make clients        perf, bpftrace, libbpf-tools, bcc, fail_function,'
	@echo '                    livepatch and SystemTap on a distribution-like kernel'
	@echo '                    in a Debian trixie guest (harness/clients/)'
	@echo 'make clients-baseline  the same on the upstream tree'
	@echo 'make peer-tests     perf'"'"'s own tests (perf test) and BPF'"'"'s selftests (test_progs)'
	@echo '                    that place kprobes, on the clients'"'"' image and kernel with'
	@echo '                    BPF'"'"'s configuration, IBT on and off (ARCH=arm64: one,'
	@echo '                    test_progs cross-built); peer-tests-baseline: upstream'
	@echo 'make check          checkpatch --strict, sparse and W=1 over our files'
	@echo 'make test-judge     the judge (harness/ktap.py) on recorded logs, broken'
	@echo '                    on purpose: each must come out red (no boot)'
	@echo 'make test-mutants   the product broken on purpose (harness/mutants.list):'
	@echo '                    each mutation built, booted with its cases, must go red'
	@echo 'make series         the patch series against the untouched 6.12 tree,'
	@echo '                    generated from the overlay (build/series/)'
	@echo 'make series-check   the series: checkpatch, a build after each patch,'
	@echo '                    kernel-doc, final tree = ours, then make test'
	@echo 'make arches         every architecture with kprobes and a Debian cross'
	@echo '                    compiler, built with kprobes off and on; the kprobes-on'
	@echo '                    kernel booted where QEMU can, its KUnit suites judged'
	@echo '                    (ARCHES="arm riscv64" for some; build/logs/arches-ours.txt)'
	@echo 'make arches-baseline  the same on the upstream tree'
	@echo 'make clean          remove build/ (keeps ~/.ccache)'
	@echo 'ARCH=arm64          (test, run, build, baseline, test-baseline, run-baseline,'
	@echo '                    shell, shell-baseline, bench) the same for arm64, cross-built'
	@echo '                    and booted under qemu-system-aarch64 (build/*-arm64)'
	@echo 'ARCH=i386           (the same targets, bench too) the same for 32-bit x86,'
	@echo '                    cross-built and booted under qemu-system-i386 (build/*-i386)'

# The architecture (harness/common.sh): x86_64, arm64 cross-built and
# booted under qemu-system-aarch64, or i386 cross-built and booted under
# qemu-system-i386, each but x86_64 with its own build/ours-ARCH,
# build/baseline-ARCH and build/logs-ARCH.
ARCH ?= x86_64
export KTEST_ARCH := $(ARCH)

# The configurations test targets build and boot (harness/common.sh);
# run and shell use the base one only.
KTEST_VARIANTS ?= base preempt
export KTEST_VARIANTS

# $(call kbuild,TREE,VARIANTS): prepare and build each configuration.
kbuild = @for v in $(2); do \
		KTEST_VARIANT=$$v $(H)/prepare.sh $(1) && \
		KTEST_VARIANT=$$v $(H)/build.sh $(1) || exit 1; \
	done

deps:
	@$(H)/deps.sh

prepare: deps
	@$(H)/prepare.sh ours

build: deps
	$(call kbuild,ours,$(KTEST_VARIANTS))

run: deps
	$(call kbuild,ours,base)
	@$(H)/boot.sh ours run

test: build
	@$(H)/boot.sh ours test

# probe_all_functions with every function (PROBE_ALL=all, or K/N for one
# slice), alone in a single-threaded TCG boot with time for it.
test-all-functions: build
	@PROBE_ALL=$${PROBE_ALL:-all} TCG=single FTRACETEST=none \
		KTEST_ONLY=cpus,probe_all_functions,probe_random_offsets,no_splat \
		KTEST_BASE_LIMIT=$${KTEST_BASE_LIMIT:-7200} $(H)/boot.sh ours test

shell: deps
	$(call kbuild,ours,base)
	@$(H)/boot.sh ours shell

baseline: deps
	$(call kbuild,upstream,$(KTEST_VARIANTS))

test-baseline: baseline
	@$(H)/boot.sh upstream test

run-baseline: deps
	$(call kbuild,upstream,base)
	@$(H)/boot.sh upstream run

shell-baseline: deps
	$(call kbuild,upstream,base)
	@$(H)/boot.sh upstream shell

bench:
	@$(H)/bench.sh

# Not part of `make test`: a kernel with debug info and BTF, and a Debian
# disk image (harness/clients/clients.sh).
clients:
	@$(H)/clients/clients.sh ours

clients-baseline:
	@$(H)/clients/clients.sh upstream

# Other projects' own test suites on the clients' image and a kernel with
# BPF's selftests' configuration: perf's and BPF's
# (harness/clients/guest/perf_test.sh, test_progs.sh).
peer-tests:
	@KTEST_PEER=1 $(H)/clients/clients.sh ours

peer-tests-baseline:
	@KTEST_PEER=1 $(H)/clients/clients.sh upstream

test-judge:
	@python3 $(H)/judge/run.py

# Each mutation of harness/mutants.list, built and booted with the cases
# that must go red (MUTANTS=name,... for some; ARCH=arm64 for arm64's).
test-mutants: deps
	@$(H)/mutants.sh

check:
	@$(H)/deps.sh check
	@$(H)/prepare.sh ours
	@$(H)/check.sh

# The patch series (harness/series/): generated from the overlay along
# the manifest harness/series/patches/, then proven patch by patch.
series: deps
	@$(H)/series/series.sh

series-check: series
	@$(H)/series/check.sh

# Every other architecture (harness/arches.sh), not part of `make test`.
arches:
	@$(H)/deps.sh arches
	@$(H)/arches.sh ours $(ARCHES)

arches-baseline:
	@$(H)/deps.sh arches
	@$(H)/arches.sh upstream $(ARCHES)

clean:
	rm -rf build
