#!/usr/bin/env bash
# make series: the patch series, generated from the overlay (the files
# git tracks in this repository's work tree, as harness/prepare.sh
# overlays them) along the manifest in harness/series/patches/, against
# the untouched tarball.  Writes build/series/: 0000-cover-letter.patch,
# one git format-patch file per patch, and `series` (their names, in
# order).  The scratch repository is build/series-git (branch base: the
# tarball; branch series: the patches).  See README.md, "The patch series".
. "$(dirname "$0")/../common.sh" ours
. "$TOP/harness/series/lib.sh"

start=$SECONDS
REPO=$BUILD/series-git
mkdir -p "$BUILD"
base_repo "$REPO" cached
if [ -n "$(git -C "$TOP" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	say "note: the work tree has uncommitted changes; the series is made from the work tree"
fi
python3 "$TOP/harness/series/generate.py" "$TOP" "$REPO" "$BUILD/series"
say "wrote build/series/ ($(grep -c . "$BUILD/series/series") files) in $((SECONDS - start)) s"
