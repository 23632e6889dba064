// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of decode.c's classification: instruction bytes in, how a
 * hit executes them (or the refusal and a word of its reason) out.  The
 * expected values are written by hand from the instruction set manuals,
 * not taken from the rule table.  Both modes: 64-bit code, and 32-bit
 * code decoded as such.  Built in: kx_classify() is the
 * backend's own.
 */

#include <kunit/test.h>
#include <linux/kprobes.h>
#include <linux/kprobes_arch.h>
#include <linux/string.h>
#include <asm/ibt.h>
#include <asm/insn.h>

#include "backend.h"

#define KXD_NO_TARGET	LONG_MIN

/*
 * @bytes: the instruction, and for the sti cases what follows it; the
 * rest of the text is nops.
 */
struct kxd_case {
	const char	*name;
	const char	*bytes;
	u8		nbytes;
	u8		len;		/* the instruction's length */
	u8		how;		/* KX_*, KX_REFUSED */
	const char	*why;		/* a word of the reason, if refused */
	long		target;		/* a branch's destination - its address */
};

#define STEP(n, l, b)	{ n, b, sizeof(b) - 1, l, KX_STEP, NULL, KXD_NO_TARGET }
#define EMUL(n, l, h, b) { n, b, sizeof(b) - 1, l, h, NULL, KXD_NO_TARGET }
#define BRANCH(n, l, h, t, b) { n, b, sizeof(b) - 1, l, h, NULL, t }
#define REFUSED(n, l, w, b) { n, b, sizeof(b) - 1, l, KX_REFUSED, w, KXD_NO_TARGET }

static const struct kxd_case kxd_cases[] = {
	STEP("nop", 1, "\x90"),
	STEP("push %rbp", 1, "\x55"),
	STEP("mov %rsp, %rbp", 3, "\x48\x89\xe5"),
	STEP("mov %ds, %eax", 2, "\x8c\xd8"),
	STEP("movl $1, (%rax)", 6, "\xc7\x00\x01\x00\x00\x00"),
	STEP("wrmsr", 2, "\x0f\x30"),
	STEP("mov %rax, %cr3", 3, "\x0f\x22\xd8"),
	STEP("clac", 3, "\x0f\x01\xca"),
	STEP("stac", 3, "\x0f\x01\xcb"),
	STEP("xgetbv", 3, "\x0f\x01\xd0"),
	STEP("rdgsbase %rax", 5, "\xf3\x48\x0f\xae\xc8"),
	STEP("pshufb %xmm1, %xmm0", 5, "\x66\x0f\x38\x00\xc1"),
	STEP("vzeroupper", 3, "\xc5\xf8\x77"),
	STEP("lock incl (%rax)", 3, "\xf0\xff\x00"),
	EMUL("pushf", 1, KX_STEP_PUSHF, "\x9c"),
	EMUL("popf", 1, KX_POPF, "\x9d"),
	EMUL("cli", 1, KX_CLI, "\xfa"),
	EMUL("sti; nop", 1, KX_STI, "\xfb"),
	EMUL("ret", 1, KX_RET, "\xc3"),
	EMUL("ret $8", 3, KX_RET, "\xc2\x08\x00"),
	EMUL("call *%rax", 2, KX_CALL_IND, "\xff\xd0"),
	EMUL("jmp *%rax", 2, KX_JMP_IND, "\xff\xe0"),
	EMUL("call *%r11", 3, KX_CALL_IND, "\x41\xff\xd3"),
	EMUL("jmp *0x10(%rip)", 6, KX_JMP_IND, "\xff\x25\x10\x00\x00\x00"),
	EMUL("jmp *(%rax, %rcx, 8)", 3, KX_JMP_IND, "\xff\x24\xc8"),
	BRANCH("jmp .+7", 2, KX_JMP, 7, "\xeb\x05"),
	BRANCH("jmp rel32", 5, KX_JMP, 0x105, "\xe9\x00\x01\x00\x00"),
	BRANCH("call rel32", 5, KX_CALL, 5 - 0x10, "\xe8\xf0\xff\xff\xff"),
	BRANCH("je .+4", 2, KX_JCC, 4, "\x74\x02"),
	BRANCH("jne rel32", 6, KX_JCC, 6 + 0x20, "\x0f\x85\x20\x00\x00\x00"),
	BRANCH("loop .", 2, KX_LOOP, 0, "\xe2\xfe"),
	BRANCH("jrcxz .+2", 2, KX_LOOP, 2, "\xe3\x00"),

	REFUSED("popfw", 2, "popf", "\x66\x9d"),
	REFUSED("retw", 2, "ret", "\x66\xc3"),
	REFUSED("jmpw", 3, "jmp", "\x66\xeb\x05"),
	REFUSED("je with 0x66", 3, "jcc", "\x66\x74\x02"),
	REFUSED("loopl", 3, "address-size", "\x67\xe2\xfd"),
	REFUSED("jmp *%gs:0", 8, "%gs", "\x65\xff\x24\x25\x00\x00\x00\x00"),
	REFUSED("lcall *(%rax)", 2, "far", "\xff\x18"),
	REFUSED("ljmp *(%rax)", 2, "far", "\xff\x28"),
	REFUSED("lret", 1, "far", "\xcb"),
	REFUSED("iret", 1, "iret", "\xcf"),
	REFUSED("iretq", 2, "iret", "\x48\xcf"),
	REFUSED("int3", 1, "int3", "\xcc"),
	REFUSED("int $0x80", 2, "int", "\xcd\x80"),
	REFUSED("int1", 1, "int1", "\xf1"),
	REFUSED("hlt", 1, "hlt", "\xf4"),
	REFUSED("sti; hlt", 1, "sti", "\xfb\xf4"),
	REFUSED("sti; mwait", 1, "sti", "\xfb\x0f\x01\xc9"),
	REFUSED("mov %eax, %ds", 2, "segment", "\x8e\xd8"),
	REFUSED("xbegin", 6, "xbegin", "\xc7\xf8\x00\x00\x00\x00"),
	REFUSED("syscall", 2, "syscall", "\x0f\x05"),
	REFUSED("sysretq", 3, "sysret", "\x48\x0f\x07"),
	REFUSED("ud2", 2, "ud2", "\x0f\x0b"),
	REFUSED("pop %gs", 2, "%gs", "\x0f\xa9"),
	REFUSED("lss", 3, "lss", "\x0f\xb2\x00"),
	REFUSED("swapgs", 3, "swapgs", "\x0f\x01\xf8"),
	REFUSED("vmlaunch", 3, "guest", "\x0f\x01\xc2"),
	REFUSED("mwait", 3, "mwait", "\x0f\x01\xc9"),
	REFUSED("erets", 4, "FRED", "\xf2\x0f\x01\xca"),
	REFUSED("wrgsbase %rax", 5, "wrgsbase", "\xf3\x48\x0f\xae\xd8"),
	{ "endbr64", "\xf3\x0f\x1e\xfa", 4, 4,
	  HAS_KERNEL_IBT ? KX_REFUSED : KX_STEP,
	  HAS_KERNEL_IBT ? "endbr64" : NULL, KXD_NO_TARGET },
};

/* 32-bit code, decoded as such (the table's rows for 32-bit mode). */
static const struct kxd_case kxd32_cases[] = {
	STEP("push %ebp", 1, "\x55"),
	STEP("mov %esp,%ebp", 2, "\x89\xe5"),
	STEP("inc %eax", 1, "\x40"),
	STEP("push %ds", 1, "\x1e"),
	STEP("vmovdqa %xmm1,%xmm0", 4, "\xc5\xf9\x6f\xc1"),
	EMUL("call *%eax", 2, KX_CALL_IND, "\xff\xd0"),
	EMUL("jmp *0x10(,%eax,4)", 7, KX_JMP_IND, "\xff\x24\x85\x10\x00\x00\x00"),
	EMUL("popf", 1, KX_POPF, "\x9d"),
	BRANCH("call rel32", 5, KX_CALL, 5 + 0x40, "\xe8\x40\x00\x00\x00"),
	BRANCH("jecxz .+2", 2, KX_LOOP, 2, "\xe3\x00"),
	BRANCH("je .+4", 2, KX_JCC, 4, "\x74\x02"),
	REFUSED("pop %es", 1, "segment", "\x07"),
	REFUSED("pop %ss", 1, "segment", "\x17"),
	REFUSED("pop %ds", 1, "segment", "\x1f"),
	REFUSED("les (%eax),%eax", 2, "segment", "\xc4\x00"),
	REFUSED("lds (%eax),%eax", 2, "segment", "\xc5\x00"),
	REFUSED("mov %eax,%fs", 2, "segment", "\x8e\xe0"),
	REFUSED("jmpw", 3, "jmp", "\x66\xeb\x05"),
	REFUSED("loopw", 3, "address-size", "\x67\xe2\xfd"),
	REFUSED("call *%fs:0", 7, "%fs", "\x64\xff\x15\x00\x00\x00\x00"),
	REFUSED("iret", 1, "iret", "\xcf"),
	REFUSED("into", 1, "into", "\xce"),
	REFUSED("sysenter", 2, "sysenter", "\x0f\x34"),
	REFUSED("hlt", 1, "hlt", "\xf4"),
};

static void kxd_case_desc(const struct kxd_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kxd, kxd_cases, kxd_case_desc);
KUNIT_ARRAY_PARAM(kxd32, kxd32_cases, kxd_case_desc);

static void kxd_check(struct kunit *test, enum insn_mode mode)
{
	const struct kxd_case *c = test->param_value;
	u8 buf[2 * MAX_INSN_SIZE];
	struct arch_kprobe_site a = {};
	unsigned long addr = (unsigned long)buf;
	const char *why = "not set";
	struct insn insn;
	int ret;

	/* The text the case sits in: kx_classify() may read past it (sti). */
	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, c->bytes, c->nbytes);

	KUNIT_ASSERT_GE(test, insn_decode(&insn, buf, MAX_INSN_SIZE, mode), 0);
	KUNIT_ASSERT_EQ(test, (int)insn.length, (int)c->len);

	ret = kx_classify(&a, &insn, addr, &why);
	if (c->how == KX_REFUSED) {
		KUNIT_EXPECT_EQ(test, ret, -EINVAL);
		KUNIT_ASSERT_NOT_NULL(test, why);
		KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, c->why),
					  "reason \"%s\" lacks \"%s\"", why, c->why);
		return;
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_NULL(test, why);
	KUNIT_EXPECT_EQ(test, (int)a.how, (int)c->how);
	KUNIT_EXPECT_EQ(test, (int)a.len, (int)c->len);
	if (c->target != KXD_NO_TARGET)
		KUNIT_EXPECT_EQ(test, (long)(a.target - addr), c->target);
}

static void kxd_classify(struct kunit *test)
{
	kxd_check(test, INSN_MODE_64);
}

static void kxd_classify_32(struct kunit *test)
{
	kxd_check(test, INSN_MODE_32);
}

/* What emulation needs of a few operands, decoded once at prepare. */
static void kxd_operands(struct kunit *test)
{
	static const u8 ret8[] = { 0xc2, 0x08, 0x00 };
	static const u8 sib[] = { 0xff, 0x24, 0xc8 };		/* jmp *(%rax,%rcx,8) */
	static const u8 r11[] = { 0x41, 0xff, 0xd3 };		/* call *%r11 */
	/* jmp *0x12345678 */
	static const u8 abs32[] = { 0xff, 0x25, 0x78, 0x56, 0x34, 0x12 };
	struct arch_kprobe_site a = {};
	const char *why;
	struct insn insn;

	KUNIT_ASSERT_GE(test, insn_decode(&insn, ret8, sizeof(ret8), INSN_MODE_64), 0);
	KUNIT_ASSERT_EQ(test, kx_classify(&a, &insn, (unsigned long)ret8, &why), 0);
	KUNIT_EXPECT_EQ(test, (int)a.ret_pop, 8);

	KUNIT_ASSERT_GE(test, insn_decode(&insn, sib, sizeof(sib), INSN_MODE_64), 0);
	KUNIT_ASSERT_EQ(test, kx_classify(&a, &insn, (unsigned long)sib, &why), 0);
	KUNIT_EXPECT_EQ(test, (int)a.base, 0);			/* %rax */
	KUNIT_EXPECT_EQ(test, (int)a.index, 1);			/* %rcx */
	KUNIT_EXPECT_EQ(test, (int)a.cc, KX_IND_MEM | 3);	/* scale 8 */

	KUNIT_ASSERT_GE(test, insn_decode(&insn, r11, sizeof(r11), INSN_MODE_64), 0);
	KUNIT_ASSERT_EQ(test, kx_classify(&a, &insn, (unsigned long)r11, &why), 0);
	KUNIT_EXPECT_EQ(test, (int)a.base, 11);
	KUNIT_EXPECT_EQ(test, (int)a.index, KX_NO_REG);
	KUNIT_EXPECT_EQ(test, (int)a.cc, 0);			/* a register */

	/* 32-bit: an absolute operand, no base (64-bit reads it RIP-relative) */
	KUNIT_ASSERT_GE(test, insn_decode(&insn, abs32, sizeof(abs32), INSN_MODE_32), 0);
	KUNIT_ASSERT_EQ(test, kx_classify(&a, &insn, (unsigned long)abs32, &why), 0);
	KUNIT_EXPECT_EQ(test, (int)a.how, KX_JMP_IND);
	KUNIT_EXPECT_EQ(test, (long)a.target, 0x12345678L);
	KUNIT_EXPECT_EQ(test, (int)a.base, KX_NO_REG);
	KUNIT_EXPECT_EQ(test, (int)a.index, KX_NO_REG);
	KUNIT_EXPECT_EQ(test, (int)a.cc, KX_IND_MEM);
}

/*
 * Emulation of the branches that read %cx and ZF, on a made-up register
 * set.  The displacement is 0x10 throughout: taken lands 2 + 0x10 bytes
 * past the instruction's address, not taken 2 bytes past it.  The
 * encodings are the same in 32-bit and 64-bit code.
 */
struct kxd_emul_case {
	const char	*name;
	const char	*bytes;
	unsigned long	cx;
	unsigned long	flags;
	bool		taken;
	unsigned long	cx_after;
};

static const struct kxd_emul_case kxd_emul_cases[] = {
	{ "loop, cx 2", "\xe2\x10", 2, 0, true, 1 },
	{ "loop, cx 1", "\xe2\x10", 1, 0, false, 0 },
	{ "loope, cx 2, ZF", "\xe1\x10", 2, X86_EFLAGS_ZF, true, 1 },
	{ "loope, cx 2, no ZF", "\xe1\x10", 2, 0, false, 1 },
	{ "loope, cx 1, ZF", "\xe1\x10", 1, X86_EFLAGS_ZF, false, 0 },
	{ "loopne, cx 2, no ZF", "\xe0\x10", 2, 0, true, 1 },
	{ "loopne, cx 2, ZF", "\xe0\x10", 2, X86_EFLAGS_ZF, false, 1 },
	{ "loopne, cx 1, no ZF", "\xe0\x10", 1, 0, false, 0 },
	{ "jrcxz, cx 0", "\xe3\x10", 0, 0, true, 0 },
	{ "jrcxz, cx 3, ZF", "\xe3\x10", 3, X86_EFLAGS_ZF, false, 3 },
};

static const enum insn_mode kxd_kernel_mode =
	IS_ENABLED(CONFIG_X86_64) ? INSN_MODE_64 : INSN_MODE_32;

/* Classify @code into @s as a probe at @code would be. */
static void kxd_site(struct kunit *test, struct kprobe_site *s, const u8 *code,
		     int len)
{
	const char *why = NULL;
	struct insn insn;

	memset(s, 0, sizeof(*s));
	s->addr = (kprobe_opcode_t *)code;
	KUNIT_ASSERT_GE(test, insn_decode(&insn, code, len, kxd_kernel_mode), 0);
	KUNIT_ASSERT_EQ_MSG(test, kx_classify(&s->arch, &insn, (unsigned long)code, &why),
			    0, "refused: %s", why ? why : "?");
}

static void kxd_emulate_loop(struct kunit *test)
{
	const struct kxd_emul_case *c;
	struct kprobe_site s;
	unsigned long at;
	struct pt_regs regs;

	for (c = kxd_emul_cases; c < kxd_emul_cases + ARRAY_SIZE(kxd_emul_cases); c++) {
		kxd_site(test, &s, (const u8 *)c->bytes, 2);
		at = (unsigned long)c->bytes;
		memset(&regs, 0, sizeof(regs));
		regs.ip = at + 1;			/* past the int3 */
		regs.cx = c->cx;
		regs.flags = X86_EFLAGS_FIXED | c->flags;
		KUNIT_ASSERT_TRUE_MSG(test, kx_emulate(&s, &regs), "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, regs.ip, at + 2 + (c->taken ? 0x10 : 0),
				    "%s: %s", c->name, c->taken ? "not taken" : "taken");
		KUNIT_EXPECT_EQ_MSG(test, regs.cx, c->cx_after, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, regs.flags, X86_EFLAGS_FIXED | c->flags,
				    "%s: flags changed", c->name);
	}
}

/* ret and ret $8: the return address popped, then 8 more bytes for $8. */
static void kxd_emulate_ret(struct kunit *test)
{
	static const u8 ret[] = { 0xc3 };
	static const u8 ret8[] = { 0xc2, 0x08, 0x00 };
	unsigned long stack[4] = { 0x1111, 0x2222, 0x3333, 0x4444 };
	struct kprobe_site s;
	struct pt_regs regs;

	kxd_site(test, &s, ret, sizeof(ret));
	memset(&regs, 0, sizeof(regs));
	regs.sp = (unsigned long)&stack[1];
	KUNIT_ASSERT_TRUE(test, kx_emulate(&s, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, 0x2222UL);
	KUNIT_EXPECT_EQ(test, regs.sp, (unsigned long)&stack[2]);

	kxd_site(test, &s, ret8, sizeof(ret8));
	memset(&regs, 0, sizeof(regs));
	regs.sp = (unsigned long)&stack[1];
	KUNIT_ASSERT_TRUE(test, kx_emulate(&s, &regs));
	KUNIT_EXPECT_EQ(test, regs.ip, 0x2222UL);
	KUNIT_EXPECT_EQ(test, regs.sp, (unsigned long)&stack[2] + 8);
}

static struct kunit_case kxd_test_cases[] = {
	KUNIT_CASE_PARAM(kxd_classify, kxd_gen_params),
	KUNIT_CASE_PARAM(kxd_classify_32, kxd32_gen_params),
	KUNIT_CASE(kxd_operands),
	KUNIT_CASE(kxd_emulate_loop),
	KUNIT_CASE(kxd_emulate_ret),
	{}
};

static struct kunit_suite kxd_suite = {
	.name = "kprobes_x86_decode",
	.test_cases = kxd_test_cases,
};

kunit_test_suite(kxd_suite);
