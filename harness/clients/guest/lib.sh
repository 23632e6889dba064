# Helpers of the client scripts (harness/clients/guest/*.sh), sourced by
# each.  A client script is one KTAP subtest: it declares how many checks
# it makes (plan), makes each one (check, check_eq), and ends with done_
# checks, which adds the last check of every client: no kprobe is left in
# the kernel's list once the tool has gone.  Its exit status is 0 when
# every check passed.
TR=/sys/kernel/tracing
KPLIST=/sys/kernel/debug/kprobes/list
WORK=/tmp/work
nchecks=0 nfailed=0

# plan N: the client will make N checks (done_checks' one included).
plan() { echo "    1..$1"; }

# check NAME STATUS DETAIL: one result, with what was seen.
check()
{
	nchecks=$((nchecks + 1))
	echo "    # $1: $3"
	if [ "$2" -eq 0 ]; then
		echo "    ok $nchecks $1"
	else
		echo "    not ok $nchecks $1"
		nfailed=$((nfailed + 1))
	fi
}

# check_eq NAME GOT WANT WHAT
check_eq()
{
	local st=1
	[ "$2" = "$3" ] && st=0
	check "$1" $st "$4: $2 (want $3)"
}

# check_ge NAME GOT MIN WHAT
check_ge()
{
	local st=1
	[ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null && st=0
	check "$1" $st "$4: $2 (want at least $3)"
}

# Show a file or command's output as KTAP comments.
show() { sed 's/^/    #   /'; }

# The workload every client watches: one mkdir process that makes 20 new
# directories and then fails on 5 that exist, so 25 calls of do_mkdirat(),
# 20 returning 0 and 5 returning -EEXIST (-17).  Its parent, $WORK, is
# made beforehand, not by a process named mkdir.
WORKLOAD_CALLS=25 WORKLOAD_NEW=20 WORKLOAD_EXIST=5
fresh_work()
{
	rm -rf "$WORK"
	install -d "$WORK"
}
# workload [CMD ARG...]: the mkdir process, run by CMD if given (perf
# stat, perf record); CMD's status is returned (mkdir's is 1: the five).
workload()
{
	"$@" mkdir "$WORK"/d{1..20} "$WORK"/d{1..5} 2>/dev/null
}

# The system calls behind mkdir(1), by their wrappers' names (what
# kprobes, error injection and override() attach to).  x86-64 has mkdir
# and mkdirat, mkdir(1) calls mkdir; arm64's generic table has only
# mkdirat.
case "$(uname -m)" in
aarch64) MKDIR_SYSCALL=__arm64_sys_mkdirat MKDIR_SYSCALLS=__arm64_sys_mkdirat ;;
*) MKDIR_SYSCALL=__x64_sys_mkdir MKDIR_SYSCALLS="__x64_sys_mkdir __x64_sys_mkdirat" ;;
esac

# The probes the kernel's list has now (lines of the debugfs list).
kprobes_now() { grep -c . "$KPLIST" 2>/dev/null || true; }

# probes_on FUNC [TYPES]: the probes of the list at FUNC's entry (+0x0, or
# +0x4 past its endbr64 under IBT), of the given types (k, r; default
# both).  A list line: ADDRESS TYPE SYMBOL+OFFSET [FLAGS].
probes_on()
{
	awk -v f="$1" -v t="${2:-kr}" 'index(t, $2) && ($3 == f "+0x0" || $3 == f "+0x4")' \
		"$KPLIST" | wc -l
}
# attached_or_gone FUNC N: FUNC has N probes at its entry, or more, or
# the tool started in the background ($tool) has exited.
attached_or_gone()
{
	[ "$(probes_on "$1")" -ge "$2" ] || tool_gone
}
tool_gone() { ! kill -0 "$tool" 2>/dev/null; }

# start_tool NAME N COUNT CMD...: CMD (a tracing tool) in the background,
# $tool its pid, its output in /tmp/NAME.out; waits (COUNT times 0.5 s at
# most) until do_mkdirat has N probes at its entry or the tool has exited.
start_tool()
{
	local name=$1 n=$2 count=$3
	shift 3
	"$@" > "/tmp/$name.out" 2>&1 &
	tool=$!
	wait_for "$count" attached_or_gone do_mkdirat "$n"
}

# stop_tool: SIGINT, as Ctrl-C would; the tool prints what it gathered.
stop_tool()
{
	kill -INT "$tool" 2>/dev/null
	wait "$tool"
}

# stop_tool_by_itself: wait until the tool has stopped on its own (60 s at
# most, then it is killed).
stop_tool_by_itself()
{
	wait_for 120 tool_gone
	kill -KILL "$tool" 2>/dev/null
	wait "$tool"
}

# wait_for COUNT CMD...: run CMD every 0.5 s until it succeeds, COUNT times
# at most.
wait_for()
{
	local n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.5
		n=$((n - 1))
	done
	return 1
}

done_checks()
{
	local left
	left=$(kprobes_now)
	check_eq no_probes_left "$left" 0 "kprobes in $KPLIST after the client"
	[ "$left" = 0 ] || show < "$KPLIST"
	[ "$nfailed" -eq 0 ]
}
