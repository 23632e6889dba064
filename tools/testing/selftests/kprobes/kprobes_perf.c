// SPDX-License-Identifier: GPL-2.0
/*
 * The perf "kprobe" PMU, as perf_event_open() users meet it.
 *
 * kprobes_perf [-r|-A] FUNC
 *	A probe on FUNC, a function that read(2) calls once per call
 *	(vfs_read), counting and sampling in this process while it reads a
 *	file NREADS times.  Every read must be counted once, no more, and
 *	each sample's instruction pointer must be where the probe fires:
 *	inside FUNC for an entry probe, in FUNC's caller on the read path
 *	for a return probe (-r: the PMU's "retprobe" format bit, read from
 *	format/retprobe, set in the event's config).  -A gives FUNC by its
 *	address (kprobe_addr, from /proc/kallsyms) instead of its name.
 * kprobes_perf -o OFF FUNC
 *	A probe at FUNC+OFF (kprobe_func and probe_offset) inside FUNC's
 *	first instruction: perf_event_open() must refuse it with EILSEQ.
 * kprobes_perf -a ADDR
 *	A probe at ADDR (hex, kprobe_addr), which is no text:
 *	perf_event_open() must refuse it with EINVAL.
 *
 * Exits 0 when all of that holds, printing what it saw.  Addresses come
 * from /proc/kallsyms, so they need kptr_restrict to show them.  Built
 * static (the selftest guest has no libc) by the kprobes selftest
 * Makefile.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_TYPE_FILE	"/sys/bus/event_source/devices/kprobe/type"
#define PMU_RETPROBE_FILE "/sys/bus/event_source/devices/kprobe/format/retprobe"
#define NREADS		10
#define RING_PAGES	8	/* data pages: far more than NREADS samples */

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

/*
 * The text symbol of vmlinux that holds @addr, from /proc/kallsyms: its
 * name in @name (size @len), its start in *@start.  With @want, the other
 * way round: the address of the text symbol named @want in *@start.
 * Returns 0, or -1 when there is none or kallsyms hides addresses.
 */
static int kallsyms_text(unsigned long long addr, const char *want,
			 char *name, size_t len, unsigned long long *start)
{
	unsigned long long a, best = 0, next = ~0ULL;
	char line[512], sym[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3 ||
		    (type != 't' && type != 'T') || strchr(line, '['))
			continue;
		if (want) {
			if (!strcmp(sym, want) && a) {
				*start = a;
				found = 1;
				break;
			}
			continue;
		}
		if (a <= addr && a >= best && a) {
			best = a;
			snprintf(name, len, "%s", sym);
			found = 1;
		} else if (a > addr && a < next) {
			next = a;
		}
	}
	fclose(f);
	if (!found || (!want && next == ~0ULL))
		return -1;
	if (!want)
		*start = best;
	return 0;
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

static int open_event(struct perf_event_attr *attr)
{
	return syscall(__NR_perf_event_open, attr, 0, -1, -1, 0);
}

/* perf_event_open() of a probe described by @attr must fail with @err. */
static int refuse(struct perf_event_attr *attr, const char *what, int err)
{
	int fd = open_event(attr);

	if (fd >= 0) {
		printf("a kprobe at %s was accepted\n", what);
		close(fd);
		return 1;
	}
	if (errno != err) {
		printf("a kprobe at %s: %s, want %s\n", what, strerror(errno),
		       strerror(err));
		return 1;
	}
	printf("a kprobe at %s: %s\n", what, strerror(errno));
	return 0;
}

/*
 * The samples in the ring at @ring: each must be in FUNC (at @fstart)
 * for an entry probe, or elsewhere on the read path for a return probe.
 * Returns the number of samples, or -1 after printing what is wrong.
 */
static int check_samples(void *ring, size_t page, int retprobe,
			 const char *func, unsigned long long fstart)
{
	struct perf_event_mmap_page *meta = ring;
	unsigned long long head = meta->data_head, tail = 0, ip, start;
	char *data = (char *)ring + page, sym[256];
	struct perf_event_header *h;
	int n = 0;

	__sync_synchronize();
	while (tail < head) {
		h = (struct perf_event_header *)(data + tail % (RING_PAGES * page));
		if (h->type == PERF_RECORD_SAMPLE) {
			memcpy(&ip, h + 1, sizeof(ip));
			if (kallsyms_text(ip, NULL, sym, sizeof(sym), &start)) {
				printf("sample %d: no text symbol at %llx\n", n, ip);
				return -1;
			}
			if (!retprobe && start != fstart) {
				printf("sample %d: entry probe at %s+%#llx, not in %s\n",
				       n, sym, ip - start, func);
				return -1;
			}
			if (retprobe && (start == fstart || !strstr(sym, "read"))) {
				printf("sample %d: return probe at %s+%#llx, not in %s's caller\n",
				       n, sym, ip - start, func);
				return -1;
			}
			if (!n)
				printf("sample 0 at %s+%#llx\n", sym, ip - start);
			n++;
		}
		tail += h->size;
	}
	return n;
}

int main(int argc, char **argv)
{
	int retprobe = argc == 3 && !strcmp(argv[1], "-r");
	int byaddr = argc == 3 && !strcmp(argv[1], "-A");
	const char *func = argv[argc - 1];
	size_t page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	unsigned long long fstart;
	int type, fd, bit = -1, n;
	__u64 count = 0;
	void *ring;

	type = pmu_type();
	if (type < 0) {
		fprintf(stderr, "cannot read %s\n", PMU_TYPE_FILE);
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.disabled = 1;

	if (argc == 3 && !strcmp(argv[1], "-a")) {
		attr.kprobe_addr = strtoull(argv[2], NULL, 16);
		return refuse(&attr, argv[2], EINVAL);
	}
	if (argc == 4 && !strcmp(argv[1], "-o")) {
		attr.kprobe_func = (unsigned long)func;
		attr.probe_offset = strtoull(argv[2], NULL, 0);
		return refuse(&attr, func, EILSEQ);
	}
	if (argc != 2 && !retprobe && !byaddr) {
		fprintf(stderr, "usage: kprobes_perf [-r|-A] FUNC | -o OFF FUNC | -a ADDR\n");
		return 1;
	}
	if (kallsyms_text(0, func, NULL, 0, &fstart)) {
		fprintf(stderr, "no address for %s in /proc/kallsyms\n", func);
		return 1;
	}
	if (retprobe) {
		bit = retprobe_bit();
		if (bit < 0) {
			fprintf(stderr, "cannot read %s\n", PMU_RETPROBE_FILE);
			return 1;
		}
		attr.config = 1ULL << bit;
	}
	if (byaddr)
		attr.kprobe_addr = fstart;
	else
		attr.kprobe_func = (unsigned long)func;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP;
	attr.wakeup_events = 1;

	fd = open_event(&attr);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	ring = mmap(NULL, (1 + RING_PAGES) * page, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("mmap");
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
	n = check_samples(ring, page, retprobe, func, fstart);
	munmap(ring, (1 + RING_PAGES) * page);
	close(fd);
	if (n < 0)
		return 1;

	printf("%s%s%s: %llu hits and %d samples for %d reads\n", func,
	       retprobe ? " (return probe)" : "",
	       byaddr ? " (by address)" : "",
	       (unsigned long long)count, n, NREADS);
	return count == NREADS && n == NREADS ? 0 : 1;
}
