#!/bin/bash
# livepatch: samples/livepatch/livepatch-sample.ko replaces
# cmdline_proc_show(); a kprobe (kprobe_events) on that function counts
# every read of /proc/cmdline whichever came first, the probe or the
# patch, and the patched text is what the reader gets.
. /ktest/lib.sh
plan 7
LP=/sys/kernel/livepatch/livepatch_sample
PATCHED="this has been live patched"
orig=$(cat /proc/cmdline)

probe_on()
{
	echo 'p:kpclient/cmdline cmdline_proc_show' >> "$TR/kprobe_events" &&
	echo 1 > "$TR/events/kpclient/cmdline/enable"
}
probe_off()
{
	echo 0 > "$TR/events/kpclient/cmdline/enable"
	echo '-:kpclient/cmdline' >> "$TR/kprobe_events"
}
hits() { awk '$1 ~ /(^|\/)cmdline$/ { print $2 }' "$TR/kprobe_profile"; }
settled() { [ "$(cat $LP/transition 2>/dev/null)" = 0 ]; }
patch_on()
{
	modprobe livepatch-sample && wait_for 120 settled
}
patch_off()
{
	echo 0 > "$LP/enabled" && wait_for 120 sh -c "[ ! -e $LP ]" &&
		rmmod livepatch_sample
}
# reads N: read /proc/cmdline N times; prints the distinct texts read.
# (modprobe reads it too, for module parameters: hence counts of hits
# taken around the reads.)
reads() { for i in $(seq "$1"); do cat /proc/cmdline; done | sort -u; }
# reads_hits N: read it N times, print the probe's hits meanwhile.
reads_hits() { local h=$(hits); reads "$1" > /dev/null; echo $(($(hits) - h)); }

# The probe first, then the patch.
probe_on
check_eq probe_first "$(reads_hits 3)" 3 "hits of the kprobe, 3 reads before the patch"
patch_on || echo "    # livepatch-sample did not load or settle"
check_eq probe_first_patched "$(reads 5)" "$PATCHED" "/proc/cmdline once patched"
check_eq probe_first_hits "$(reads_hits 5)" 5 "hits of the kprobe, 5 reads, patched"
probe_off
patch_off || echo "    # livepatch-sample did not go"

# The patch first, then the probe.
patch_on || echo "    # livepatch-sample did not load or settle"
probe_on
check_eq patch_first_patched "$(reads 5)" "$PATCHED" "/proc/cmdline, patched, probed"
check_eq patch_first_hits "$(reads_hits 5)" 5 "hits of a kprobe added to the patched function, 5 reads"
probe_off
patch_off || echo "    # livepatch-sample did not go"
check_eq unpatched "$(reads 1)" "$orig" "/proc/cmdline once the patch has gone"
done_checks
