// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_perf [-r] FUNC: put a kprobe on FUNC with perf_event_open() and
 * the "kprobe" PMU, count its hits in this process while it reads a file
 * ten times, and print the count.  Exits 0 when every read was counted.
 * With -r the probe is a return probe: the PMU's "retprobe" format bit
 * (format/retprobe, e.g. "config:0") is set in the event's config.
 *
 * kprobes_perf -a ADDR: ask the PMU for a kprobe at the address ADDR (hex,
 * kprobe_addr, no function name) that is no text; exits 0 when
 * perf_event_open() refuses it.
 *
 * Built static (the selftest guest has no libc) by the kprobes selftest
 * Makefile.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_TYPE_FILE	"/sys/bus/event_source/devices/kprobe/type"
#define PMU_RETPROBE_FILE "/sys/bus/event_source/devices/kprobe/format/retprobe"
#define NREADS		10

static int pmu_type(void)
{
	FILE *f = fopen(PMU_TYPE_FILE, "r");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* The config bit of the retprobe format ("config:N"), or -1. */
static int retprobe_bit(void)
{
	FILE *f = fopen(PMU_RETPROBE_FILE, "r");
	int bit = -1;

	if (!f)
		return -1;
	if (fscanf(f, "config:%d", &bit) != 1 || bit < 0 || bit > 63)
		bit = -1;
	fclose(f);
	return bit;
}

static void do_reads(void)
{
	char buf[64];
	int i, fd;

	for (i = 0; i < NREADS; i++) {
		fd = open("/proc/version", O_RDONLY);
		if (fd < 0)
			continue;
		if (read(fd, buf, sizeof(buf)) < 0)
			perror("read");
		close(fd);
	}
}

/* perf_event_open() of a kprobe at @addr must fail. */
static int refuse_addr(int type, const char *addr)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.kprobe_func = 0;
	attr.kprobe_addr = strtoull(addr, NULL, 16);
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0) {
		printf("a kprobe at %s was accepted\n", addr);
		close(fd);
		return 1;
	}
	printf("a kprobe at %s: %s\n", addr, strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	int retprobe = argc > 1 && !strcmp(argv[1], "-r");
	const char *func = argc > 1 + retprobe ? argv[1 + retprobe] : "vfs_read";
	struct perf_event_attr attr;
	__u64 count = 0;
	int type, fd, bit = -1;

	type = pmu_type();
	if (type < 0) {
		fprintf(stderr, "cannot read %s\n", PMU_TYPE_FILE);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "-a"))
		return refuse_addr(type, argv[2]);
	if (retprobe) {
		bit = retprobe_bit();
		if (bit < 0) {
			fprintf(stderr, "cannot read %s\n", PMU_RETPROBE_FILE);
			return 1;
		}
	}

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	/* 0: an entry probe; the retprobe bit: a return probe. */
	attr.config = retprobe ? 1ULL << bit : 0;
	attr.kprobe_func = (unsigned long)func;
	attr.probe_offset = 0;
	attr.disabled = 1;

	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("ioctl");
		return 1;
	}
	do_reads();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror("read count");
		return 1;
	}
	close(fd);

	printf("%s%s: %llu hits for %d reads\n", func,
	       retprobe ? " (return probe)" : "",
	       (unsigned long long)count, NREADS);
	return count >= NREADS ? 0 : 1;
}
