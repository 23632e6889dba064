#!/usr/bin/env bash
# The guest's user space for an architecture the host does not run
# (arm64; i386, whose kernel cannot run the host's x86-64 busybox):
# busybox (static), from Debian bookworm's package of that
# architecture (trixie's for riscv64, which bookworm does not build),
# unpacked with
# dpkg-deb -x.  No multiarch set-up (dpkg --add-architecture): apt runs
# with a private state of its own under build/, on the host's Debian
# mirrors, with APT::Architecture set to the guest's, and only downloads.
#   harness/userland.sh arm64    prints the unpacked root:
#                                build/userland-arm64/root
# Done once: the packages and the root stay under build/ (make clean
# removes them); delete build/userland-ARCH to take newer ones.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
DARCH=${1:?usage: $0 DEBIAN-ARCH}
DIR=$TOP/build/userland-$DARCH
ROOT=$DIR/root
PKGS=(busybox-static)
RELEASE=bookworm
[ "$DARCH" = riscv64 ] && RELEASE=trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "ktest: $*" >&2; }
die() { echo "ktest: ERROR: $*" >&2; exit 1; }

if [ -f "$ROOT/.done" ] && [ "$(cat "$ROOT/.done")" = "${PKGS[*]}" ]; then
	echo "$ROOT"
	exit 0
fi

# The host's Debian mirrors for bookworm and its updates (whatever
# sources.list or sources.list.d names), main only; deb.debian.org when
# there is none.  For trixie, the same mirrors' trixie (the release
# only).  Signed by Debian's archive keys, checked by apt (bookworm's
# keyring has trixie's).
APT=$DIR/apt
rm -rf "$APT"
mkdir -p "$APT/lists/partial" "$APT/archives/partial" "$APT/sources.list.d" "$DIR/debs"
: > "$APT/status"
apt-get indextargets --no-release-info --format '$(SITE) $(RELEASE) $(COMPONENT)' \
	'Identifier: Packages' 2>/dev/null |
	awk -v r="$RELEASE" '$3 == "main" && ($2 == r || $2 == r "-updates" ||
		$2 == r "-security") { print $1, $2 }
		r == "trixie" && $3 == "main" && $2 == "bookworm" { print $1, r }' | sort -u |
	while read -r site rel; do
		echo "deb [signed-by=$KEYRING] $site $rel main"
	done > "$APT/sources.list"
if [ ! -s "$APT/sources.list" ]; then
	printf 'deb [signed-by=%s] http://deb.debian.org/debian %s main\n' "$KEYRING" "$RELEASE" \
		> "$APT/sources.list"
	printf 'deb [signed-by=%s] http://deb.debian.org/debian-security %s-security main\n' \
		"$KEYRING" "$RELEASE" >> "$APT/sources.list"
fi
[ -f "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
opts=(-q -o APT::Architecture="$DARCH" -o APT::Architectures::="$DARCH"
      -o Dir::State::Lists="$APT/lists" -o Dir::State::status="$APT/status"
      -o Dir::Cache="$APT" -o Dir::Cache::archives="$APT/archives"
      -o Dir::Etc::SourceList="$APT/sources.list"
      -o Dir::Etc::SourceParts="$APT/sources.list.d"
      -o Acquire::Languages=none -o APT::Sandbox::User=root)
say "fetching Debian $RELEASE $DARCH packages: ${PKGS[*]} (from $(awk '{ print $3 }' "$APT/sources.list" | sort -u | paste -sd' '))"
# A mirror caught mid-sync serves an index that does not match its
# Release file, and apt-get update fails for that one: try again, then
# without the sources that failed (busybox-static is in main; the run
# says which were left out).
if ! apt-get "${opts[@]}" update > "$DIR/apt-update.log" 2>&1 &&
   ! apt-get "${opts[@]}" update > "$DIR/apt-update.log" 2>&1; then
	bad=$(sed -n 's/^E: Failed to fetch \([^ ]*\)\/dists\/\([^/]*\)\/.*/\1 \2/p' "$DIR/apt-update.log" | sort -u)
	[ -n "$bad" ] || { cat "$DIR/apt-update.log" >&2; die "apt-get update for $DARCH failed"; }
	while read -r site rel; do
		say "left out: $site $rel (its index failed to download)"
		grep -vF " $site $rel main" "$APT/sources.list" > "$APT/sources.list.tmp" || true
		mv "$APT/sources.list.tmp" "$APT/sources.list"
	done <<< "$bad"
	[ -s "$APT/sources.list" ] || die "apt-get update for $DARCH failed for every source"
	apt-get "${opts[@]}" update > "$DIR/apt-update.log" 2>&1 ||
		{ cat "$DIR/apt-update.log" >&2; die "apt-get update for $DARCH failed"; }
fi
rm -f "$DIR"/debs/*.deb
(cd "$DIR/debs" && apt-get "${opts[@]}" download "${PKGS[@]}") > "$DIR/apt-download.log" 2>&1 ||
	{ cat "$DIR/apt-download.log" >&2; die "apt-get download for $DARCH failed"; }

rm -rf "$ROOT"
mkdir -p "$ROOT"
for deb in "$DIR"/debs/*.deb; do
	dpkg-deb -x "$deb" "$ROOT"
done
# trixie's packages install into /usr/bin only.
if [ ! -e "$ROOT/bin/busybox" ] && [ -x "$ROOT/usr/bin/busybox" ]; then
	mkdir -p "$ROOT/bin"
	cp "$ROOT/usr/bin/busybox" "$ROOT/bin/busybox"
fi
[ -x "$ROOT/bin/busybox" ] || die "no bin/busybox in the $DARCH package"
say "unpacked $(cd "$DIR/debs" && ls *.deb | paste -sd' ') into ${ROOT#$TOP/}"
echo "${PKGS[*]}" > "$ROOT/.done"
echo "$ROOT"
