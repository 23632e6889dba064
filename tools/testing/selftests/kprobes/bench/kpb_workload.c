// SPDX-License-Identifier: GPL-2.0
/*
 * kpb_workload LABEL [ITERS]: figure 15 of `make bench`, what probes on
 * the kernel functions a workload calls cost that workload.  bench.sh
 * runs it three times: with no probes, with kprobes_bench.ko's entry
 * probes on the KPB_WL_NFUNCS functions of kpb_workload_funcs.h, and
 * with kretprobes on them.
 *
 * One iteration opens a file this program wrote to /tmp, reads its
 * DATA_SIZE bytes, closes it, stat()s it, asks for its pid with
 * syscall(SYS_getpid) (a real system call each time), and forks a child
 * that execs this program as "kpb_workload --child", which exits 0 at
 * once, and waits for it.  The loop of ITERS iterations is timed ROUNDS
 * times with the clock kprobes_bench.ko's get_cycles() reads, and the
 * cheapest round is printed as
 *
 *	BENCH workload_LABEL <executed instructions per iteration>
 *
 * with one decimal.  The guest runs under QEMU's -icount shift=0: x86's
 * TSC counts executed instructions, arm64's generic timer one count per
 * 1e9 / CNTFRQ_EL0 of them (kpb_main.c's kpb_insns()).  Every call's
 * result is checked: on a failure "BENCH-ERROR workload_LABEL <why>"
 * and exit 1.
 *
 * Built static (the benchmark guest has only busybox) by harness/build.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpb_cycles.h"

#define ROUNDS		3	/* timed loops; the cheapest counts */
#define DEFAULT_ITERS	200	/* iterations per loop */
#define DATA		"/tmp/kpb_workload.dat"
#define DATA_SIZE	256	/* bytes written once, read by each iteration */
#define CHILD_ARG	"--child"

static const char *label = "?";
static char self[PATH_MAX];
static pid_t my_pid;

/*
 * Executed instructions in @c of cycles(): under -icount shift=0 one
 * guest nanosecond is one instruction, and arm64's count runs at
 * CNTFRQ_EL0 (62.5 MHz on QEMU's virt board: 16 instructions a count).
 */
static unsigned long long insns(unsigned long long c)
{
#ifdef __aarch64__
	unsigned long long frq;

	asm volatile("mrs %0, cntfrq_el0" : "=r" (frq));
	if (!frq)
		return 0;
	/* In two parts: c * 1e9 could overflow 64 bits. */
	return c / frq * 1000000000ULL + c % frq * 1000000000ULL / frq;
#else
	return c;
#endif
}

/* @why, and errno's meaning when a call set it. */
static int fail(const char *why)
{
	if (errno)
		printf("BENCH-ERROR workload_%s %s (%s)\n", label, why,
		       strerror(errno));
	else
		printf("BENCH-ERROR workload_%s %s\n", label, why);
	return 1;
}

/* The file each iteration opens, DATA_SIZE bytes of a fixed pattern. */
static int make_data(void)
{
	char buf[DATA_SIZE];
	int fd, i;

	for (i = 0; i < DATA_SIZE; i++)
		buf[i] = 'a' + i % 26;
	fd = open(DATA, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fail("creating " DATA " failed");
	if (write(fd, buf, DATA_SIZE) != DATA_SIZE) {
		close(fd);
		return fail("writing " DATA " failed");
	}
	if (close(fd))
		return fail("closing " DATA " failed");
	return 0;
}

/* This program's path, for the child to exec. */
static int find_self(const char *argv0)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		return 0;
	}
	if (snprintf(self, sizeof(self), "%s", argv0) >= (int)sizeof(self))
		return fail("no path to exec: argv[0] is too long");
	return 0;
}

static int iteration(void)
{
	char *const child_argv[] = { self, CHILD_ARG, NULL };
	char buf[DATA_SIZE];
	struct stat st;
	int fd, status;
	ssize_t n;
	pid_t pid;

	errno = 0;
	fd = open(DATA, O_RDONLY);
	if (fd < 0)
		return fail("open() failed");
	n = read(fd, buf, DATA_SIZE);
	if (n != DATA_SIZE) {
		close(fd);
		return fail(n < 0 ? "read() failed" : "read() came short");
	}
	if (close(fd))
		return fail("close() failed");
	if (stat(DATA, &st))
		return fail("stat() failed");
	if (st.st_size != DATA_SIZE)
		return fail("stat() gave the wrong size");
	if (syscall(SYS_getpid) != my_pid)
		return fail("getpid() gave another pid");
	pid = fork();
	if (pid < 0)
		return fail("fork() failed");
	if (pid == 0) {
		execve(self, child_argv, environ);
		fail("execve() failed");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return fail("waitpid() failed");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = 0;
		return fail("the child did not exit 0");
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long best = ~0ULL, t, total, tenths;
	unsigned long iters = DEFAULT_ITERS;
	cpu_set_t cpu0;
	char *end;
	int r;
	unsigned long i;

	/* The child of every iteration: exec'd, it only has to exit. */
	if (argc == 2 && !strcmp(argv[1], CHILD_ARG))
		return 0;
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s LABEL [ITERS]\n", argv[0]);
		return 2;
	}
	label = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3) {
		errno = 0;
		iters = strtoul(argv[2], &end, 10);
		if (errno || *end || !iters)
			return fail("ITERS is not a positive number");
	}
	errno = 0;
	if (find_self(argv[0]) || make_data())
		return 1;
	/*
	 * The parent and every child on CPU 0 (the child inherits it):
	 * no wake-ups of an idle CPU, whose idle loop's instructions would
	 * count too.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		return fail("sched_setaffinity() failed");
	my_pid = getpid();

	for (r = 0; r < ROUNDS; r++) {
		t = cycles();
		for (i = 0; i < iters; i++)
			if (iteration())
				return 1;
		t = cycles() - t;
		if (t < best)
			best = t;
	}
	if (unlink(DATA))
		return fail("removing " DATA " failed");
	total = insns(best);
	if (!total) {
		errno = 0;
		return fail("the clock did not advance");
	}
	tenths = (total * 10 + iters / 2) / iters;
	printf("BENCH workload_%s %llu.%llu\n", label, tenths / 10, tenths % 10);
	return 0;
}
