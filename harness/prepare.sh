#!/usr/bin/env bash
# Prepare a kernel source tree and its .config.
#   harness/prepare.sh ours       build/ours/src: tarball, upstream kprobes
#                                 removed, patches/ applied, our files
#                                 overlaid; build/ours/obj/.config
#   harness/prepare.sh upstream   build/baseline/src: the tarball as is
. "$(dirname "$0")/common.sh" "${1:-}"

# Upstream files that our series replaces (relative to the kernel root),
# for every architecture: the tree is the same whichever one is built.
# arm64 keeps its uprobes (probes/uprobes.c, asm/probes.h).
REMOVE=(
	kernel/kprobes.c
	include/linux/kprobes.h
	arch/x86/include/asm/kprobes.h
	'arch/x86/kernel/kprobes/*'
	'samples/kprobes/*'
	arch/arm64/include/asm/kprobes.h
	arch/arm64/kernel/probes/kprobes.c
	arch/arm64/kernel/probes/kprobes_trampoline.S
	arch/arm64/kernel/probes/decode-insn.c
	arch/arm64/kernel/probes/decode-insn.h
	arch/arm64/kernel/probes/simulate-insn.c
	arch/arm64/kernel/probes/simulate-insn.h
	arch/arm64/kernel/probes/Makefile
)
# Paths of the repo overlaid onto the kernel tree (tracked files only).
OVERLAY=(kernel include arch samples Documentation lib tools Kconfig.kprobes)
# Config fragments, applied in this order on top of tinyconfig: the
# tests' debug options, or the benchmark's production-like choices, then
# those of the configuration (KTEST_VARIANT, see common.sh).  Each is
# followed by its architecture's part where there is one: base.config by
# $KTEST_ARCH.config, any other F.config by F-$KTEST_ARCH.config.
FRAGMENTS=()
for f in "$TOP/harness/config/base.config" "$TOP/harness/config/$PROFILE.config" \
		"${VFRAGMENTS[@]}"; do
	FRAGMENTS+=("$f")
	a=${f%.config}-$KTEST_ARCH.config
	[ "$(basename "$f")" = base.config ] && a=$(dirname "$f")/$KTEST_ARCH.config
	[ -f "$a" ] && FRAGMENTS+=("$a")
done
# KTEST_CONFIG=fragment adds one more, for a one-off run (the next run
# without it rebuilds the usual configuration).
[ -n "${KTEST_CONFIG:-}" ] && FRAGMENTS+=("$(realpath "$KTEST_CONFIG")")
# Options whose absence makes the build pointless: without them a
# configuration would not test what it is there for.
ESSENTIAL=(KPROBES MODULES DEBUG_FS KPROBE_EVENTS "${VESSENTIAL[@]}")
[ "$PROFILE" = test ] && ESSENTIAL+=(KUNIT KPROBES_SANITY_TEST)
# (arm64 and i386 6.12 have no livepatch.)
[ "$PROFILE" = test ] && [ "$KTEST_ARCH" = x86_64 ] && ESSENTIAL+=(LIVEPATCH SAMPLE_LIVEPATCH)
# The console and output channel a boot needs, and what makes arm64's
# kernels like a distribution's.
[ "$KTEST_ARCH" = arm64 ] && ESSENTIAL+=(SERIAL_AMBA_PL011_CONSOLE VIRTIO_MMIO VIRTIO_CONSOLE
	ARM64_VA_BITS_48 ARM64_PTR_AUTH_KERNEL DYNAMIC_FTRACE_WITH_ARGS)
# i386: a 32-bit kernel at all, its console and output channel (8250),
# exact stack traces, the ftrace flavour kprobes on ftrace need, and the
# time system calls its 32-bit busybox makes (i386.config).
[ "$KTEST_ARCH" = i386 ] && ESSENTIAL+=(64BIT SERIAL_8250_CONSOLE UNWINDER_FRAME_POINTER
	DYNAMIC_FTRACE_WITH_REGS COMPAT_32BIT_TIME)
[ "$PROFILE" = clients ] && ESSENTIAL+=(BPF_SYSCALL BPF_JIT BPF_EVENTS BPF_KPROBE_OVERRIDE
	DEBUG_INFO_DWARF5 DEBUG_INFO_BTF CGROUP_BPF FAIL_FUNCTION IKHEADERS
	VIRTIO_BLK EXT4_FS PREEMPT_DYNAMIC UPROBES LKDTM)
[ "$PROFILE" = clients ] && [ "$KTEST_ARCH" = x86_64 ] &&
	ESSENTIAL+=(LIVEPATCH SAMPLE_LIVEPATCH MITIGATION_RETPOLINE X86_KERNEL_IBT)
# arm64's disks are on PCI, and its own mitigations are a distribution's
# (harness/config/clients-arm64.config).
[ "$PROFILE" = clients ] && [ "$KTEST_ARCH" = arm64 ] &&
	ESSENTIAL+=(PCI_HOST_GENERIC VIRTIO_PCI UNMAP_KERNEL_AT_EL0)

[ -f "$TARBALL" ] || die "$TARBALL not found (apt-get install linux-source-6.12)"
mkdir -p "$TDIR"

# ---- source tree -------------------------------------------------------
# The stamp names everything that needs a fresh extraction when it changes:
# the tarball, the list of removed files, the patches.  The overlay file
# list is kept apart (overlay.list): new files are just copied, but a removed one
# forces a fresh extraction so that no stale file of ours stays behind.
stamp=$(
	stat -c 'tarball %n %s %Y' "$TARBALL"
	if [ "$TREE" = ours ]; then
		echo "remove ${REMOVE[*]}"
		for p in "$TOP"/patches/*.patch; do
			[ -f "$p" ] && sha256sum "$p"
		done
	fi
	true
)
overlay_list=$TDIR/overlay.list
new_list=$(mktemp)
trap 'rm -f "$new_list"' EXIT
if [ "$TREE" = ours ]; then
	tracked_files "${OVERLAY[@]}" | tr '\0' '\n' | sort > "$new_list"
fi

fresh=
if [ ! -f "$TDIR/src.stamp" ] || [ "$stamp" != "$(cat "$TDIR/src.stamp")" ]; then
	fresh="stamp changed"
elif [ -f "$overlay_list" ] && [ -n "$(comm -23 "$overlay_list" "$new_list")" ]; then
	fresh="files removed from the overlay: $(comm -23 "$overlay_list" "$new_list" | tr '\n' ' ')"
fi

if [ -n "$fresh" ]; then
	say "extracting $(basename "$TARBALL") into ${SRC#$TOP/} ($fresh)"
	rm -f "$TDIR/src.stamp" "$overlay_list"
	# Deleting a kernel tree takes minutes on a slow disk: move the old
	# one aside and delete it in the background.
	if [ -d "$SRC" ]; then
		old=$(mktemp -d "$BUILD/.trash.XXXXXX")
		mv "$SRC" "$old/"
		(setsid rm -rf "$old" </dev/null >/dev/null 2>&1 &)
	fi
	mkdir -p "$SRC"
	tar -xf "$TARBALL" -C "$SRC" --strip-components=1
	if [ "$TREE" = ours ]; then
		(cd "$SRC" && for f in "${REMOVE[@]}"; do rm -rf $f; done)
		for p in "$TOP"/patches/*.patch; do
			[ -f "$p" ] || continue
			say "applying patches/$(basename "$p")"
			if ! patch -d "$SRC" -p1 --forward --batch --no-backup-if-mismatch \
					-r - < "$p" > "$TDIR/patch.log" 2>&1; then
				cat "$TDIR/patch.log" >&2
				die "patches/$(basename "$p") does not apply to $(basename "$TARBALL" .tar.xz)" \
				    "($(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo '?'));" \
				    "refresh it against that tree"
			fi
		done
	fi
	printf '%s\n' "$stamp" > "$TDIR/src.stamp"
fi

if [ "$TREE" = ours ]; then
	# Copy only files whose content changed, with a fresh mtime, so that
	# kbuild rebuilds exactly what changed.
	n=$(wc -l < "$new_list")
	say "overlaying $n tracked files of ours onto ${SRC#$TOP/}"
	tr '\n' '\0' < "$new_list" |
		rsync -r --perms --checksum --from0 --files-from=- "$TOP/" "$SRC/"
	cp "$new_list" "$overlay_list"
fi

# ---- .config -------------------------------------------------------------
# tinyconfig, then the fragments (each symbol's earlier lines dropped),
# then olddefconfig.  Generated as .config.ktest and moved over .config
# only if it differs, so an unchanged config does not touch the build.
mkdir -p "$OBJ"
cfg=$OBJ/.config.ktest
cfglog=$LOGS/config-$TREE$SFX.log
mkdir -p "$LOGS"
"${KMAKE[@]}" KCONFIG_CONFIG=.config.ktest tinyconfig > "$cfglog" 2>&1 ||
	{ cat "$cfglog" >&2; die "make tinyconfig failed"; }
syms=$(sed -nE 's/^(# )?(CONFIG_[A-Za-z0-9_]+)[= ].*/\2/p' "${FRAGMENTS[@]}" | sort -u | paste -sd'|')
{ grep -vE "^(# )?($syms)[= ]" "$cfg" || true; cat "${FRAGMENTS[@]}"; } > "$cfg.tmp"
mv "$cfg.tmp" "$cfg"
"${KMAKE[@]}" KCONFIG_CONFIG=.config.ktest olddefconfig >> "$cfglog" 2>&1 ||
	{ cat "$cfglog" >&2; die "make olddefconfig failed"; }
if cmp -s "$cfg" "$OBJ/.config"; then
	rm -f "$cfg"
else
	mv "$cfg" "$OBJ/.config"
	say "wrote ${OBJ#$TOP/}/.config"
fi

# Did every requested option take?  The last fragment line for a symbol wins.
bad=0
while IFS=' ' read -r sym want; do
	got=$(sed -n "s/^CONFIG_$sym=//p" "$OBJ/.config")
	got=${got:-n}
	[ "$got" = "$want" ] && continue
	ess=
	for e in "${ESSENTIAL[@]}"; do [ "$e" = "$sym" ] && ess=1; done
	if [ -n "$ess" ]; then
		echo "ktest: ERROR: CONFIG_$sym=$want requested, but the config has $got" >&2
		bad=1
	else
		say "note: CONFIG_$sym=$want requested, but the config has $got"
	fi
done < <(sed -nE -e 's/^CONFIG_([A-Za-z0-9_]+)=(.*)/\1 \2/p' \
		 -e 's/^# CONFIG_([A-Za-z0-9_]+) is not set/\1 n/p' "${FRAGMENTS[@]}" |
	 awk '{ v[$1] = $2; if (!($1 in o)) { o[$1] = ++n; k[n] = $1 } }
	      END { for (i = 1; i <= n; i++) print k[i], v[k[i]] }')
[ $bad -eq 0 ] || die "essential options missing from ${OBJ#$TOP/}/.config"
