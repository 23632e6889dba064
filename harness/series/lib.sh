# Shared by harness/series/series.sh and check.sh; source it after
# harness/common.sh.

AUTHOR_NAME="Kprobes developers"
AUTHOR_EMAIL="kprobes@example.org"

# base_repo DIR [cached]: DIR becomes a git repository whose branch `base`
# is the untouched tarball, committed as is (every file, even those the
# tree's .gitignore files name).  With "cached", an existing DIR made from
# the same tarball is reused (reset to base, cleaned); without, DIR is
# always made afresh.
base_repo()
{
	local dir=$1 stamp version
	stamp=$(stat -c 'tarball %n %s %Y' "$TARBALL")
	if [ "${2:-}" = cached ] && [ -d "$dir/.git" ] &&
	   [ "$(cat "$dir/.git/ktest-base.stamp" 2>/dev/null)" = "$stamp" ] &&
	   git -C "$dir" rev-parse -q --verify refs/heads/base >/dev/null; then
		git -C "$dir" checkout -q -f base
		git -C "$dir" clean -q -f -d -x
		return 0
	fi
	[ -f "$TARBALL" ] || die "$TARBALL not found (apt-get install linux-source-6.12)"
	if [ -e "$dir" ]; then
		local old
		old=$(mktemp -d "$BUILD/.trash.XXXXXX")
		mv "$dir" "$old/"
		(setsid rm -rf "$old" </dev/null >/dev/null 2>&1 &)
	fi
	mkdir -p "$dir"
	version=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	say "extracting $(basename "$TARBALL") into ${dir#$TOP/} as a git repository (branch base)"
	tar -xf "$TARBALL" -C "$dir" --strip-components=1
	(
		cd "$dir"
		git init -q --initial-branch=base
		git config user.name "$AUTHOR_NAME"
		git config user.email "$AUTHOR_EMAIL"
		git config gc.auto 0
		git config commit.gpgsign false
		git config core.autocrlf false
		git add -f -A .
		GIT_AUTHOR_DATE="$(date -u -d @"$(stat -c %Y "$TARBALL")" +%FT%TZ)" \
		GIT_COMMITTER_DATE="$(date -u -d @"$(stat -c %Y "$TARBALL")" +%FT%TZ)" \
			git commit -q --no-verify -m "Linux 6.12 (Debian linux-source-6.12 $version)" \
			-m "$(basename "$TARBALL") as it is, the base of the kprobes series."
	) || die "could not make a git repository of $(basename "$TARBALL") in ${dir#$TOP/}"
	printf '%s\n' "$stamp" > "$dir/.git/ktest-base.stamp"
}

# series_deps: what harness/deps.sh installs, plus the Python modules
# checkpatch's SPDX check (scripts/spdxcheck.py) imports: without them it
# prints a traceback and checks nothing.  Only those missing, as deps.sh.
series_deps()
{
	"$TOP/harness/deps.sh"
	command -v dpkg-query >/dev/null || return 0
	local p missing=()
	for p in python3-ply python3-git; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing: ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || die "need root to install packages"
	DEBIAN_FRONTEND=noninteractive apt-get update -q &&
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
		die "apt-get install ${missing[*]} failed"
}
