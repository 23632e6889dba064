#!/usr/bin/env bash
# make test-mutants: break the product on purpose, one mutation at a time,
# and check that the cases guarding each one go red.
#
# The mutations are listed in harness/mutants.list (its header gives the
# format).  Each one is applied to the prepared kernel tree, build/ours/src
# (build/ours-arm64/src), the copy of the overlay every build compiles:
# never to the repository's own files.  That tree is prepared afresh
# first, which puts back the file the last mutation changed, so the
# build that follows is incremental (the base configuration's).  The
# kernel is then booted with only the cases the mutation names
# (KTEST_ONLY).  The mutation is red when the boot fails and every "red:"
# text of it is in one of the judge's FAIL lines: failing for some other
# reason does not count.  A mutation whose lines are not found exactly
# once in its file, or whose tree does not build, is stale: the list
# must be mended.  At the end the tree is prepared once more, so that it
# is ours again (the next build recompiles what the last mutation
# touched), and the mutant's kernel image is deleted: a boot without a
# build first would otherwise test a mutant.
#
#   MUTANTS=name,name      only these (default: all of KTEST_ARCH's)
#   KTEST_ARCH             x86_64 (default) or arm64
#   MUTANTS_TIMEOUT=s      each boot's limit (default 1200 s): a mutation
#                          may hang the guest, and that is red enough
#   MUTANTS_DRY=1          only check that every mutation (all
#                          architectures) applies to a copy of its file,
#                          and build nothing
#
# Prints one line per mutation and "N red, N survived, N stale, N not
# runnable under TCG"; exits 1 unless every mutation that ran went red.
# Logs: build/mutants/NAME.{build,boot}.log.
. "$(dirname "$0")/common.sh" ours

MDIR=$BUILD/mutants
LIST=$TOP/harness/mutants.list
mkdir -p "$MDIR"
export KTEST_VARIANT=base KTEST_VARIANTS=base
# The configurations a mutant was built in: their kernels are deleted at
# the end.
used_variants=

mutants_prepare()
{
	"$TOP/harness/prepare.sh" ours > "$MDIR/prepare.log" 2>&1 ||
		{ cat "$MDIR/prepare.log" >&2; die "harness/prepare.sh ours failed"; }
}

# mutants_apply FILE OLD NEW: replace OLD (lines, compared without their
# leading and trailing blanks, any run of blanks matching any other) by
# NEW, indented as OLD's first line was.
mutants_apply()
{
	python3 - "$@" <<'EOF'
import re, sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
def line(l):
    return r'[ \t]+'.join(re.escape(w) for w in l.split()) + r'[ \t]*$'
pat = '\n'.join((r'^([ \t]*)' if i == 0 else r'^[ \t]*') + line(l)
                for i, l in enumerate(old.split('\n')))
hits = list(re.finditer(pat, text, re.M))
if len(hits) != 1:
    sys.exit('the mutation matches %d times, not once' % len(hits))
m = hits[0]
indent = m.group(1)
repl = '\n'.join(indent + l for l in new.split('\n')) if new else ''
end = m.end() + (1 if not new and m.end() < len(text) else 0)
open(path, 'w').write(text[:m.start()] + repl + text[end:])
EOF
}

# One mutation: its fields in the globals set by the list's parser.
mutants_run()
{
	local log=$MDIR/$name
	local rc=0 fails target=$SRC/$file

	export KTEST_VARIANT=$variant KTEST_VARIANTS=$variant
	[[ " $used_variants " == *" $variant "* ]] ||
		used_variants="$used_variants $variant"
	if [ -n "${MUTANTS_DRY:-}" ]; then
		target=$MDIR/dry.file
		cp "$TOP/$file" "$target"
	else
		mutants_prepare
	fi
	if ! mutants_apply "$target" "$old" "$new" 2> "$log.apply"; then
		echo "STALE     $name: $file: $(cat "$log.apply")"
		stale=$((stale + 1))
		return
	fi
	if [ -n "${MUTANTS_DRY:-}" ]; then
		echo "APPLIES   $name"
		reds=$((reds + 1))
		return
	fi
	if ! "$TOP/harness/build.sh" ours > "$log.build.log" 2>&1; then
		echo "STALE     $name: does not build (${log#$TOP/}.build.log)"
		stale=$((stale + 1))
		return
	fi
	KTEST_TIMEOUT=${MUTANTS_TIMEOUT:-1200} KTEST_ONLY=$only FTRACETEST=none \
		KTEST_CPUS=$cpus PROBE_ALL=$probe_all "$TOP/harness/boot.sh" ours test \
		> "$log.boot.log" 2>&1 || rc=$?
	fails=$(grep -E '^FAIL: ' "$log.boot.log" || true)
	if [ "$rc" = 0 ]; then
		echo "SURVIVED  $name: the boot of $only passed (${log#$TOP/}.boot.log)"
		survived=$((survived + 1))
		return
	fi
	local IFS=';' pat missing=
	for pat in $red; do
		pat=${pat# }
		pat=${pat% }
		grep -qF -- "$pat" <<< "$fails" || missing="$missing [$pat]"
	done
	for pat in $says; do
		pat=${pat# }
		pat=${pat% }
		grep -qF -- "$pat" "$log.boot.log" || missing="$missing [says: $pat]"
	done
	if [ -n "$missing" ]; then
		echo "SURVIVED  $name: failed, but not where it should:$missing (${log#$TOP/}.boot.log)"
		survived=$((survived + 1))
	else
		echo "RED       $name"
		reds=$((reds + 1))
	fi
}

reds=0 survived=0 stale=0 total=0 notrun=0
want=",${MUTANTS:-},"
start=$SECONDS

# The list's parser: a block per mutation, run when the next one starts.
flush()
{
	[ -n "$name" ] || return 0
	if { [ "$arch" = "$KTEST_ARCH" ] || [ -n "${MUTANTS_DRY:-}" ]; } &&
	   { [ "$want" = ",," ] || [[ "$want" == *",$name,"* ]]; }; then
		if [ -n "$skip" ]; then
			echo "NOT RUN   $name: $skip"
			notrun=$((notrun + 1))
		else
			total=$((total + 1))
			mutants_run
		fi
	fi
	name=
}
name='' arch='' variant='' cpus='' probe_all='' file='' only='' red='' says=''
old='' new='' skip=''
# The whole list is read before the first build: a run takes half an
# hour, and the list may be edited meanwhile.
mapfile -t list_lines < "$LIST"
for line in "${list_lines[@]}"; do
	case "$line" in
	'#'*|'') continue ;;
	'['*']') flush
		name=${line#[}; name=${name%]}
		arch=x86_64 variant=base cpus=2 probe_all='' file='' only=''
		red='' says='' old='' new='' skip='' ;;
	'arch: '*) arch=${line#arch: } ;;
	'variant: '*) variant=${line#variant: } ;;
	'cpus: '*) cpus=${line#cpus: } ;;
	'probe_all: '*) probe_all=${line#probe_all: } ;;
	'file: '*) file=${line#file: } ;;
	'only: '*) only=${line#only: } ;;
	'red: '*) red=${red:+$red;}${line#red: } ;;
	'says: '*) says=${says:+$says;}${line#says: } ;;
	'why: '*) ;;
	'skip: '*) skip=${skip:+$skip }${line#skip: } ;;
	'- '*|'-') l=${line#-}; old=${old:+$old$'\n'}${l# } ;;
	'+ '*|'+') l=${line#+}; new=${new:+$new$'\n'}${l# } ;;
	*) die "harness/mutants.list: cannot read: $line" ;;
	esac
done
flush
if [ -z "${MUTANTS_DRY:-}" ]; then
	# The kernels built are mutants': gone, so that harness/boot.sh asks
	# for a build instead of booting one.
	for v in ${used_variants:-base}; do
		export KTEST_VARIANT=$v
		mutants_prepare
		variant_set "$v"
		rm -f "$OBJ/$KIMAGE"
	done
fi

if [ -n "${MUTANTS_DRY:-}" ]; then
	echo "$reds apply, $stale stale, $notrun not runnable under TCG"
	[ "$stale" = 0 ]
	exit
fi
[ "$total" -gt 0 ] || die "no mutation of $KTEST_ARCH matches MUTANTS=${MUTANTS:-}"
echo "$reds red, $survived survived, $stale stale, $notrun not runnable under TCG ($KTEST_ARCH, $((SECONDS - start)) s)"
[ "$reds" = "$total" ]
