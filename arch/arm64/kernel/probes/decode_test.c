// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit test of decode.c: A64 instruction words in, how a hit executes
 * them (or the refusal and a word of its reason) out, and what a
 * simulated register branch leaves in PSTATE.BTYPE.  The words were
 * written by hand from the Arm architecture manual and checked against
 * binutils' disassembler (-march=armv8.8-a+mops), not taken from the
 * rule table.  Built in: the decoder is the backend's own.
 */

#include <kunit/test.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#include "decode-insn.h"

struct kad_case {
	const char	*name;
	u32		insn;
	u8		how;		/* ARM64_PROBE_* */
	const char	*why;		/* a word of the reason, if refused */
};

#define KAD(n, i, h)		{ n, i, h, NULL }
#define KAD_REFUSED(n, i, w)	{ n, i, ARM64_PROBE_REFUSED, w }

static const struct kad_case kad_cases[] = {
	KAD("nop", 0xd503201f, ARM64_PROBE_NOP),
	KAD("bti c", 0xd503245f, ARM64_PROBE_NOP),
	/* A barrier for what follows: it has to run, so it is stepped. */
	KAD("csdb", 0xd503229f, ARM64_PROBE_STEP),
	KAD("stp x29, x30, [sp, #-16]!", 0xa9bf7bfd, ARM64_PROBE_STEP),
	KAD("ldr x0, [x1]", 0xf9400020, ARM64_PROBE_STEP),
	KAD("br x1", 0xd61f0020, ARM64_PROBE_BR),
	KAD("blr x1", 0xd63f0020, ARM64_PROBE_BLR),
	/* FEAT_MOPS: prologue, main and epilogue of one copy or set. */
	KAD_REFUSED("cpyfp [x0]!, [x1]!, x2!", 0x19010440, "CPY"),
	KAD_REFUSED("cpyfm [x0]!, [x1]!, x2!", 0x19410440, "CPY"),
	KAD_REFUSED("cpyfe [x0]!, [x1]!, x2!", 0x19810440, "CPY"),
	KAD_REFUSED("cpyp [x0]!, [x1]!, x2!", 0x1d010440, "CPY"),
	KAD_REFUSED("cpym [x0]!, [x1]!, x2!", 0x1d410440, "CPY"),
	KAD_REFUSED("cpye [x0]!, [x1]!, x2!", 0x1d810440, "CPY"),
	KAD_REFUSED("cpyfpwt [x0]!, [x1]!, x2!", 0x19011440, "CPY"),
	KAD_REFUSED("setp [x0]!, x1!, x2", 0x19c20420, "SET"),
	KAD_REFUSED("setm [x0]!, x1!, x2", 0x19c24420, "SET"),
	KAD_REFUSED("sete [x0]!, x1!, x2", 0x19c28420, "SET"),
	KAD_REFUSED("setp [x3]!, x4!, x5", 0x19c50483, "SET"),
	KAD_REFUSED("setgp [x0]!, x1!, x2", 0x1dc20420, "SET"),
	KAD_REFUSED("udf #0", 0x00000000, "UDF"),
};

static void kad_case_desc(const struct kad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kad, kad_cases, kad_case_desc);

static void kad_classify(struct kunit *test)
{
	const struct kad_case *c = test->param_value;
	struct arm64_probe_insn d;
	const char *why = "not set";

	KUNIT_EXPECT_EQ(test, (int)arm64_probe_decode(c->insn, 0x1000, &d, &why),
			(int)c->how);
	KUNIT_EXPECT_EQ(test, (int)d.how, (int)c->how);
	if (c->how != ARM64_PROBE_REFUSED) {
		KUNIT_EXPECT_NULL(test, why);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, why);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, c->why),
				  "reason \"%s\" lacks \"%s\"", why, c->why);
#ifdef CONFIG_UPROBES
	{
		struct arch_probe_insn asi = {};

		/* uprobes share the table: refused there too. */
		KUNIT_EXPECT_EQ(test, (int)arm_probe_decode_insn(c->insn, &asi),
				(int)INSN_REJECTED);
	}
#endif
}

/*
 * The BTYPE a simulated branch leaves for the instruction it lands on.
 * By the architecture: BLR gives 0b10; BR gives 0b01 through x16 or
 * x17, or from a page without BTI's guard, and 0b11 otherwise.
 */
static void kad_branch_type(struct kunit *test)
{
	static const struct {
		const char	*name;
		u32		insn;
		bool		guarded;
		u64		btype;
	} b[] = {
		{ "br x1, unguarded", 0xd61f0020, false, 0x1 },
		{ "br x1, guarded", 0xd61f0020, true, 0x3 },
		{ "br x16, guarded", 0xd61f0200, true, 0x1 },
		{ "br x16, unguarded", 0xd61f0200, false, 0x1 },
		{ "blr x1, guarded", 0xd63f0020, true, 0x2 },
		{ "blr x1, unguarded", 0xd63f0020, false, 0x2 },
	};
	const unsigned long pc = 0x1000, dest = 0x5000;
	struct arm64_probe_insn d;
	struct pt_regs regs;
	const char *why;
	int i;

	for (i = 0; i < ARRAY_SIZE(b); i++) {
		memset(&regs, 0, sizeof(regs));
		arm64_probe_decode(b[i].insn, pc, &d, &why);
		d.guarded = b[i].guarded;
		regs.pc = pc;
		regs.regs[1] = dest;
		regs.regs[16] = dest;
		/* a stale BTYPE, which the simulation must replace */
		regs.pstate = PSR_BTYPE_J;
		arm64_probe_simulate(&d, &regs);
		KUNIT_EXPECT_EQ_MSG(test, regs.pc, (u64)dest, "%s", b[i].name);
		KUNIT_EXPECT_EQ_MSG(test, (regs.pstate & PSR_BTYPE_MASK) >> PSR_BTYPE_SHIFT,
				    b[i].btype, "%s", b[i].name);
	}
}

static struct kunit_case kad_test_cases[] = {
	KUNIT_CASE_PARAM(kad_classify, kad_gen_params),
	KUNIT_CASE(kad_branch_type),
	{}
};

static struct kunit_suite kad_suite = {
	.name = "kprobes_arm64_decode",
	.test_cases = kad_test_cases,
};

kunit_test_suite(kad_suite);
