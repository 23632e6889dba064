# SPDX-License-Identifier: GPL-2.0
#
# Writes kpb_cfuncs.c for kprobes_bench_funcs.ko (figure 13): KPB_NCFUNCS
# C functions, read from kpb.h, and kpb_cfuncs[], their addresses.  The
# build gives each function an ftrace call at its entry: where perf probe,
# kprobe_events' p:FUNC and bpftrace put their probes.  A constant of its
# own keeps each from being folded into another.
#
#   awk -f kpb_cfuncs.awk kpb.h > kpb_cfuncs.c
$1 == "#define" && $2 == "KPB_NCFUNCS" { n = $3 }
END {
	if (n < 1) {
		print "kpb_cfuncs.awk: no KPB_NCFUNCS in kpb.h" > "/dev/stderr"
		exit 1
	}
	print "// SPDX-License-Identifier: GPL-2.0"
	print "/* Written by kpb_cfuncs.awk from kpb.h: do not edit. */"
	print "#include <linux/export.h>"
	print "#include <linux/compiler.h>"
	print "#include \"kpb.h\"\n"
	for (i = 0; i < n; i++)
		printf "static noinline int kpb_cf_%d(int x)\n{\n\treturn x * 3 + %d;\n}\n\n", i, i
	print "const kpb_fn_t kpb_cfuncs[KPB_NCFUNCS] = {"
	for (i = 0; i < n; i++)
		printf "\tkpb_cf_%d,\n", i
	print "};"
	print "EXPORT_SYMBOL_GPL(kpb_cfuncs);"
}
