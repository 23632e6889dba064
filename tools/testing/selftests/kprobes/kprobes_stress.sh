#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kprobes selftests, probes changing while other CPUs run the probed code (the KUnit suite
# of kprobes_stress.ko) and a probe on every instruction boundary of a
# function (kprobes_boundary.ko).
# Prints KTAP; arguments name the cases to run (default: all).

cd "$(dirname "$0")" || exit 1
. ./kprobes_lib.sh

# The kprobes_stress KUnit suite of kprobes_stress.ko: probes registered,
# toggled and unregistered while two CPUs and a timer interrupt run the
# probed code.
t_stress_suite()
{
	kunit_module kprobes_stress kprobes_stress $(cross_cpu_param) || return
	! suite_failed kprobes_stress || fail "suite kprobes_stress failed"
}

# The kprobes_boundaries KUnit suite of kprobes_boundary.ko: a probe on
# every instruction boundary of two target functions in turn, with and
# without a post handler, with one CPU and then two calling them, must
# not change any result.
t_boundary_suite()
{
	kunit_module kprobes_boundary kprobes_boundaries $(cross_cpu_param) ||
		return
	! suite_failed kprobes_boundaries ||
		fail "suite kprobes_boundaries failed"
}

AREA_CASES="stress_suite boundary_suite"
ktest_main "$@"
