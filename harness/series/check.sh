#!/usr/bin/env bash
# make series-check: prove the series that `make series` wrote to
# build/series/ (run that first; the Makefile does).
#  1. a fresh git tree from the tarball, committed as the base
#     (build/series-tree/src);
#  2. scripts/checkpatch.pl --strict on every patch: zero errors,
#     warnings and checks;
#  3. git am of each patch in turn, and after each one a kernel build
#     with the test profile's base configuration, as harness/prepare.sh
#     makes it for that tree (build/series-tree/obj, ccache);
#  4. scripts/kernel-doc -none -Wall on our .c/.h files in the final tree;
#  5. the final tree against what harness/prepare.sh makes for `ours`
#     (build/ours/src): the same files with the same content and modes
#     (MAINTAINERS apart: prepare.sh leaves upstream's, the series
#     carries our entry);
#  6. `make test` (both configurations, boot, the whole suite, judged).
# Every step runs even when an earlier one failed, but the last (the
# test boots take half an hour) only when everything before passed.
# SERIES_CHECK_STEPS="checkpatch builds kerneldoc equal test" (the
# default) picks steps; CCACHE_BASEDIR defaults to the directory above
# the repository, so that sibling checkouts share ccache hits.
. "$(dirname "$0")/../common.sh" series
. "$TOP/harness/series/lib.sh"

STEPS=${SERIES_CHECK_STEPS:-checkpatch builds kerneldoc equal test}
step() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$TOP")}
# The per-patch builds use the test profile's base configuration, nothing
# a caller may have added for a one-off run.
unset KTEST_CONFIG KTEST_PROFILE
PROFILE=test
variant_set base
# checkpatch's SPDX check runs scripts/spdxcheck.py with python3-ply and
# python3-git: Debian's python3, whatever else comes first in PATH.
export PATH=/usr/bin:/bin:$PATH

series_deps
OUT=$BUILD/series
[ -s "$OUT/series" ] || die "no series in build/series: run make series first"
mapfile -t PATCHES < <(grep -v '^0000-cover-letter' "$OUT/series")
[ ${#PATCHES[@]} -gt 0 ] || die "build/series/series lists no patch"
mkdir -p "$LOGS"
SUMMARY=$LOGS/series-check.txt
: > "$SUMMARY"
failures=()
fail() { failures+=("$*"); echo "ktest: FAILED: $*" >&2; echo "FAILED: $*" >> "$SUMMARY"; }
note() { say "$*"; echo "$*" >> "$SUMMARY"; }
t0=$SECONDS

# ---- 1. the base tree -------------------------------------------------------
ts=$SECONDS
base_repo "$SRC"
# A fresh tree has the tarball's old mtimes: objects of an earlier run
# would look up to date.  Start the object directory afresh too (ccache
# keeps the rebuild cheap).
rm -rf "$OBJ"
BASE=$(git -C "$SRC" rev-parse HEAD)
note "base tree: ${SRC#$TOP/} at $BASE ($((SECONDS - ts)) s)"

# ---- 2. checkpatch -----------------------------------------------------------
if step checkpatch; then
	ts=$SECONDS
	for p in "${PATCHES[@]}"; do
		log=$LOGS/series-checkpatch-${p%.patch}.log
		(cd "$SRC" && perl scripts/checkpatch.pl --strict --color=never --show-types \
			"$OUT/$p") > "$log" 2>&1 || true
		total=$(grep '^total: ' "$log" || echo "no total line")
		if grep -q '^total: 0 errors, 0 warnings, 0 checks' "$log" &&
		   ! grep -q 'Traceback' "$log"; then
			note "checkpatch $p: $total"
		else
			grep -E '^(ERROR|WARNING|CHECK):|^#[0-9]+: FILE:|Traceback|Error' "$log" | head -60 >&2
			fail "checkpatch --strict $p: $total (build/logs/$(basename "$log"))"
		fi
	done
	note "checkpatch: $((SECONDS - ts)) s"
fi

# ---- 3. git am, and a build after each patch -------------------------------
# prepare.sh makes the configuration; its source step must leave our git
# tree alone: for a tree other than `ours` it extracts the tarball only
# when src.stamp does not name the tarball as it is, so write that.
configure() {
	stat -c 'tarball %n %s %Y' "$TARBALL" > "$TDIR/src.stamp"
	local head
	head=$(git -C "$SRC" rev-parse HEAD)
	KTEST_VARIANT=base "$TOP/harness/prepare.sh" series > "$LOGS/series-prepare.log" 2>&1 ||
		{ cat "$LOGS/series-prepare.log" >&2; return 1; }
	[ "$(git -C "$SRC" rev-parse HEAD 2>/dev/null)" = "$head" ] ||
		die "harness/prepare.sh replaced the git tree ${SRC#$TOP/} (src.stamp no longer matches?)"
}
n=0
for p in "${PATCHES[@]}"; do
	n=$((n + 1))
	ts=$SECONDS
	if ! git -C "$SRC" am -q --keep-cr "$OUT/$p" > "$LOGS/series-am.log" 2>&1; then
		cat "$LOGS/series-am.log" >&2
		fail "git am $p does not apply"
		git -C "$SRC" am --abort >/dev/null 2>&1 || true
		break
	fi
	step builds || continue
	log=$LOGS/build-series-$(printf %02d $n).log
	if ! configure; then
		fail "configuration after $p (build/logs/series-prepare.log)"
		continue
	fi
	say "building after $p (log: build/logs/$(basename "$log"))"
	if kmake_logged "$log" "${KMAKE[@]}" -j"$JOBS" all; then
		note "build after $p: ok ($((SECONDS - ts)) s)"
	else
		grep -E 'error|Error [0-9]' "$log" | head -20 >&2
		fail "build after $p ($((SECONDS - ts)) s; build/logs/$(basename "$log")): $(grep -m1 -E ' error: |Error [0-9]' "$log")"
	fi
done
[ "$(git -C "$SRC" rev-list --count "$BASE"..HEAD)" -eq ${#PATCHES[@]} ] ||
	fail "the final tree has $(git -C "$SRC" rev-list --count "$BASE"..HEAD) of ${#PATCHES[@]} patches"

# ---- 4. kernel-doc ----------------------------------------------------------
if step kerneldoc; then
	ts=$SECONDS
	# Ours: the overlay's C files (not the upstream ones patches/ edits).
	mapfile -t cfiles < <(tracked_files kernel include arch samples lib tools |
		tr '\0' '\n' | grep -E '\.[ch]$')
	log=$LOGS/series-kernel-doc.log
	(cd "$SRC" && perl scripts/kernel-doc -none -Wall "${cfiles[@]}") > "$log" 2>&1 || true
	if [ -s "$log" ]; then
		head -40 "$log" >&2
		fail "kernel-doc -none -Wall: $(grep -c . "$log") lines of warnings (build/logs/series-kernel-doc.log)"
	else
		note "kernel-doc -none -Wall over ${#cfiles[@]} .c/.h files: clean ($((SECONDS - ts)) s)"
	fi
fi

# ---- 5. the final tree is prepare.sh's tree for `ours` -----------------------
if step equal; then
	ts=$SECONDS
	"$TOP/harness/prepare.sh" ours > "$LOGS/series-prepare-ours.log" 2>&1 ||
		{ cat "$LOGS/series-prepare-ours.log" >&2; die "harness/prepare.sh ours failed"; }
	# Stage build/ours/src in a scratch index of the series' repository and
	# compare it with the series' last commit: files, content, modes.
	idx=$(mktemp)
	rm -f "$idx"
	diffs=$(export GIT_DIR=$SRC/.git GIT_WORK_TREE=$BUILD/ours/src GIT_INDEX_FILE=$idx
		cd "$BUILD/ours/src" && git read-tree HEAD && git add -f -A . &&
		git diff --cached --no-renames --name-status HEAD -- . ':(exclude)MAINTAINERS') ||
		die "could not compare build/ours/src with the series' tree"
	rm -f "$idx"
	if [ -n "$diffs" ]; then
		echo "$diffs" | head -40 >&2
		fail "the series' final tree differs from build/ours/src in $(echo "$diffs" | grep -c .) files (A: only in build/ours/src, D: only in the series, M: content or mode; a stale build/ours/src: remove build/ours/src.stamp)"
	else
		note "final tree = build/ours/src (prepare.sh ours), MAINTAINERS apart ($((SECONDS - ts)) s)"
	fi
	if git -C "$SRC" diff --quiet "$BASE" HEAD -- MAINTAINERS; then
		fail "the series does not change MAINTAINERS"
	fi
fi

note "series-check before the test boots: ${#failures[@]} failures, $((SECONDS - t0)) s"
if [ ${#failures[@]} -gt 0 ]; then
	printf 'ktest: FAILED: %s\n' "${failures[@]}" >&2
	die "series-check failed (${#failures[@]}); make test not run (summary: build/logs/series-check.txt)"
fi

# ---- 6. make test ---------------------------------------------------------------
if step test; then
	ts=$SECONDS
	say "make test on the series' final tree (build/ours/src, checked equal above)"
	rc=0
	make -C "$TOP" test || rc=$?
	note "make test: exit status $rc ($((SECONDS - ts)) s)"
	[ $rc -eq 0 ] || die "make test failed on the series' final tree"
fi
note "series-check passed in $((SECONDS - t0)) s"
