// SPDX-License-Identifier: GPL-2.0
/*
 * Target module of the kprobes selftests.
 *
 * It holds the functions the KUnit cases and run_tests.sh put probes on.
 * They live here, and not in the test module, so that a test can name
 * them as "kprobes_target:func" and so that run_tests.sh can unload this
 * module while a probe on it stays registered.
 *
 * At load time the module also probes one of its own __init functions
 * and leaves that probe registered: once the init text is freed the probe
 * must be reported as gone.
 *
 * For the jump-optimization cases of two test modules it also reads and
 * writes the optimization sysctl and reads the marks of debugfs
 * kprobes/list (see kprobes_target.h).
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <linux/sysfs.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include "kprobes_target.h"

int kpt_data = 1;
EXPORT_SYMBOL_GPL(kpt_data);

static int kpt_sink;

/*
 * Every target does a little visible work, so that it is neither folded
 * into its callers nor merged with a twin.
 */
__used noinline int kpt_func_a(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 1;
}
EXPORT_SYMBOL_GPL(kpt_func_a);

__used noinline int kpt_func_b(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 2;
}
EXPORT_SYMBOL_GPL(kpt_func_b);

__used noinline int kpt_func_c(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 3;
}
EXPORT_SYMBOL_GPL(kpt_func_c);

__used noinline int kpt_func_d(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 4;
}
EXPORT_SYMBOL_GPL(kpt_func_d);

__used noinline int kpt_func_e(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 5;
}
EXPORT_SYMBOL_GPL(kpt_func_e);

__used noinline int kpt_func_f(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 6;
}
EXPORT_SYMBOL_GPL(kpt_func_f);

__used noinline int kpt_reent_inner(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 7;
}
EXPORT_SYMBOL_GPL(kpt_reent_inner);

__used noinline int kpt_smp_func(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 8;
}
EXPORT_SYMBOL_GPL(kpt_smp_func);

/*
 * Never called: one function for each way a module keeps kprobes out of
 * its code (NOKPROBE_SYMBOL(), __kprobes, noinstr), which the kprobes
 * blacklist must take in when the module loads (kpk_bl_module).
 */
static __used noinline int kpt_bl_nokprobe(int x)
{
	return x + 1;
}

NOKPROBE_SYMBOL(kpt_bl_nokprobe);

static __used noinline int __kprobes kpt_bl_kprobes(int x)
{
	return x + 2;
}

static __used noinstr int kpt_bl_noinstr(int x)
{
	return x + 3;
}

/*
 * Never called: two functions named the way the compiler names its
 * copies of a function.  The copy of a NOKPROBE_SYMBOL() function is to
 * be refused as the function is; the copy of any other stays probeable
 * (the suite's blacklist_clones).  Named by hand, since the compiler
 * copies a function only where it sees a gain.
 */
static int kpt_bl_copy_listed(int x) asm("kpt_bl_nokprobe.constprop.0");
static int kpt_bl_copy_free(int x) asm("kpt_shell_a.part.0");

static __used noinline int kpt_bl_copy_listed(int x)
{
	return x + 4;
}

static __used noinline int kpt_bl_copy_free(int x)
{
	return x + 5;
}

__used noinline int kpt_shell_a(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 9;
}
EXPORT_SYMBOL_GPL(kpt_shell_a);

__used noinline int kpt_shell_b(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 10;
}
EXPORT_SYMBOL_GPL(kpt_shell_b);

/*
 * Never called: kprobes_holder's ftrace_bug makes ftrace find a stray
 * int3 on its ftrace site, which must come after kpt_shell_b's in
 * ftrace's records (the holder checks the order).
 */
__used noinline int kpt_ftrace_spare(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 12;
}
EXPORT_SYMBOL_GPL(kpt_ftrace_spare);

__used noinline int kpt_ctx_fn(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 13;
}
EXPORT_SYMBOL_GPL(kpt_ctx_fn);

__used noinline int kpt_reent_outer(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 11;
}
EXPORT_SYMBOL_GPL(kpt_reent_outer);

__used noinline int kpt_ret_a(void)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, KPT_RET_A);
	return KPT_RET_A;
}
EXPORT_SYMBOL_GPL(kpt_ret_a);

__used noinline int kpt_ret_b(void)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, KPT_RET_B);
	return KPT_RET_B;
}
EXPORT_SYMBOL_GPL(kpt_ret_b);

/* ---------------------------------------------------------------------
 * Return-probe targets
 */

unsigned long kpt_kret_ra[KPT_RA_NR];
EXPORT_SYMBOL_GPL(kpt_kret_ra);

/* A macro, so that it reads the return address of the function using it. */
#define kpt_note_ra(which) \
	WRITE_ONCE(kpt_kret_ra[which], (unsigned long)__builtin_return_address(0))

__used noinline int kpt_kret_a(int x)
{
	kpt_note_ra(KPT_RA_A);
	WRITE_ONCE(kpt_sink, x);
	return x + KPT_KRET_A_ADD;
}
EXPORT_SYMBOL_GPL(kpt_kret_a);

__used noinline int kpt_kret_b(int x)
{
	kpt_note_ra(KPT_RA_B);
	WRITE_ONCE(kpt_sink, x);
	return x + KPT_KRET_B_ADD;
}
EXPORT_SYMBOL_GPL(kpt_kret_b);

__used noinline int kpt_kret_inner(int x)
{
	kpt_note_ra(KPT_RA_INNER);
	WRITE_ONCE(kpt_sink, x);
	return x + KPT_KRET_INNER_ADD;
}
EXPORT_SYMBOL_GPL(kpt_kret_inner);

/* Not a tail call: the addition comes after kpt_kret_inner() returns. */
__used noinline int kpt_kret_outer(int x)
{
	int ret;

	kpt_note_ra(KPT_RA_OUTER);
	ret = kpt_kret_inner(x);
	WRITE_ONCE(kpt_sink, ret);
	return ret + KPT_KRET_OUTER_ADD;
}
EXPORT_SYMBOL_GPL(kpt_kret_outer);

__used noinline int kpt_kret_call(int (*fn)(int), int x)
{
	int ret = fn(x);

	/* Something to do after the call, so that it is not a tail call. */
	asm volatile("");
	WRITE_ONCE(kpt_sink, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(kpt_kret_call);

__used noinline int kpt_kret_exit(struct completion *done)
{
	asm volatile("");
	if (done)
		kthread_complete_and_exit(done, 0);
	WRITE_ONCE(kpt_sink, KPT_KRET_EXIT_RET);
	return KPT_KRET_EXIT_RET;
}
EXPORT_SYMBOL_GPL(kpt_kret_exit);

atomic_t kpt_kret_recurse_calls = ATOMIC_INIT(0);
EXPORT_SYMBOL_GPL(kpt_kret_recurse_calls);

/*
 * Not a tail call, and nothing a compiler can turn into a loop: the store
 * of what the inner call returned comes between that call and the return.
 */
__used noinline int kpt_kret_recurse(int n)
{
	int ret;

	atomic_inc(&kpt_kret_recurse_calls);
	if (n <= 1)
		return 1;
	ret = kpt_kret_recurse(n - 1);
	WRITE_ONCE(kpt_sink, ret);
	return ret + 1;
}
EXPORT_SYMBOL_GPL(kpt_kret_recurse);

static DECLARE_WAIT_QUEUE_HEAD(kpt_gate_wq);
static bool kpt_gate_is_open = true;
static atomic_t kpt_gate_in = ATOMIC_INIT(0);

__used noinline int kpt_gate_wait(int x)
{
	atomic_inc(&kpt_gate_in);
	/* TASK_IDLE: a long wait is neither load nor a hung task. */
	wait_event_idle(kpt_gate_wq, READ_ONCE(kpt_gate_is_open));
	return x + KPT_GATE_ADD;
}
EXPORT_SYMBOL_GPL(kpt_gate_wait);

void kpt_gate_close(void)
{
	WRITE_ONCE(kpt_gate_is_open, false);
	atomic_set(&kpt_gate_in, 0);
}
EXPORT_SYMBOL_GPL(kpt_gate_close);

void kpt_gate_open(void)
{
	WRITE_ONCE(kpt_gate_is_open, true);
	wake_up_all(&kpt_gate_wq);
}
EXPORT_SYMBOL_GPL(kpt_gate_open);

int kpt_gate_inside(void)
{
	return atomic_read(&kpt_gate_in);
}
EXPORT_SYMBOL_GPL(kpt_gate_inside);

/* ---------------------------------------------------------------------
 * Boundary-walk targets (see kprobes_target.h)
 */

/* Written once here and never again: each call loads it from memory. */
static u32 kpt_bnd_seed = 0x2545f491;
/* One cell per lane: a call stores a value there and reads it back. */
static u32 kpt_bnd_cell0;
static u32 kpt_bnd_cell1;

static noinline u32 kpt_bnd_fold(u32 h, u32 v)
{
	asm volatile("");
	return rol32(h ^ v, 5) * 0x27d4eb2f + (v >> 3);
}

__used noinline u32 kpt_bnd_c(const u8 *buf, unsigned int len, int lane)
{
	static const char digits[] = "0123456789abcdef";
	unsigned long bits[2] = { 0, 0 };
	u32 h = READ_ONCE(kpt_bnd_seed);
	u32 words[8];
	char hex[12];
	unsigned int i, n;
	u32 v;

	/* The input, byte by byte; each byte also sets a bit. */
	for (i = 0; i < len; i++) {
		h = (h ^ buf[i]) * 0x01000193;
		__set_bit(buf[i] & 127, bits);
	}

	/* A stack array filled by calls. */
	for (i = 0; i < ARRAY_SIZE(words); i++)
		words[i] = kpt_bnd_fold(h, i + (i < len ? buf[i] : 0xa5));

	switch (h % 6) {
	case 0:
		h += words[1] * 3;
		break;
	case 1:
		h ^= words[2] >> 7;
		break;
	case 2:
		h = kpt_bnd_fold(h, words[3]);
		break;
	case 3:
		h -= words[4] | 0x100;
		break;
	case 4:
		h = swab32(h) + len;
		break;
	default:
		h = ~h + words[5];
		break;
	}

	/* A 64-bit division by a divisor taken from the input. */
	h += (u32)div_u64(((u64)words[1] << 24) | words[2], (buf[0] | 1) + len);

	for (i = 0; i < 128; i += 11)
		if (test_bit(i, bits))
			h += i * 0x10001;
	h ^= (hweight32(words[3]) << 16) | (fls(words[4]) << 8) |
	     __ffs(words[5] | 0x80000000);

	/* Store to this lane's cell; read back below. */
	if (lane)
		WRITE_ONCE(kpt_bnd_cell1, h);
	else
		WRITE_ONCE(kpt_bnd_cell0, h);

	/* h in hex, least significant digit first, and string functions. */
	n = 0;
	v = h;
	do {
		hex[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	hex[n] = '\0';
	h = h * 31 + strlen(hex);
	if (strchr(hex, 'a'))
		h += 7;
	h += min(words[6], words[7]) >> 4;
	h += lane ? READ_ONCE(kpt_bnd_cell1) : READ_ONCE(kpt_bnd_cell0);
	return h;
}
EXPORT_SYMBOL_GPL(kpt_bnd_c);

/*
 * The labels of the hand-written targets (kpt_asm.S, kpt_asm_32.S,
 * kpt_asm_arm64.S); kpt_opt_call() and kpt_opt_call_c() are x86's only.
 */
#ifdef KPT_ASM_TARGETS
unsigned long kpt_label_addr(enum kpt_label label)
{
	switch (label) {
	case KPT_L_ADD_INSN:
		return (unsigned long)kpt_asm_add_insn;
	case KPT_L_ADD_NEXT:
		return (unsigned long)kpt_asm_add_next;
	case KPT_L_LOAD_INSN:
		return (unsigned long)kpt_asm_load_insn;
	case KPT_L_ULOAD_INSN:
		return (unsigned long)kpt_asm_uload_insn;
	case KPT_L_SUB_INSN:
		return (unsigned long)kpt_asm_sub + kpt_asm_sub_off;
#ifdef CONFIG_X86
	case KPT_L_OPT_CALL_RET:
		return (unsigned long)kpt_opt_call + kpt_opt_call_ret_off;
	case KPT_L_OPT_CALL_C_RET:
		return (unsigned long)kpt_opt_call_c + kpt_opt_call_c_ret_off;
#else
	case KPT_L_OPT_CALL_RET:
	case KPT_L_OPT_CALL_C_RET:
		break;
#endif
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kpt_label_addr);
#endif /* KPT_ASM_TARGETS */

/*
 * The layout of the boundary-walk target (kpt_asm.S, kpt_asm_32.S,
 * kpt_bnd_arm64.S).
 */
#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
const u32 *kpt_bnd_asm_layout(unsigned int *ninsns, unsigned int *size)
{
	*ninsns = kpt_bnd_asm_ninsns;
	*size = kpt_bnd_asm_size;
	return kpt_bnd_asm_insns;
}
EXPORT_SYMBOL_GPL(kpt_bnd_asm_layout);
#endif

/* ---------------------------------------------------------------------
 * Jump optimization: targets, the sysctl, the list (see kprobes_target.h)
 */

/* Written by kpt_opt_call(), kpt_opt_call_c(): kpt_asm.S, kpt_opt_arm64.S. */
unsigned long kpt_opt_sp;
EXPORT_SYMBOL_GPL(kpt_opt_sp);

__used noinline unsigned long kpt_opt_c(unsigned long a, unsigned long b,
					unsigned long c)
{
	asm volatile("");
	return kpt_opt_want(a, b, c);
}
EXPORT_SYMBOL_GPL(kpt_opt_c);

#if defined(CONFIG_S390) || defined(CONFIG_X86_32)
/*
 * kpt_opt_c() again, untraced: s390 and i386 start every traced function
 * with ftrace's call site, where an entry probe goes through ftrace, and
 * the return-probe cases want a breakpoint at a function's entry too.
 */
__used noinline notrace unsigned long
kpt_opt_c_untraced(unsigned long a, unsigned long b, unsigned long c)
{
	asm volatile("");
	return kpt_opt_want(a, b, c);
}
EXPORT_SYMBOL_GPL(kpt_opt_c_untraced);
#endif

#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
const u32 *kpt_opt_asm_layout(unsigned int *ninsns, unsigned int *size)
{
	*ninsns = kpt_opt_asm_ninsns;
	*size = kpt_opt_asm_size;
	return kpt_opt_asm_insns;
}
EXPORT_SYMBOL_GPL(kpt_opt_asm_layout);
#endif

/* The marks of one list line ("<addr>  k  <sym>+<off>  <mod> <marks>"). */
static int kpt_line_state(const char *line, unsigned long addr)
{
	char tok[24];
	unsigned long a;
	size_t n = strcspn(line, " \t");
	int state = KPT_PS_LISTED;

	if (!n || n >= sizeof(tok))
		return 0;
	memcpy(tok, line, n);
	tok[n] = '\0';
	if (kstrtoul(tok, 16, &a) || a != addr)
		return 0;
	if (strstr(line, "[OPTIMIZED]"))
		state |= KPT_PS_OPTIMIZED;
	if (strstr(line, "[DISABLED]"))
		state |= KPT_PS_DISABLED;
	if (strstr(line, "[FTRACE]"))
		state |= KPT_PS_FTRACE;
	if (strstr(line, "[GONE]"))
		state |= KPT_PS_GONE;
	return state;
}

#define KPT_LIST_BUF	4096

/*
 * kernel_read() needs ->read_iter, which debugfs' proxy file operations
 * do not have: read the list, a seq_file, with seq_read_iter().
 */
static ssize_t kpt_seq_read(struct file *f, char *buf, size_t len, loff_t *pos)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;
	struct kiocb kiocb;
	ssize_t n;

	init_sync_kiocb(&kiocb, f);
	kiocb.ki_pos = *pos;
	iov_iter_kvec(&iter, ITER_DEST, &kv, 1, len);
	n = seq_read_iter(&kiocb, &iter);
	*pos = kiocb.ki_pos;
	return n;
}

int kpt_probe_state(unsigned long addr)
{
	struct file *f;
	char *buf, *line, *nl;
	size_t have = 0;
	loff_t pos = 0;
	ssize_t n;
	int state = 0;

	buf = kmalloc(KPT_LIST_BUF + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	f = filp_open(KPT_KPROBES_LIST, O_RDONLY, 0);
	if (IS_ERR(f)) {
		kfree(buf);
		return PTR_ERR(f);
	}
	/* Whole lines out of each read; a partial one moves to the front. */
	for (;;) {
		n = kpt_seq_read(f, buf + have, KPT_LIST_BUF - have, &pos);
		if (n < 0) {
			state = n;
			break;
		}
		have += n;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			state |= kpt_line_state(line, addr);
			line = nl + 1;
		}
		have -= line - buf;
		if (!n || have == KPT_LIST_BUF) {
			/* The end, or a line too long to be one of ours. */
			if (have && have < KPT_LIST_BUF)
				state |= kpt_line_state(line, addr);
			break;
		}
		memmove(buf, line, have);
	}
	filp_close(f, NULL);
	kfree(buf);
	return state;
}
EXPORT_SYMBOL_GPL(kpt_probe_state);

bool kpt_optimizer_wait(void)
{
#ifdef KPT_HAVE_OPTIMIZER_WAIT
	wait_for_kprobe_optimizer();
	return true;
#else
	return false;
#endif
}
EXPORT_SYMBOL_GPL(kpt_optimizer_wait);

static unsigned int kpt_pace = 100;
module_param_named(pace, kpt_pace, uint, 0444);
MODULE_PARM_DESC(pace, "time limits, in percent of those of the machine the suite was tuned on");

unsigned int kpt_paced_ms(unsigned int ms)
{
	return mult_frac(ms, max(kpt_pace, 1U), 100);
}
EXPORT_SYMBOL_GPL(kpt_paced_ms);

unsigned long kpt_deadline(unsigned int ms)
{
	return jiffies + msecs_to_jiffies(kpt_paced_ms(ms));
}
EXPORT_SYMBOL_GPL(kpt_deadline);

int kpt_wait_probe_state(unsigned long addr, int mask, int want,
			 unsigned int ms)
{
	unsigned long end = kpt_deadline(ms);
	int state;

	for (;;) {
		kpt_optimizer_wait();
		state = kpt_probe_state(addr);
		if (state < 0 || (state & mask) == want ||
		    !time_before(jiffies, end))
			return state;
		msleep(20);
	}
}
EXPORT_SYMBOL_GPL(kpt_wait_probe_state);

int kpt_optimization_get(void)
{
	char buf[16] = "";
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int val;

	f = filp_open(KPT_OPT_SYSCTL, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	if (kstrtoint(strim(buf), 10, &val))
		return -EINVAL;
	return val;
}
EXPORT_SYMBOL_GPL(kpt_optimization_get);

int kpt_optimization_set(int on)
{
	const char *val = on ? "1\n" : "0\n";
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = filp_open(KPT_OPT_SYSCTL, O_WRONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, val, 2, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	return n == 2 ? 0 : -EIO;
}
EXPORT_SYMBOL_GPL(kpt_optimization_set);

__used noinline long kpt_eight(long a1, long a2, long a3, long a4,
			       long a5, long a6, long a7, long a8)
{
	return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 +
	       8 * a8;
}
EXPORT_SYMBOL_GPL(kpt_eight);

__used noinline long kpt_eight_call(kpt_eight_fn fn, long base)
{
	long ret = fn(base, base + 1, base + 2, base + 3, base + 4, base + 5,
		      base + 6, base + 7);

	/* Not a tail call: this frame stays on the stack during fn. */
	barrier();
	return ret;
}
EXPORT_SYMBOL_GPL(kpt_eight_call);

#define KPT_FILE_MAX	(256 << 10)

int kpt_kprobes_line(const char *file, unsigned long addr, char type,
		     char *out, size_t len)
{
	char path[64], key[24], *buf, *line, *nl;
	ssize_t n, have = 0;
	loff_t pos = 0;
	struct file *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kprobes/%s", file);
	/* The list's address column: as wide as a pointer (debugfs.c). */
	snprintf(key, sizeof(key), "%0*lx  %c  ", 2 * (int)sizeof(long), addr, type);
	buf = kvmalloc(KPT_FILE_MAX + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		kvfree(buf);
		return PTR_ERR(f) == -ENOENT ? -ENODEV : PTR_ERR(f);
	}
	while (have < KPT_FILE_MAX) {
		n = kpt_seq_read(f, buf + have, KPT_FILE_MAX - have, &pos);
		if (n <= 0)
			break;
		have += n;
	}
	filp_close(f, NULL);
	buf[have] = '\0';
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (str_has_prefix(line, key)) {
			strscpy(out, line, len);
			ret = 0;
			break;
		}
	}
	kvfree(buf);
	return ret;
}
EXPORT_SYMBOL_GPL(kpt_kprobes_line);

bool kpt_within_target(unsigned long addr)
{
	return within_module(addr, THIS_MODULE);
}
EXPORT_SYMBOL_GPL(kpt_within_target);

/* kpt_kret_spin() and kpt_kret_park() note their instance key on entry. */
unsigned long kpt_kret_fp;
EXPORT_SYMBOL_GPL(kpt_kret_fp);
int kpt_kret_spinning;
EXPORT_SYMBOL_GPL(kpt_kret_spinning);

/* A function with a static branch, and the parameter that flips it. */
static DEFINE_STATIC_KEY_FALSE(kpt_static_key);

noinline int kpt_static_fn(int x)
{
	if (static_branch_unlikely(&kpt_static_key))
		return x + 2;
	return x + 1;
}
EXPORT_SYMBOL_GPL(kpt_static_fn);

static int kpt_static_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_branch_enable(&kpt_static_key);
	else
		static_branch_disable(&kpt_static_key);
	return 0;
}

static int kpt_static_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", static_key_enabled(&kpt_static_key));
}

static const struct kernel_param_ops kpt_static_ops = {
	.set = kpt_static_set,
	.get = kpt_static_get,
};
module_param_cb(static_on, &kpt_static_ops, NULL, 0644);
MODULE_PARM_DESC(static_on, "the static branch of kpt_static_fn()");

static int kpt_sc_target(int x)
{
	return x + 4;
}

DEFINE_STATIC_CALL(kpt_sc, kpt_sc_target);

noinline int kpt_call_fn(int x)
{
	return static_call(kpt_sc)(x);
}
EXPORT_SYMBOL_GPL(kpt_call_fn);

/* The source line of kpt_warn_fn()'s WARN, to find its bug table entry. */
static const int kpt_warn_line = __LINE__ + 4;

noinline int kpt_warn_fn(int x)
{
	WARN_ON_ONCE(x == -12345);
	return x + 3;
}
EXPORT_SYMBOL_GPL(kpt_warn_fn);

unsigned long kpt_reserved_site(int kind)
{
	struct module *m = THIS_MODULE;
	unsigned int i;

	switch (kind) {
	case KPT_SITE_JUMP:
#ifdef CONFIG_JUMP_LABEL
		for (i = 0; i < m->num_jump_entries; i++) {
			struct jump_entry *e = &m->jump_entries[i];

			if (jump_entry_key(e) == &kpt_static_key.key)
				return jump_entry_code(e);
		}
#endif
		break;
	case KPT_SITE_CALL:
		/* (Only where static calls are patched inline: x86-64.) */
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
		for (i = 0; i < m->num_static_call_sites; i++) {
			struct static_call_site *c = &m->static_call_sites[i];
			long key = (long)&c->key + c->key;

			if ((key & ~STATIC_CALL_SITE_FLAGS) ==
			    (long)&STATIC_CALL_KEY(kpt_sc))
				return (unsigned long)&c->addr + c->addr;
		}
#endif
		break;
	case KPT_SITE_BUG:
#if defined(CONFIG_GENERIC_BUG) && defined(CONFIG_DEBUG_BUGVERBOSE)
		for (i = 0; i < m->num_bugs; i++) {
			struct bug_entry *b = &m->bug_table[i];

			if (b->line != kpt_warn_line)
				continue;
#ifdef CONFIG_GENERIC_BUG_RELATIVE_POINTERS
			return (unsigned long)&b->bug_addr_disp +
			       b->bug_addr_disp;
#else
			return b->bug_addr;
#endif
		}
#endif
		break;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kpt_reserved_site);

/*
 * "trigger": writing N calls the shell-level targets N times each, so
 * that run_tests.sh can hit probes placed on them: kpt_shell_a(),
 * kpt_shell_b(), kpt_asm_add(), kpt_opt_asm(), kpt_opt_c() and
 * kpt_static_fn() (kpt_asm_add() where the hand-written targets are,
 * kpt_opt_asm() on x86 only).
 */
#define KPT_TRIGGER_MAX		1000000

static int kpt_trigger_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n > KPT_TRIGGER_MAX)
		return -ERANGE;
	for (i = 0; i < n; i++) {
		kpt_shell_a(i);
		kpt_shell_b(i);
#ifdef KPT_ASM_TARGETS
		kpt_asm_add(i);
#endif
#ifdef CONFIG_X86
		kpt_opt_asm(i, i + 1, i + 2);
#endif
#ifdef CONFIG_ARM64
		kpt_opt_ref_blr_lr(i, 1, 0);
#endif
		kpt_opt_c(i, i + 1, i + 2);
		kpt_static_fn(i);
	}
	return 0;
}

static const struct kernel_param_ops kpt_trigger_ops = {
	.set = kpt_trigger_set,
};
module_param_cb(trigger, &kpt_trigger_ops, NULL, 0200);
MODULE_PARM_DESC(trigger, "write N: call the shell-level targets N times");

/*
 * "unload_call": writing N starts a kthread that calls
 * kpt_kret_unload_wait(N), which sleeps until this module's exit wakes it;
 * the kthread then waits to be stopped, also by the exit.  One at a time.
 * "unload_inside" reads how many calls entered kpt_kret_unload_wait().
 */
static DECLARE_WAIT_QUEUE_HEAD(kpt_unload_wq);
static bool kpt_unload_going;
static atomic_t kpt_unload_in = ATOMIC_INIT(0);
static struct task_struct *kpt_unload_task;
static DEFINE_MUTEX(kpt_unload_lock);

__used noinline int kpt_kret_unload_wait(int x)
{
	atomic_inc(&kpt_unload_in);
	wait_event_idle(kpt_unload_wq, READ_ONCE(kpt_unload_going));
	WRITE_ONCE(kpt_sink, x);
	return x + KPT_KRET_UNLOAD_ADD;
}

static int kpt_unload_thread(void *arg)
{
	WRITE_ONCE(kpt_sink, kpt_kret_unload_wait((long)arg));
	for (;;) {
		set_current_state(TASK_IDLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int kpt_unload_call_set(const char *val, const struct kernel_param *kp)
{
	struct task_struct *t;
	int x, ret;

	ret = kstrtoint(val, 0, &x);
	if (ret)
		return ret;
	mutex_lock(&kpt_unload_lock);
	if (kpt_unload_task) {
		ret = -EBUSY;
	} else {
		t = kthread_run(kpt_unload_thread, (void *)(long)x,
				"kpt_unload_call");
		if (IS_ERR(t))
			ret = PTR_ERR(t);
		else
			kpt_unload_task = t;
	}
	mutex_unlock(&kpt_unload_lock);
	return ret;
}

static const struct kernel_param_ops kpt_unload_call_ops = {
	.set = kpt_unload_call_set,
};
module_param_cb(unload_call, &kpt_unload_call_ops, NULL, 0200);
MODULE_PARM_DESC(unload_call,
		 "write N: a kthread calls kpt_kret_unload_wait(N) until the module's exit");

static int kpt_unload_inside_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&kpt_unload_in));
}

static const struct kernel_param_ops kpt_unload_inside_ops = {
	.get = kpt_unload_inside_get,
};
module_param_cb(unload_inside, &kpt_unload_inside_ops, NULL, 0444);
MODULE_PARM_DESC(unload_inside, "calls that entered kpt_kret_unload_wait()");

/* From the exit: the call in flight returns, its kthread ends. */
static void kpt_unload_release(void)
{
	WRITE_ONCE(kpt_unload_going, true);
	wake_up_all(&kpt_unload_wq);
	if (kpt_unload_task)
		kthread_stop(kpt_unload_task);
}

/* The probe this module puts on its own init text. */
static int kpt_init_hits;
module_param_named(init_hits, kpt_init_hits, int, 0444);
MODULE_PARM_DESC(init_hits, "hits of the probe on the init function");

static int kpt_init_reg_ret = -ENODATA;
module_param_named(init_reg_ret, kpt_init_reg_ret, int, 0444);
MODULE_PARM_DESC(init_reg_ret, "register_kprobe() result for that probe");

static struct kprobe kpt_init_kp;

static int kpt_init_addr_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%0*lx\n",
			 2 * (int)sizeof(long), (unsigned long)READ_ONCE(kpt_init_kp.addr));
}

static const struct kernel_param_ops kpt_init_addr_ops = {
	.get = kpt_init_addr_get,
};
module_param_cb(init_probe_addr, &kpt_init_addr_ops, NULL, 0444);
MODULE_PARM_DESC(init_probe_addr, "address of the probe on the init function");

static int kpt_init_pre(struct kprobe *p, struct pt_regs *regs)
{
	kpt_init_hits++;
	return 0;
}

static noinline int __init kpt_init_func(int x)
{
	asm volatile("");
	WRITE_ONCE(kpt_sink, x);
	return x + 12;
}

static int __init kpt_init(void)
{
	int (*fn)(int) = kpt_init_func;

	kpt_init_kp.addr = (kprobe_opcode_t *)fn;
	kpt_init_kp.pre_handler = kpt_init_pre;
	kpt_init_reg_ret = register_kprobe(&kpt_init_kp);
	/*
	 * Through the pointer, to the address probed: on ppc64 ELFv2 a
	 * direct call from the same module enters past the global entry.
	 */
	OPTIMIZER_HIDE_VAR(fn);
	if (!kpt_init_reg_ret)
		fn(1);
	/* The probe stays registered: its text goes away after this. */
	return 0;
}

static void __exit kpt_exit(void)
{
	kpt_unload_release();
	if (!kpt_init_reg_ret)
		unregister_kprobe(&kpt_init_kp);
}

module_init(kpt_init);
module_exit(kpt_exit);
MODULE_DESCRIPTION("Probe targets for the kprobes selftests");
MODULE_LICENSE("GPL");
