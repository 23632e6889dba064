#!/usr/bin/env bash
# make clients / make clients-baseline: the tracing tools people use, on a
# distribution-like kernel (harness/config/clients.config), in a Debian
# trixie guest (harness/clients/rootfs.sh), each asserting what it saw.
#   harness/clients/clients.sh ours|upstream
# Steps: build the kernel (KTEST_PROFILE=clients, build/TREE/obj-clients);
# make or reuse the disk image; on the host, in the image's tree as a
# chroot, turn the kernel's debug info into perf probe definitions and
# compile the SystemTap module against the kernel's build tree; put those,
# the kernel's modules and the client scripts (guest/) on a second disk;
# boot; judge the KTAP output (harness/ktap.py, harness/clients/expected).
# Environment: KTEST_VARIANTS=base|fprobe (default base: fprobe off),
# CLIENTS=perf,bpftrace,... (a one-off run of some), KTEST_TIMEOUT (the
# guest's limit as given; otherwise 1,500 s scaled by the pace, as the
# pace variables of harness/common.sh say).  KTEST_PEER=1 (make
# peer-tests): the other projects' own suites instead (perf_test and
# BPF's test_progs, on the bpf configuration; label peer, judged by
# harness/clients/expected-peer; 3,600 s scaled).
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
export KTEST_PROFILE=clients
. "$H/../common.sh" "${1:-}"
variants=${KTEST_VARIANTS:-base}
peer=${KTEST_PEER:-}
# make test's configurations (the Makefile's default) are not this
# profile's.
case "$variants" in *preempt*) variants=base ;; esac
# The peers' suites run on the clients' configuration with BPF's
# selftests' own merged in (the bpf configuration, common.sh), with and
# without IBT (KTEST_VARIANTS=bpf or bpf-noibt for one of them).
if [ -n "$peer" ]; then
	CLIENTS=${CLIENTS:-perf_test,test_progs}
	case "$variants" in *bpf*) ;; *) variants="bpf bpf-noibt" ;; esac
	[ -n "$DARCH" ] && variants=bpf
fi
# The image's tree is also where the host-side steps run (in_chroot), for
# an x86-64 guest; an arm64 guest's tree is arm64 code, so they run in the
# host's toolchain tree instead, which has perf, SystemTap and arm64's
# cross compiler (harness/clients/packages-toolchain).
IMG=$BUILD/clients${DARCH:+-$DARCH}/rootfs.img
R=$BUILD/clients/rootfs
[ -n "$DARCH" ] && R=$BUILD/clients/toolchain

"$H/../deps.sh" clients
run_start=$SECONDS
for v in $variants; do
	KTEST_VARIANT=$v "$H/../prepare.sh" "$TREE"
	KTEST_VARIANT=$v "$H/../build.sh" "$TREE"
done
"$H/rootfs.sh"
if [ -n "$peer" ] || [ -n "$DARCH" ]; then "$H/rootfs.sh" toolchain; fi

# in_chroot CMD...: run CMD in the image's tree, with build/ at its own
# path, in a private mount namespace (the mounts go when it ends).
in_chroot()
{
	mkdir -p "$R$BUILD" "$R/proc" "$R/dev"
	unshare -m -- sh -c 'mount --bind "$1" "$2$1" && mount -t proc proc "$2/proc" &&
		mount --rbind /dev "$2/dev" && shift 2 && exec chroot "$@"' \
		sh "$BUILD" "$R" "$R" "$@"
}

# bpf_selftests DIR: build BPF's selftests (test_progs, its programs and
# bpf_testmod) for the kernel of $OBJ in the toolchain tree, and put what
# test_progs runs with into DIR.  They are built from a copy of the
# tree's tools/testing/selftests/bpf beside it (their Makefile finds the
# rest of the tree by relative paths, and writes into its source
# directory).  The copy leaves out any test whose BPF program the
# tarball does not have (neither progs/NAME.c nor the objects the
# Makefile links into NAME's skeleton): Debian's 6.12 tree has
# prog_tests/bpf_attr_size.c but not the progs/cgroup_skb_direct_packet_
# access.c it includes, and one such file stops test_progs from linking.
# For arm64 they are cross-built (ARCH, CROSS_COMPILE: the selftests'
# Makefile builds its host tools natively, test_progs and its modules
# for the guest), against the toolchain tree's arm64 libraries.
bpf_selftests()
{
	local dir=$1 sel=$SRC/tools/testing/selftests
	local copy=$sel/bpf-ktest out=$TDIR/bpf-selftests$SFX
	local log=$LOGS/$tag-bpf-build-$TREE.log t skel
	mkdir -p "$copy" "$out"
	# The test list, prog_tests/tests.h, is generated: made again from
	# the tests the copy has (never taken from an earlier build's).
	rsync -a --delete --exclude=/prog_tests/tests.h "$sel/bpf/" "$copy/"
	rm -f "$copy/prog_tests/tests.h"
	for t in "$copy"/prog_tests/*.c; do
		for skel in $(sed -n 's/^#include "\(.*\)\.skel\.h"/\1/p' "$t"); do
			# A skeleton comes from progs/NAME.c, or from the
			# objects the Makefile links into it (NAME.skel.h-deps).
			[ -f "$copy/progs/$skel.c" ] && continue
			grep -q "^$skel\.skel\.h-deps :=" "$copy/Makefile" && continue
			say "BPF selftests: leaving out prog_tests/${t##*/}: progs/$skel.c is not in the tree"
			rm -f "$t"
			break
		done
	done
	say "building BPF's selftests (test_progs) against ${OBJ#$TOP/} (log: ${log#$TOP/})"
	local step=$SECONDS
	# Built where the last build left its objects; if that fails (their
	# dependency files can name headers of tests gone since), once more
	# from nothing.
	local try
	for try in warm cold; do
		if [ $try = cold ]; then
			say "building them again from nothing"
			rm -rf "$out"
			mkdir -p "$out"
		fi
		R=$BUILD/clients/toolchain in_chroot make -C "$copy" -j"$JOBS" OUTPUT="$out" \
			${CROSS:+ARCH=$KARCH CROSS_COMPILE=$CROSS} \
			VMLINUX_BTF="$OBJ/vmlinux" KDIR="$OBJ" test_progs > "$log" 2>&1 && break
		[ $try = cold ] &&
			{ tail -30 "$log" >&2; die "BPF's selftests did not build (log: ${log#$TOP/})"; }
	done
	say "BPF's selftests built in $((SECONDS - step)) s"
	mkdir -p "$dir"
	cp "$out"/test_progs "$out"/*.bpf.o "$out"/*.ko "$out"/urandom_read \
		"$out"/liburandom_read.so "$out"/uprobe_multi "$dir/"
}

judge=()
[ -z "$DARCH" ] || judge+=(--arch "$KTEST_ARCH")
for v in $variants; do
	variant_set "$v"
	tag=clients${SFX#-clients}
	[ -n "$peer" ] && tag=peer${SFX#-clients-bpf}
	DISK=$TDIR/clients-disk$SFX
	step=$SECONDS
	rm -rf "$DISK"
	mkdir -p "$DISK/stap"
	cp -a "$H/guest/." "$DISK/"
	cp -a "$TDIR/modules$SFX" "$DISK/modules"
	# perf's vfs_getname cases find a line of getname_flags() in the
	# kernel's debug info: the guest's perf_test.sh points the modules'
	# build link at this copy.
	if [ -n "$peer" ]; then
		mkdir -p "$DISK/kbuild"
		cp "$OBJ/vmlinux" "$DISK/kbuild/vmlinux"
		bpf_selftests "$DISK/bpf"
	fi

	# perf probe's definitions from the kernel's DWARF (trixie's perf, the
	# kernel's own version): a line probe and a local variable.
	say "perf probe -k vmlinux -D: the line and local-variable probes (log: ${LOGS#$TOP/}/$tag-host-$TREE.log)"
	hostlog=$LOGS/$tag-host-$TREE.log
	: > "$hostlog"
	for def in 'kt_line=do_mkdirat;*vfs_mkdir(*' 'kt_var=do_mkdirat;*putname(name)* err=error:s32'; do
		in_chroot perf probe -k "$OBJ/vmlinux" -s "$SRC" -D "$def" \
			>> "$DISK/perf-probes.txt" 2>> "$hostlog" ||
			{ cat "$hostlog" >&2; die "perf probe -D '$def' failed"; }
	done
	sed 's/^/ktest:   /' "$DISK/perf-probes.txt"

	# SystemTap: compiled here, against the kernel's build tree, by the
	# image's stap and gcc; staprun loads it in the guest.  SystemTap 5.1
	# predates 6.12, which renamed uprobe_unregister() (now _nosync and
	# _sync): its runtime looks the old name up at load time whether the
	# script has user-space probes or not, and refuses to start ("Can't
	# resolve uprobe_unregister!").  This script has none: telling the
	# runtime the symbol is exported skips that lookup (and nothing else).
	# For arm64, cross-compiled (stap -a, -B CROSS_COMPILE=).
	cross=
	[ -n "$DARCH" ] && cross="-a $KARCH -B CROSS_COMPILE=$CROSS"
	say "stap -p4 ${cross:+$cross }-r ${OBJ#$TOP/}: harness/clients/guest/mkdir.stp (log: ${hostlog#$TOP/})"
	if in_chroot sh -c 'cd "$1" && stap -p4 $4 -r "$2" -m ktest_stap \
			-D STAPCONF_UPROBE_UNREGISTER_EXPORTED "$3"' \
			sh "$DISK/stap" "$OBJ" "$DISK/mkdir.stp" "$cross" >> "$hostlog" 2>&1; then
		ls -l "$DISK/stap" | sed 's/^/ktest:   /'
	else
		tail -20 "$hostlog" | sed 's/^/ktest:   /'
		say "stap failed; the guest's systemtap client reports it"
	fi

	img=$DISK.img
	rm -f "$img"
	mkfs.ext4 -q -F -L ktest-run -d "$DISK" "$img" \
		"$(( $(du -sm "$DISK" | cut -f1) + 64 ))M"
	say "host steps took $((SECONDS - step)) s"

	# 1,500 s on the machine the limits were tuned on, scaled by the pace
	# (common.sh); the guest scales each client's limit the same way.
	pace_measure
	# An arm64 guest runs about half as fast under TCG: twice that.
	limit=1500
	[ -n "$peer" ] && limit=3600
	[ -n "$DARCH" ] && limit=$((limit * 2))
	limit=${KTEST_TIMEOUT:-$(paced $limit)}
	log=$LOGS/$tag-$TREE.log out=$LOGS/$tag-$TREE.out
	rm -f "$log" "$out"
	console=ttyS0
	[ -n "$DARCH" ] && console="ttyAMA0 ktest.out=hvc0"
	append="console=$console loglevel=7 printk.time=0 panic=-1 root=/dev/vda rw"
	append+=" rootfstype=ext4 init=/sbin/ktest-init ktest.tree=$TREE ktest.pace=$PACE"
	[ -n "${CLIENTS:-}" ] && append+=" ktest.clients=$CLIENTS"
	# x86-64: two serial ports, the kernel's console and the output.
	# arm64 (as harness/boot.sh boots it): QEMU's virt machine, whose
	# one UART is the console, the output on a virtio console; the
	# disks on PCI, so that the image is vda.
	if [ -z "$DARCH" ]; then
		qemu=(qemu-system-x86_64 -cpu qemu64,+smap -serial file:"$log"
		      -serial file:"$out")
	else
		qemu=(qemu-system-aarch64 -M virt,gic-version=3 -cpu max,pauth-impdef=on
		      -serial file:"$log" -chardev file,id=ktout,path="$out"
		      -device virtio-serial-device -device virtconsole,chardev=ktout)
	fi
	say "booting $NAME clients kernel ($v configuration, at most $limit s)"
	step=$SECONDS status=0
	throttled timeout -k 10 "$limit" "${qemu[@]}" -accel tcg,thread=single \
		-smp 2 -m 4G -nodefaults -no-user-config -display none \
		-no-reboot -kernel "$OBJ/$KIMAGE" -append "$append" \
		-drive file="$IMG",if=virtio,format=raw,snapshot=on \
		-drive file="$img",if=virtio,format=raw,readonly=on \
		-monitor none < /dev/null || status=$?
	say "guest ran $((SECONDS - step)) s (VM exit status $status); logs: ${log#$TOP/}, ${out#$TOP/}"
	expect=$H/expected
	if [ -n "$peer" ]; then
		expect=$H/expected-peer
	elif [ -n "${CLIENTS:-}" ]; then
		expect=-
	fi
	judge+=(--label "$tag" --console "$log" --output "$out" --status "$status"
		--timeout "$limit" --expect "$expect")
done
what=clients
[ -n "$peer" ] && what=peer-tests
say "make $what took $((SECONDS - run_start)) s"
exec python3 "$TOP/harness/ktap.py" "${judge[@]}"
