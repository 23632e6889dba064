#!/usr/bin/env python3
"""Generate the patch series from the overlay (make series).

    generate.py TOP REPO OUT

TOP is the Kprobes repository (its work tree: the tracked files, as
harness/prepare.sh overlays them), REPO a scratch git repository whose
branch `base` holds the untouched kernel tree (harness/series/series.sh
makes it), OUT the directory the patches are written to.

The manifest is harness/series/patches/NN-name, one file per patch, in
name order.  Header lines, then a blank line, then the commit message's
body:

    Subject: kprobes: what the patch does
    Files:   repo paths or globs copied from the overlay, final form
    Apply:   patches/*.patch applied with patch -p1 (as prepare.sh does)
    Delete:  upstream paths or globs removed from the tree
    Maintainers-Remove: title of an upstream MAINTAINERS entry to drop

Globs: `*` and `?` stay within a path component, `**` crosses them, a
trailing `/` means everything below.  Every tracked overlay file and
every patches/*.patch must be in exactly one patch; every pattern must
match something.

MAINTAINERS: the repository's MAINTAINERS file holds our entry.  Each
of its F: lines arrives with the first patch that brings a file it
covers (checkpatch wants every patch that adds or deletes files to
touch MAINTAINERS); its other lines with the first of those.  No line
ever changes once added, so the entry only grows into its final form.
"""

import os
import re
import shutil
import subprocess
import sys

AUTHOR = "Kprobes developers"
EMAIL = "kprobes@example.org"
SOB = "Signed-off-by: %s <%s>" % (AUTHOR, EMAIL)
PREFIXES = ("kprobes: ", "x86/kprobes: ", "arm64: kprobes: ", "module: ", "samples/kprobes: ",
            "Documentation: kprobes: ", "selftests/kprobes: ", "MAINTAINERS: ")
KEYS = ("Subject", "Files", "Apply", "Delete", "Maintainers-Remove")
MAX_BODY = 75	# checkpatch's COMMIT_LOG_LONG_LINE limit


def die(msg):
    sys.stderr.write("series: ERROR: %s\n" % msg)
    sys.exit(1)


def say(msg):
    print("series: %s" % msg, flush=True)


def run(cmd, cwd=None, env=None, stdin=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        die("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode,
                                       p.stdout, p.stderr))
    return p.stdout


def glob_re(pat):
    """A path glob as a regular expression (see the module docstring)."""
    if pat.endswith("/"):
        return re.compile(re.escape(pat) + ".*")
    out, i = "", 0
    while i < len(pat):
        if pat.startswith("**", i):
            out += ".*"
            i += 2
        elif pat[i] == "*":
            out += "[^/]*"
            i += 1
        elif pat[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pat[i])
            i += 1
    return re.compile(out)


def glob_match(pat, paths):
    r = glob_re(pat)
    return sorted(p for p in paths if r.fullmatch(p))


def maint_match(pat, path):
    """get_maintainer.pl's F: semantics: a directory covers what is below."""
    pat = pat.rstrip("/") if pat.endswith("/") else pat
    if path == pat or path.startswith(pat + "/"):
        return True
    return glob_re(pat).fullmatch(path) is not None


def shell_array(text, name):
    """The words of NAME=( ... ) in a bash script (prepare.sh's lists)."""
    m = re.search(r"^%s=\((.*?)\)" % name, text, re.M | re.S)
    if not m:
        die("harness/prepare.sh has no %s=(...) list" % name)
    body = re.sub(r"#.*", "", m.group(1))
    return [w.strip("'\"") for w in body.split()]


def parse_manifest(path):
    name = os.path.basename(path)
    with open(path) as f:
        lines = f.read().split("\n")
    hdr = {k: [] for k in KEYS}
    i, key = 0, None
    while i < len(lines) and lines[i].strip() != "":
        line = lines[i]
        if line[0] in " \t" and key:
            hdr[key] += line.split()
        else:
            m = re.match(r"([A-Za-z-]+):\s*(.*)$", line)
            if not m or m.group(1) not in KEYS:
                die("%s: line %d: expected one of %s" % (name, i + 1, ", ".join(KEYS)))
            key = m.group(1)
            if key in ("Subject", "Maintainers-Remove"):
                hdr[key].append(m.group(2).strip())
            else:
                hdr[key] += m.group(2).split()
        i += 1
    body = "\n".join(lines[i:]).strip("\n")
    if len(hdr["Subject"]) != 1:
        die("%s: needs exactly one Subject: line" % name)
    subject = hdr["Subject"][0]
    if not subject.startswith(PREFIXES):
        die("%s: subject must start with one of: %s" % (name, ", ".join(p.strip() for p in PREFIXES)))
    if not body:
        die("%s: no commit message body (say why)" % name)
    for n, line in enumerate(body.split("\n")):
        if len(line) > MAX_BODY:
            die("%s: body line %d is %d columns (at most %d): %s" %
                (name, n + 1, len(line), MAX_BODY, line))
    if "Signed-off-by:" in body:
        die("%s: the Signed-off-by line is added by the generator" % name)
    return {"name": name, "subject": subject, "body": body,
            "files": hdr["Files"], "apply": hdr["Apply"],
            "delete": hdr["Delete"], "mremove": hdr["Maintainers-Remove"]}


def parse_maintainers_entry(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or any(not l.strip() for l in lines):
        die("%s must hold exactly one entry (no blank lines)" % path)
    for l in lines[1:]:
        if not re.match(r"[A-Z]:\t\S", l):
            die("%s: not an entry line (TYPE:<tab>value): %r" % (path, l))
    return lines[0], lines[1:]


def entry_blocks(text):
    """MAINTAINERS split into blocks at blank lines: [(start, end)] of lines."""
    lines = text.split("\n")
    blocks, start = [], None
    for i, l in enumerate(lines + [""]):
        if l.strip() and start is None:
            start = i
        elif not l.strip() and start is not None:
            blocks.append((start, i))
            start = None
    return lines, blocks


def make_maintainers(upstream, title, lines, removed):
    """Upstream's MAINTAINERS with the entries titled in REMOVED dropped
    and TITLE + LINES (if any) at its alphabetical place."""
    text_lines, blocks = entry_blocks(upstream)
    is_entry = [e - s >= 2 and re.match(r"[A-Z]:\t", text_lines[s + 1]) is not None
                for s, e in blocks]
    drop = set()
    for t in removed:
        hits = [k for k, (s, e) in enumerate(blocks) if is_entry[k] and text_lines[s] == t]
        if len(hits) != 1:
            die("MAINTAINERS: upstream entry %r found %d times (want 1)" % (t, len(hits)))
        drop.add(hits[0])
    for k, (s, e) in enumerate(blocks):
        if is_entry[k] and text_lines[s] == title and k not in drop:
            die("MAINTAINERS: upstream already has an entry %r" % title)
    # The place: before the first entry that sorts after ours, between
    # neighbours that sort around ours (MAINTAINERS has a few entries out
    # of order, which must not decide).
    key = title.casefold()
    ents = [k for k in range(len(blocks)) if is_entry[k] and k not in drop]
    tkey = {k: text_lines[blocks[k][0]].casefold() for k in ents}
    place = None
    for n, k in enumerate(ents):
        before = tkey[ents[n - 1]] if n > 0 else ""
        after = tkey[ents[n + 1]] if n + 1 < len(ents) else None
        if before <= key < tkey[k] and (after is None or after > key):
            place = k
            break
    out, inserted = [], not lines
    prev_end = 0
    for k, (s, e) in enumerate(blocks):
        # Lines between blocks (blank ones) come along with the block.
        gap = text_lines[prev_end:s]
        prev_end = e
        if k in drop:
            continue
        out += gap
        if not inserted and k == place:
            out += [title] + lines + [""]
            inserted = True
        out += text_lines[s:e]
    out += text_lines[prev_end:]
    if not inserted:
        die("MAINTAINERS: found no place for %r" % title)
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        die("usage: generate.py TOP REPO OUT")
    top, repo, out = (os.path.abspath(a) for a in sys.argv[1:])
    sdir = os.path.join(top, "harness", "series")

    # ---- what must be in the series: prepare.sh's overlay and patches/ --
    with open(os.path.join(top, "harness", "prepare.sh")) as f:
        prep = f.read()
    overlay_roots = shell_array(prep, "OVERLAY")
    remove_globs = shell_array(prep, "REMOVE")
    tracked = run(["git", "-C", top, "ls-files", "-z", "--"] + overlay_roots).split("\0")
    overlay = sorted(p for p in tracked if p and os.path.isfile(os.path.join(top, p)))
    patches = sorted("patches/" + p for p in os.listdir(os.path.join(top, "patches"))
                     if p.endswith(".patch"))
    if not overlay:
        die("no tracked overlay files under %s" % " ".join(overlay_roots))

    # ---- the manifest ----------------------------------------------------
    mdir = os.path.join(sdir, "patches")
    names = sorted(n for n in os.listdir(mdir) if not n.startswith(".") and not n.endswith("~"))
    if not names:
        die("no patch manifest in harness/series/patches/")
    series = [parse_manifest(os.path.join(mdir, n)) for n in names]
    owner = {}
    errors = []
    for p in series:
        p["copy"], p["patches"] = [], []
        for pat in p["files"]:
            got = glob_match(pat, overlay)
            if not got:
                errors.append("%s: Files: %s matches no tracked overlay file" % (p["name"], pat))
            p["copy"] += [g for g in got if g not in p["copy"]]
        for pat in p["apply"]:
            if not pat.startswith("patches/"):
                pat = "patches/" + pat
            got = glob_match(pat, patches)
            if not got:
                errors.append("%s: Apply: %s matches no patches/*.patch" % (p["name"], pat))
            p["patches"] += [g for g in got if g not in p["patches"]]
        for f in p["copy"] + p["patches"]:
            owner.setdefault(f, []).append(p["name"])
    for f in overlay + patches:
        if f not in owner:
            errors.append("%s is in no patch of the series" % f)
        elif len(owner[f]) > 1:
            errors.append("%s is in %d patches: %s" % (f, len(owner[f]), ", ".join(owner[f])))
    if errors:
        die("the manifest (harness/series/patches/) does not cover the overlay "
            "exactly once:\n  " + "\n  ".join(errors))

    # ---- MAINTAINERS: which patch brings which line of our entry ---------
    title, elines = parse_maintainers_entry(os.path.join(top, "MAINTAINERS"))
    removers = [i for i, p in enumerate(series) if p["mremove"]]
    fallback = removers[0] if removers else len(series) - 1
    f_at, unchecked = {}, set()
    for j, l in enumerate(elines):
        if not l.startswith("F:\t"):
            continue
        for i, p in enumerate(series):
            if any(maint_match(l[3:], f) for f in p["copy"]):
                f_at[j] = i
                break
        else:
            # Covers no file of ours: it comes with the patch that drops
            # upstream's entry (or the last), and must cover a file there.
            f_at[j] = fallback
            unchecked.add(j)
    head_at = min(list(f_at.values()) + removers + [len(series) - 1])
    line_at = {j: f_at.get(j, head_at) for j in range(len(elines))}

    # ---- build the branch in the scratch repository ----------------------
    env = dict(os.environ)
    date = run(["git", "-C", top, "log", "-1", "--format=%cI"]).strip()
    env.update(GIT_AUTHOR_NAME=AUTHOR, GIT_AUTHOR_EMAIL=EMAIL,
               GIT_COMMITTER_NAME=AUTHOR, GIT_COMMITTER_EMAIL=EMAIL,
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git = ["git", "-C", repo]
    run(git + ["checkout", "-q", "-f", "-B", "series", "base"])
    run(git + ["clean", "-q", "-f", "-d", "-x"])
    base_files = set(run(git + ["ls-files", "-z"]).split("\0")) - {""}
    upstream_maint = run(git + ["show", "base:MAINTAINERS"])
    removed = []
    for i, p in enumerate(series):
        tree_files = set(run(git + ["ls-files", "-z"]).split("\0")) - {""}
        for pat in p["delete"]:
            got = glob_match(pat, tree_files)
            if not got:
                die("%s: Delete: %s matches nothing in the tree" % (p["name"], pat))
            run(git + ["rm", "-q", "--"] + got)
        for pf in p["patches"]:
            with open(os.path.join(top, pf)) as f:
                body = f.read()
            pr = subprocess.run(["patch", "-d", repo, "-p1", "--forward", "--batch",
                                 "--no-backup-if-mismatch", "-r", "-"],
                                input=body, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
            if pr.returncode != 0:
                die("%s: %s does not apply:\n%s" % (p["name"], pf, pr.stdout))
        for f in p["copy"]:
            src, dst = os.path.join(top, f), os.path.join(repo, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst) and not os.path.isfile(dst):
                die("%s: %s is not a regular file in the kernel tree" % (p["name"], f))
            shutil.copyfile(src, dst)
            os.chmod(dst, os.stat(src).st_mode & 0o777)
        removed += p["mremove"]
        run(git + ["add", "-f", "-A", "--", "."])
        now_files = set(run(git + ["ls-files", "-z"]).split("\0")) - {""}
        for j in sorted(unchecked):
            if line_at[j] == i:
                pat = elines[j][3:]
                if not any(maint_match(pat, f) for f in now_files):
                    die("MAINTAINERS: %s covers no file of the tree" % elines[j])
        cur = [l for j, l in enumerate(elines) if line_at[j] <= i]
        text = make_maintainers(upstream_maint, title, cur, removed)
        with open(os.path.join(repo, "MAINTAINERS"), "w") as f:
            f.write(text)
        run(git + ["add", "-f", "--", "MAINTAINERS"])
        status = run(git + ["diff", "--cached", "--name-status", "--no-renames"])
        if not status.strip():
            die("%s: the patch changes nothing" % p["name"])
        added_or_deleted = [l for l in status.split("\n") if l[:1] in ("A", "D")]
        if added_or_deleted and not re.search(r"^M\tMAINTAINERS$", status, re.M):
            say("WARNING: %s adds or deletes files but MAINTAINERS gains no line for "
                "it (checkpatch: FILE_PATH_CHANGES); give MAINTAINERS an F: line "
                "for one of its files" % p["name"])
        msg = "%s\n\n%s\n\n%s\n" % (p["subject"], p["body"], SOB)
        run(git + ["commit", "-q", "--no-verify", "-F", "-"], env=env, stdin=msg)
        p["status"] = status

    # ---- the final tree must be prepare.sh's: nothing of upstream's left --
    final = set(run(git + ["ls-files", "-z"]).split("\0")) - {""}
    ours = set(overlay)
    for pat in remove_globs:
        for f in glob_match(pat, base_files):
            if f in final and f not in ours:
                die("upstream's %s (prepare.sh's REMOVE) is still in the series' "
                    "final tree: add it to a Delete: line" % f)
    text = run(git + ["show", "HEAD:MAINTAINERS"])
    if "\n%s\n%s\n" % (title, "\n".join(elines)) not in text:
        die("MAINTAINERS: the final tree does not hold our entry as MAINTAINERS has it")

    # ---- format-patch and the cover letter --------------------------------
    if os.path.isdir(out):
        for f in os.listdir(out):
            if f.endswith(".patch"):
                os.unlink(os.path.join(out, f))
    os.makedirs(out, exist_ok=True)
    run(git + ["format-patch", "-q", "--no-renames", "--cover-letter", "--numbered",
               "--no-signature", "-o", out, "base..series"], env=env)
    cover = os.path.join(out, "0000-cover-letter.patch")
    with open(os.path.join(sdir, "cover-letter")) as f:
        tmpl = f.read()
    with open(os.path.join(sdir, "figures")) as f:
        figures = f.read().strip("\n")
    csubject, _, cbody = tmpl.partition("\n")
    if not csubject.startswith("Subject: "):
        die("harness/series/cover-letter: the first line must be Subject: ...")
    cbody = cbody.strip("\n").replace("@FIGURES@", figures)
    with open(cover) as f:
        c = f.read()
    if "*** SUBJECT HERE ***" not in c or "*** BLURB HERE ***" not in c:
        die("git format-patch's cover letter has no SUBJECT/BLURB placeholders")
    c = c.replace("*** SUBJECT HERE ***", csubject[len("Subject: "):])
    c = c.replace("*** BLURB HERE ***", cbody)
    with open(cover, "w") as f:
        f.write(c)
    with open(os.path.join(out, "series"), "w") as f:
        for p in sorted(os.listdir(out)):
            if p.endswith(".patch"):
                f.write(p + "\n")
    for n, p in enumerate(series, 1):
        say("%02d %s  (%s)" % (n, p["subject"], p["name"]))


if __name__ == "__main__":
    main()
