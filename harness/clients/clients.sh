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
# peer-tests): the other projects' own suites instead (perf_test, label
# peer, judged by harness/clients/expected-peer).
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
export KTEST_PROFILE=clients
. "$H/../common.sh" "${1:-}"
variants=${KTEST_VARIANTS:-base}
peer=${KTEST_PEER:-}
[ -n "$peer" ] && CLIENTS=${CLIENTS:-perf_test}
case "$variants" in *preempt*) variants=base ;; esac
R=$BUILD/clients/rootfs

"$H/../deps.sh" clients
run_start=$SECONDS
for v in $variants; do
	KTEST_VARIANT=$v "$H/../prepare.sh" "$TREE"
	KTEST_VARIANT=$v "$H/../build.sh" "$TREE"
done
"$H/rootfs.sh"

# in_chroot CMD...: run CMD in the image's tree, with build/ at its own
# path, in a private mount namespace (the mounts go when it ends).
in_chroot()
{
	mkdir -p "$R$BUILD" "$R/proc" "$R/dev"
	unshare -m -- sh -c 'mount --bind "$1" "$2$1" && mount -t proc proc "$2/proc" &&
		mount --rbind /dev "$2/dev" && shift 2 && exec chroot "$@"' \
		sh "$BUILD" "$R" "$R" "$@"
}

judge=()
for v in $variants; do
	variant_set "$v"
	tag=clients${SFX#-clients}
	[ -n "$peer" ] && tag=peer${SFX#-clients}
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
	fi

	# perf probe's definitions from the kernel's DWARF (trixie's perf, the
	# kernel's own version): a line probe and a local variable.
	say "perf probe -k vmlinux -D: the line and local-variable probes (log: build/logs/$tag-host-$TREE.log)"
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
	say "stap -p4 -r ${OBJ#$TOP/}: harness/clients/guest/mkdir.stp (log: build/logs/$tag-host-$TREE.log)"
	if in_chroot sh -c 'cd "$1" && stap -p4 -r "$2" -m ktest_stap \
			-D STAPCONF_UPROBE_UNREGISTER_EXPORTED "$3"' \
			sh "$DISK/stap" "$OBJ" "$DISK/mkdir.stp" >> "$hostlog" 2>&1; then
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
	limit=${KTEST_TIMEOUT:-$(paced 1500)}
	log=$LOGS/$tag-$TREE.log out=$LOGS/$tag-$TREE.out
	rm -f "$log" "$out"
	append="console=ttyS0 loglevel=7 printk.time=0 panic=-1 root=/dev/vda rw"
	append+=" rootfstype=ext4 init=/sbin/ktest-init ktest.tree=$TREE ktest.pace=$PACE"
	[ -n "${CLIENTS:-}" ] && append+=" ktest.clients=$CLIENTS"
	say "booting $NAME clients kernel ($v configuration, at most $limit s)"
	step=$SECONDS status=0
	throttled timeout -k 10 "$limit" qemu-system-x86_64 -accel tcg,thread=single \
		-cpu qemu64,+smap -smp 2 -m 4G -nodefaults -no-user-config -display none \
		-no-reboot -kernel "$OBJ/arch/x86/boot/bzImage" -append "$append" \
		-drive file="$BUILD/clients/rootfs.img",if=virtio,format=raw,snapshot=on \
		-drive file="$img",if=virtio,format=raw,readonly=on \
		-monitor none -serial file:"$log" -serial file:"$out" < /dev/null || status=$?
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
