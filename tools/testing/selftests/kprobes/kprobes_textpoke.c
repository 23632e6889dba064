// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_textpoke [-o] ADDR SCRIPT1 SCRIPT2: what perf tells a trace
 * decoder about a probe's life.  With a perf event on every CPU that asks
 * for PERF_RECORD_TEXT_POKE and PERF_RECORD_KSYMBOL records (as "perf
 * record --kcore" does for Intel PT), run SCRIPT1 with sh, which puts a
 * probe on ADDR (hex), through kprobe_events say; with -o wait (at most
 * WAIT_MS, times KTEST_PACE percent when the environment has it: how much
 * slower this machine is than the one the limit was tuned on) until the
 * record of the optimized jump written at ADDR comes in; then run
 * SCRIPT2, which takes the probe away again.  Then check that
 * every change kprobes made to the text was reported:
 *
 *  - the breakpoint written at ADDR (one byte, old -> cc) and taken out
 *    again (cc -> the same old byte);
 *  - with -o (the probe was optimized meanwhile): the jump written at ADDR
 *    (five bytes, new e9 ...) and taken out again (old e9 ..., new cc
 *    ...), and a detour filled (nothing -> bytes) in a kprobe_optinsn_page;
 *  - an out-of-line copy filled in a kprobe_insn_page;
 *  - every page of out-of-line code registered (KSYMBOL) before bytes are
 *    written into it, unless /proc/kallsyms listed it before SCRIPT ran;
 *    and every such page that /proc/kallsyms no longer lists at the end
 *    unregistered.
 *
 * Prints the records and what is missing; exits 0 when nothing is.
 * Built static (the selftest guest has no libc) by the kprobes selftest
 * Makefile.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_PAGES	64		/* data pages per CPU */
#define MAX_CPUS	64
#define MAX_RECS	4096
#define MAX_PAGES	256
#define PAGE		4096UL
#define INSN_PAGE	"kprobe_insn_page"
#define OPT_PAGE	"kprobe_optinsn_page"
#define WAIT_MS		20000

struct rec {
	uint64_t time;
	int type;		/* PERF_RECORD_TEXT_POKE or _KSYMBOL */
	uint64_t addr;
	unsigned int old_len, new_len;
	uint8_t old[16], new[16];
	int unreg;
	char name[64];
};

static struct rec recs[MAX_RECS];
static int nrecs;

/* Pages of out-of-line code in /proc/kallsyms: address and name. */
struct ool_page {
	uint64_t addr;
	char name[32];
};

static int kallsyms_pages(struct ool_page *p, int max)
{
	char line[512], name[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (strcmp(name, INSN_PAGE) && strcmp(name, OPT_PAGE))
			continue;
		if (n < max) {
			p[n].addr = a;
			snprintf(p[n].name, sizeof(p[n].name), "%.31s", name);
			n++;
		}
	}
	fclose(f);
	return n;
}

static const char *page_in(struct ool_page *p, int n, uint64_t addr)
{
	int i;

	for (i = 0; i < n; i++)
		if (addr >= p[i].addr && addr < p[i].addr + PAGE)
			return p[i].name;
	return NULL;
}

static void take(const uint8_t *r, uint64_t time)
{
	const struct perf_event_header *h = (const void *)r;
	struct rec *x;

	if (nrecs == MAX_RECS)
		return;
	x = &recs[nrecs];
	memset(x, 0, sizeof(*x));
	x->time = time;
	x->type = h->type;
	memcpy(&x->addr, r + sizeof(*h), 8);
	if (h->type == PERF_RECORD_TEXT_POKE) {
		uint16_t ol, nl;

		memcpy(&ol, r + sizeof(*h) + 8, 2);
		memcpy(&nl, r + sizeof(*h) + 10, 2);
		x->old_len = ol;
		x->new_len = nl;
		memcpy(x->old, r + sizeof(*h) + 12, ol < 16 ? ol : 16);
		memcpy(x->new, r + sizeof(*h) + 12 + ol, nl < 16 ? nl : 16);
	} else {
		uint16_t flags;
		uint32_t len;

		memcpy(&len, r + sizeof(*h) + 8, 4);
		memcpy(&flags, r + sizeof(*h) + 14, 2);
		x->new_len = len;
		x->unreg = !!(flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
		snprintf(x->name, sizeof(x->name), "%.63s",
			 (const char *)r + sizeof(*h) + 16);
	}
	nrecs++;
}

/* Copy the records out of one ring (records may wrap around its end). */
static void drain(void *base, size_t size)
{
	struct perf_event_mmap_page *pg = base;
	uint8_t *data = (uint8_t *)base + PAGE, rec[512];
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(rec))
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % size];
		if (h.type == PERF_RECORD_TEXT_POKE ||
		    h.type == PERF_RECORD_KSYMBOL) {
			uint64_t t;

			/* sample_id_all with PERF_SAMPLE_TIME: time last. */
			memcpy(&t, rec + h.size - 8, 8);
			take(rec, t);
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static void hex(const uint8_t *b, unsigned int n, char *out)
{
	unsigned int i;

	out[0] = 0;
	for (i = 0; i < n && i < 16; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	if (!n) {
		out[0] = '-';
		out[1] = 0;
	}
}

static int missing;

static void want(int ok, const char *what)
{
	if (!ok) {
		printf("missing: %s\n", what);
		missing++;
	}
}

static int run_script(const char *script)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("cannot start a script\n");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("a script failed (status %#x)\n", status);
		return -1;
	}
	return 0;
}

/* Has the jump at @addr been reported? */
static int jumped(uint64_t addr)
{
	int i;

	for (i = 0; i < nrecs; i++)
		if (recs[i].type == PERF_RECORD_TEXT_POKE && recs[i].addr == addr &&
		    recs[i].new_len == 5 && recs[i].new[0] == 0xe9)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct ool_page before[MAX_PAGES], after[MAX_PAGES], reg[MAX_PAGES];
	int nbefore, nafter, nreg = 0, fds[MAX_CPUS], ncpu, cpu, i, j;
	size_t size = RING_PAGES * PAGE;
	void *rings[MAX_CPUS];
	int opt = 0, waited, wait_ms = WAIT_MS;
	uint64_t addr;
	char *end;
	uint8_t orig = 0;
	int arm = 0, disarm = 0, jump = 0, unjump = 0, slot = 0, detour = 0;

	if (argc > 1 && !strcmp(argv[1], "-o")) {
		opt = 1;
		argv++;
		argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: kprobes_textpoke [-o] ADDR SCRIPT1 SCRIPT2\n");
		return 2;
	}
	if (getenv("KTEST_PACE") && atoi(getenv("KTEST_PACE")) > 0)
		wait_ms = WAIT_MS / 100 * atoi(getenv("KTEST_PACE"));
	addr = strtoull(argv[1], &end, 16);
	if (!*argv[1] || *end) {
		fprintf(stderr, "kprobes_textpoke: bad address %s\n", argv[1]);
		return 2;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1 || ncpu > MAX_CPUS)
		return 2;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_DUMMY,
			.sample_type = PERF_SAMPLE_TIME,
			.sample_id_all = 1,
			.text_poke = 1,
			.ksymbol = 1,
		};

		fds[cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, 0);
		if (fds[cpu] < 0) {
			printf("perf_event_open(text_poke, ksymbol) on CPU %d: %s\n",
			       cpu, strerror(errno));
			return 1;
		}
		rings[cpu] = mmap(NULL, size + PAGE, PROT_READ | PROT_WRITE,
				  MAP_SHARED, fds[cpu], 0);
		if (rings[cpu] == MAP_FAILED) {
			printf("mmap of CPU %d's ring: %s\n", cpu, strerror(errno));
			return 1;
		}
	}
	nbefore = kallsyms_pages(before, MAX_PAGES);

	if (run_script(argv[2]))
		return 1;
	for (waited = 0; opt && waited < wait_ms; waited += 50) {
		for (cpu = 0; cpu < ncpu; cpu++)
			drain(rings[cpu], size);
		if (jumped(addr))
			break;
		usleep(50000);
	}
	if (run_script(argv[3]))
		return 1;
	nafter = kallsyms_pages(after, MAX_PAGES);
	for (cpu = 0; cpu < ncpu; cpu++)
		drain(rings[cpu], size);
	qsort(recs, nrecs, sizeof(recs[0]), by_time);

	/* Print, and collect the pages registered during the run. */
	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		char o[40], n[40];

		if (r->type == PERF_RECORD_KSYMBOL) {
			printf("ksymbol %s %llx %u %s\n",
			       r->unreg ? "unregister" : "register",
			       (unsigned long long)r->addr, r->new_len, r->name);
			if (!r->unreg && nreg < MAX_PAGES &&
			    (!strcmp(r->name, INSN_PAGE) || !strcmp(r->name, OPT_PAGE))) {
				reg[nreg].addr = r->addr;
				snprintf(reg[nreg].name, sizeof(reg[nreg].name), "%.31s",
					 r->name);
				nreg++;
			}
			continue;
		}
		hex(r->old, r->old_len, o);
		hex(r->new, r->new_len, n);
		printf("text_poke %llx %s -> %s\n", (unsigned long long)r->addr,
		       o, n);
	}

	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		const char *in;

		if (r->type != PERF_RECORD_TEXT_POKE)
			continue;
		if (r->addr == addr) {
			if (r->old_len == 1 && r->new_len == 1 && r->new[0] == 0xcc) {
				arm++;
				orig = r->old[0];
			} else if (r->old_len == 1 && r->new_len == 1 &&
				   r->old[0] == 0xcc && arm && r->new[0] == orig) {
				disarm++;
			} else if (r->new_len == 5 && r->new[0] == 0xe9) {
				jump++;
			} else if (r->old_len == 5 && r->old[0] == 0xe9 &&
				   r->new[0] == 0xcc) {
				unjump++;
			}
			continue;
		}
		if (r->old_len)
			continue;
		/* Bytes written where nothing was: a slot or a detour. */
		in = page_in(reg, nreg, r->addr);
		if (!in)
			in = page_in(before, nbefore, r->addr);
		if (!in) {
			printf("missing: a KSYMBOL record for the page of %llx\n",
			       (unsigned long long)r->addr);
			missing++;
		} else if (!strcmp(in, INSN_PAGE)) {
			slot++;
		} else {
			detour++;
		}
	}
	want(arm > 0, "the breakpoint written at the probe");
	want(disarm > 0, "the breakpoint taken out at the probe");
	want(slot > 0, "an out-of-line copy filled in a " INSN_PAGE);
	if (opt) {
		want(jump > 0, "the jump written at the probe");
		want(unjump > 0, "the jump taken out at the probe");
		want(detour > 0, "a detour filled in a " OPT_PAGE);
	}
	for (i = 0; i < nreg; i++) {
		int gone = !page_in(after, nafter, reg[i].addr), unreg = 0;

		for (j = 0; j < nrecs; j++)
			if (recs[j].type == PERF_RECORD_KSYMBOL && recs[j].unreg &&
			    recs[j].addr == reg[i].addr)
				unreg++;
		if (gone && !unreg) {
			printf("missing: the KSYMBOL unregister of %s %llx, gone from kallsyms\n",
			       reg[i].name, (unsigned long long)reg[i].addr);
			missing++;
		}
	}
	printf("%d records: %d pages registered, breakpoint %d/%d, ", nrecs, nreg,
	       arm, disarm);
	printf("jump %d/%d, slot %d, detour %d; %d missing\n", jump, unjump,
	       slot, detour, missing);
	return missing ? 1 : 0;
}
