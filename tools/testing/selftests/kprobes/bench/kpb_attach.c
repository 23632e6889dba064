// SPDX-License-Identifier: GPL-2.0
/*
 * kpb_attach events|pmu: figure 14 of `make bench`, attaching probes to
 * the entries of figure 13's C functions (kpb_cf_0 ... in
 * kprobes_bench_funcs.ko) the way tools do, from user space:
 *
 *   events  append one "p:kpb/kpb_fN kpb_cf_N" line per function to
 *           kprobe_events, enable them all through the group's "enable"
 *           file, disable them, and remove them one "-:kpb/kpb_fN" line at a
 *           time, as perf probe -d does;
 *   pmu     one perf_event_open() per function on the "kprobe" PMU, as
 *           libbpf (bpftrace) attaches a kprobe, then close them all.
 *
 * Each step is timed with the clock kprobes_bench.ko's get_cycles()
 * reads (the TSC; on arm64 the generic timer's virtual count), and
 * printed as "BENCH attach_<how>_<step>_ns <cycles>".  Between enabling
 * and disabling, kprobes_bench.ko calls every function once (its "run"
 * parameter, figure "cfuncs_call") and every probe must have counted that
 * call: the probes were live when the tool's write or perf_event_open()
 * returned.  Otherwise "BENCH-ERROR attach_<how> <why>" and exit 1.
 *
 * Built static (the benchmark guest has only busybox) by harness/build.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kpb_cycles.h"

#define NFUNCS		1000	/* KPB_NENTRIES in kpb.h */
#define TRACEFS		"/sys/kernel/tracing"
#define EVENTS		TRACEFS "/kprobe_events"
#define GROUP_ENABLE	TRACEFS "/events/kpb/enable"
#define PROFILE		TRACEFS "/kprobe_profile"
#define PMU_TYPE	"/sys/bus/event_source/devices/kprobe/type"
#define RUN_PARAM	"/sys/module/kprobes_bench/parameters/run"

static const char *how = "?";

static int fail(const char *why)
{
	printf("BENCH-ERROR attach_%s %s (%s)\n", how, why, strerror(errno));
	return 1;
}

/* Only @n probes of NFUNCS counted the call they were attached for. */
static int missed(int n)
{
	printf("BENCH-ERROR attach_%s %d of %d probes hit\n", how, n, NFUNCS);
	return 1;
}

static void report(const char *step, unsigned long long t0)
{
	printf("BENCH attach_%s_%s_ns %llu\n", how, step, cycles() - t0);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* Have kprobes_bench.ko call each of the functions once, on this CPU. */
static int call_all(void)
{
	return write_str(RUN_PARAM, "cfuncs_call");
}

/* Write @n lines to kprobe_events, one write each: @def with i, i. */
static int events_lines(const char *def, int n)
{
	char line[128];
	int fd, i, len;

	fd = open(EVENTS, O_WRONLY | O_APPEND);
	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		len = snprintf(line, sizeof(line), def, i, i);
		if (write(fd, line, len) != len) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* The kpb_f probes of kprobe_profile (it names no group) with a hit. */
static int events_hit(void)
{
	char event[128];
	unsigned long hits, misses;
	FILE *f = fopen(PROFILE, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lu %lu", event, &hits, &misses) == 3)
		if (!strncmp(event, "kpb_f", 5) && hits > 0)
			n++;
	fclose(f);
	return n;
}

static int attach_events(void)
{
	unsigned long long t;
	int n;

	t = cycles();
	if (events_lines("p:kpb/kpb_f%d kpb_cf_%d\n", NFUNCS))
		return fail("appending to kprobe_events failed");
	report("add", t);
	t = cycles();
	if (write_str(GROUP_ENABLE, "1"))
		return fail("enabling the kpb group failed");
	report("enable", t);
	if (call_all())
		return fail("calling the functions failed");
	n = events_hit();
	if (n != NFUNCS)
		return missed(n);
	t = cycles();
	if (write_str(GROUP_ENABLE, "0"))
		return fail("disabling the kpb group failed");
	report("disable", t);
	t = cycles();
	if (events_lines("-:kpb/kpb_f%d\n", NFUNCS))
		return fail("removing from kprobe_events failed");
	report("remove", t);
	return 0;
}

static int attach_pmu(void)
{
	static char names[NFUNCS][32];
	static int fds[NFUNCS];
	struct perf_event_attr attr;
	unsigned long long t, count;
	int type, i, n = 0;
	FILE *f;

	f = fopen(PMU_TYPE, "r");
	if (!f || fscanf(f, "%d", &type) != 1)
		return fail("no kprobe PMU");
	fclose(f);
	for (i = 0; i < NFUNCS; i++)
		snprintf(names[i], sizeof(names[i]), "kpb_cf_%d", i);

	t = cycles();
	for (i = 0; i < NFUNCS; i++) {
		/* As libbpf's perf_event_open_probe(): all tasks, CPU 0. */
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = type;
		attr.kprobe_func = (unsigned long)names[i];
		attr.probe_offset = 0;
		fds[i] = syscall(__NR_perf_event_open, &attr, -1, 0, -1,
				 PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			while (i--)
				close(fds[i]);
			return fail("perf_event_open() failed");
		}
	}
	report("open", t);
	if (call_all())
		return fail("calling the functions failed");
	for (i = 0; i < NFUNCS; i++)
		if (read(fds[i], &count, sizeof(count)) == sizeof(count) &&
		    count > 0)
			n++;
	t = cycles();
	for (i = 0; i < NFUNCS; i++)
		close(fds[i]);
	report("close", t);
	return n == NFUNCS ? 0 : missed(n);
}

int main(int argc, char **argv)
{
	struct rlimit nofile = { NFUNCS + 64, NFUNCS + 64 };
	cpu_set_t cpu0;

	if (argc != 2 || (strcmp(argv[1], "events") && strcmp(argv[1], "pmu"))) {
		fprintf(stderr, "usage: %s events|pmu\n", argv[0]);
		return 2;
	}
	how = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The perf events count on CPU 0: the calls are made there. */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		return fail("sched_setaffinity() failed");
	if (setrlimit(RLIMIT_NOFILE, &nofile))
		return fail("setrlimit() failed");
	return strcmp(how, "events") ? attach_pmu() : attach_events();
}
