#!/usr/bin/env python3
"""Judge guest runs from their logs (two per boot; several boots add up).

  console log  kernel messages (ttyS0): KUnit's KTAP and any kernel splat
  output log   user space (ttyS1): our suite's KTAP and the end marker

Counts every test case once (KTAP leaf results: a result line with no
deeper result lines above it since the previous result at its depth),
prints each failure with the log lines just before it, each splat, and a
missing end marker or a timeout; the last line is "N passed, N failed,
N skipped".  Exit status 1 on any failure.

Besides failed cases, these fail a run:
  - a parent result (one with nested results) that says "not ok" when
    none of its cases failed, and one whose cases all skipped;
  - a plan ("1..N", at any depth) that did not get exactly its N results;
    missing ones are named when a "# cases:" line after the plan lists
    them;
  - with an expectation file (--expect, harness/expected-TREE): a result
    it needs that did not come, any skip it does not declare for that
    boot, with its reason, and a case it says fails on this tree (a
    deliberate difference, counted apart as XFAIL) that passed;
  - run_tests.sh exiting with a status that disagrees with its results,
    or never reporting it;
  - a kernel splat (see SPLAT), a timeout, a missing end marker;
  - one of kprobes' own messages that says kprobes went wrong
    (KPROBES_ERRORS), counted as a one-line splat: a case that causes one
    on purpose declares it with a "splat:" row.  Every message the
    product prints at warning level or above is sorted into that list or
    KPROBES_NOTICES (bad input refused, dump_kprobe()), and `make
    test-judge` checks that none is left out (kprobes_message()).

A boot that stopped early (a timeout, or no end marker) is one failure
that says where it stopped: the case that was running (the first of its
plan's "# cases:" with no result, and the same inside it when it has
cases of its own), what each case before it took (the suite's "# time:
NAME N s, at U s" lines), and the cases that never ran; those are not
reported again as results missing from their plans or as needs.
"""
import argparse
import glob
import os
import fnmatch
import re
import sys

TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(\s*)(not ok|ok)\s+(\d+)\b\s*(?:-\s+)?(.*)$')
SUBTEST = re.compile(r'^(\s*)# Subtest:\s*(.*)$')
VERSION = re.compile(r'^(\s*)K?TAP version \d+\s*$')
PLAN = re.compile(r'^(\s*)1\.\.(\d+)\b')
CASES = re.compile(r'^(\s*)# cases:\s*(.*)$')
TIME = re.compile(r'^# time: (\S+) (\d+) s, at (\d+) s$')
SPLAT = re.compile(
    r'^(?:Kernel panic|Oops\b|BUG:|kernel BUG at|WARNING:'
    r'|general protection fault|Unable to handle kernel'
    r'|INFO: task .* blocked for more than)'
    r'|possible recursive locking|inconsistent lock state'
    r'|possible circular locking|suspicious RCU usage'
    r'|sleeping function called from invalid context'
    r'|detected stall|soft lockup|hard LOCKUP'
    r'|kretprobe BUG!|printk messages dropped|BUG: using __this_cpu'
    r'|^Internal error: |^UBSAN: ')

# The messages of our kprobes ("kprobes: " and the text of a pr_warn() or
# worse), in two lists; each line of the product's own must match exactly
# one (make test-judge reads them off the source).  KPROBES_ERRORS: kprobes
# failed at something it had accepted to do (arm, disarm, hand a probe to
# ftrace, build its blacklist, step a hit): a run that shows one is red
# unless a case expects it (a "splat:" row).
KPROBES_ERRORS = [
    r'some probes could not be (?:armed|disarmed)',
    r'cannot build the blacklist: -?\d+',
    r'incomplete blacklist: -?\d+',
    r'\S+ not found: incomplete blacklist',
    r"\S+ is on the breakpoint's path and stays probeable",
    r"the architecture's kprobes did not start: -?\d+",
    r'ftrace kept disarmed probes in its filter',
    r'ftrace kept \d+ disarmed probe\(s\) in its filter(?:: out of memory)?',
    r'ftrace refused to take over \d+ entry probe\(s\): -?\d+',
    r'ftrace refused to arm \d+ probe\(s\)(?: with a post_handler)?: -?\d+',
    r'kretprobe BUG!: .*',
    r'cannot emulate the branch at \S+: its operand is unreadable',
    r'probe at \S+ hit \d+ deep(?: with interrupts on)?; cannot step it',
]
# KPROBES_NOTICES: a registration refused for its input (the errno says
# it; the line says why), a caller's dump_kprobe(), state changes.
KPROBES_NOTICES = [
    r'\S+ is not kernel or module text that can be probed',
    r'\S+ is on the blacklist',
    r"\S+ is a function's preamble, not its code",
    r'\S+ is patched by the kernel \(jump label, static call or BUG\)',
    r'\S+ is not on an instruction boundary',
    r"\S+: a jprobe must be on a function's entry",
    r'cannot (?:probe|decode) the instruction at \S+',
    r'\S+: this struct (?:kprobe|kretprobe) is already registered',
    r"\S+ is ftrace's call site, and this kernel has no kprobes on ftrace",
    r'probe at \S+: symbol \S*\+\d+, flags 0x[0-9a-f]+, nmissed \d+',
    r"\S+: a pre_handler's change of the PC is ignored on an optimized "
    r'probe; a post_handler keeps a probe from being optimized',
    r'kretprobe data_size \d+: at most -?\d+',
    r'kretprobe maxactive -?\d+: at most -?\d+ \(the pool grows by itself\)',
    r'kretprobe on \S+: not a function entry',
    r'kretprobe on \S+: it does not return to its caller',
    r'jump optimization (?:enabled|disabled)',
    r'kprobes globally (?:enabled|disabled)',
]
KPROBES_LINE = re.compile(r'^kprobes: (.*)$')


def kprobes_message(text):
    """'error' or 'notice' for the text of one of kprobes' messages (after
    "kprobes: "), None for one in neither list; a text in both is an
    error."""
    if any(re.fullmatch(r, text) for r in KPROBES_ERRORS):
        return 'error'
    if any(re.fullmatch(r, text) for r in KPROBES_NOTICES):
        return 'notice'
    return None
END_TRACE = re.compile(r'^---\[ end ')
END_MARKER = 'KTEST-END'
CONTEXT = 12        # log lines shown before a failed case
SPLAT_SPAN = 100    # a splat without an end-of-trace line ends here
SPLAT_SHOWN = 40


def read_log(path):
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return []
    return [TIMESTAMP.sub('', line.replace('\r', '')) for line in text.split('\n')]


class Case:
    def __init__(self, stream, name, status, line, context, reason=''):
        self.stream, self.name, self.status = stream, name, status
        self.line, self.context, self.reason = line, context, reason


class Level:
    """One KTAP document (or subtest) being read: its plan and results."""
    def __init__(self, depth, name=None):
        self.depth, self.name = depth, name
        self.plan = None        # N of its "1..N", if it had one
        self.cases = None       # names its "# cases:" line declared
        self.numbers = []       # test numbers of the results that came
        self.leaves = []        # statuses of its results that are cases
        self.failed = False     # a failure was counted at or under it
        self.last = None        # the name of its last result

    def fresh(self):
        return self.plan is None and not self.numbers

    def running(self):
        """The name of its case that was running when the log ends (the
        one after its last result), if its "# cases:" line says it."""
        n = len(self.numbers)
        if self.cases and n < len(self.cases):
            return self.cases[n]
        return None

    def not_run(self):
        """The names of its declared cases after the running one."""
        return (self.cases or [])[len(self.numbers) + 1:]


def parse_ktap(lines, stream):
    """Test cases of the KTAP documents in lines, and what is wrong there.

    A case is a result line with no deeper result lines above it since the
    previous result at its depth; a result line with deeper ones is their
    parent.  Returns (cases, problems, seen, open_levels): problems are
    plans that did not get their results, parents that say "not ok" with
    no failed case under them, and parents whose cases all skipped; seen
    maps the name of every result, parent or case, to its status;
    open_levels are the levels the log ends inside, outermost first (a
    log cut short leaves their plans unfinished).  The problems of their
    plans short of results carry a third item, 'open'.
    """
    cases, problems, seen = [], [], {}
    levels = []
    last_result = -1

    def full(depth, name):
        return '.'.join([l.name for l in levels if l.depth <= depth and l.name]
                        + [name or '(unnamed)'])

    def check_plan(lv, at_end=False):
        if lv.plan is None:
            return
        what = '.'.join([l.name for l in levels
                         if l.depth < lv.depth and l.name] +
                        ([lv.name] if lv.name else [])) or 'the top level'
        got = set(lv.numbers)
        missing = [n for n in range(1, lv.plan + 1) if n not in got]
        extra = len(lv.numbers) - lv.plan
        if missing:
            names = ''
            if lv.cases and len(lv.cases) == lv.plan:
                names = ': ' + ', '.join(lv.cases[n - 1] for n in missing[:20])
            nums = ('#%d' % missing[0] if len(missing) == 1 else
                    '#%d..%d' % (missing[0], missing[-1])
                    if missing[-1] - missing[0] + 1 == len(missing) else
                    ' '.join('#%d' % n for n in missing[:20]))
            problems.append(('%s: %s plan 1..%d, %d result(s) missing (%s)%s'
                             % (stream, what, lv.plan, len(missing), nums, names), [])
                            + (('open',) if at_end else ()))
        elif extra > 0:
            problems.append(('%s: %s plan 1..%d, but %d results came'
                             % (stream, what, lv.plan, len(lv.numbers)), []))

    def close_from(depth):
        """Close the levels at depth or deeper, checking their plans."""
        while levels and levels[-1].depth >= depth:
            check_plan(levels.pop())

    def level(depth, name=None):
        """The level at depth, a fresh one reused, or a new one."""
        if levels and levels[-1].depth == depth and levels[-1].fresh():
            if name:
                levels[-1].name = name
            return levels[-1]
        close_from(depth)
        levels.append(Level(depth, name))
        return levels[-1]

    for i, line in enumerate(lines):
        m = VERSION.match(line)
        if m:
            level(len(m.group(1)))
            continue
        m = SUBTEST.match(line)
        if m:
            level(len(m.group(1)), m.group(2).strip())
            continue
        m = PLAN.match(line)
        if m:
            depth = len(m.group(1))
            lv = levels[-1] if levels and levels[-1].depth == depth else level(depth)
            if lv.plan is None:
                lv.plan = int(m.group(2))
            continue
        m = CASES.match(line)
        if m and levels and levels[-1].depth == len(m.group(1)):
            levels[-1].cases = m.group(2).split()
            continue
        m = RESULT.match(line)
        if not m:
            continue
        depth, ok, number, rest = (len(m.group(1)), m.group(2) == 'ok',
                                   int(m.group(3)), m.group(4))
        children = []
        while levels and levels[-1].depth > depth:
            children.append(levels[-1])
            check_plan(levels[-1])
            levels.pop()
        if not levels or levels[-1].depth != depth:
            levels.append(Level(depth))
        lv = levels[-1]
        lv.numbers.append(number)
        if rest.startswith('#'):
            name, directive = '', rest[1:]
        else:
            name, _, directive = rest.partition(' # ')
        name = name.strip()
        lv.last = name
        directive = directive.strip()
        word = directive.upper()
        if word.startswith('SKIP') or word.startswith('TODO'):
            status = 'skip'
        else:
            status = 'pass' if ok else 'fail'
        fname = full(depth, name)
        seen[fname] = status
        parent = [c for c in children if c.numbers or c.plan is not None]
        if parent:
            below = any(c.failed for c in children)
            leaves = [s for c in children for s in c.leaves]
            if status == 'fail' and not below:
                problems.append(('%s: %s says "not ok", yet no case under it '
                                 'failed' % (stream, fname), [line.strip()]))
            if leaves and all(s == 'skip' for s in leaves):
                problems.append(('%s: %s: every one of its %d case(s) skipped'
                                 % (stream, fname, len(leaves)), [line.strip()]))
            if status == 'fail' or below:
                for l in levels:
                    l.failed = True
            last_result = i
            continue
        lv.leaves.append(status)
        if status == 'fail':
            for l in levels:
                l.failed = True
        first = max(last_result + 1, i - CONTEXT)
        cases.append(Case(stream, fname, status, line.strip(),
                          [l for l in lines[first:i] if l.strip()],
                          directive[4:].strip() if status == 'skip' else ''))
        last_result = i
    open_levels = list(levels)
    while levels:
        check_plan(levels[-1], True)
        levels.pop()
    return cases, problems, seen, open_levels


def find_splats(lines):
    """(start, end) line ranges of kernel splats, one per report."""
    splats = []
    i = 0
    while i < len(lines):
        own = KPROBES_LINE.match(lines[i].rstrip())
        if own and kprobes_message(own.group(1)) == 'error' and \
                not SPLAT.search(lines[i]):
            splats.append((i, i + 1))
            i += 1
            continue
        if not SPLAT.search(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and j < i + SPLAT_SPAN and not END_TRACE.match(lines[j]):
            j += 1
        end = min(j + 1, len(lines))
        # The panic that follows an oops belongs to it.
        if (splats and lines[i].startswith('Kernel panic')
                and i - splats[-1][1] <= 3):
            splats[-1] = (splats[-1][0], end)
        else:
            splats.append((i, end))
        i = end
    return splats


def read_expect(path):
    """The expectation file: (labels, kind, stream, name, reason) rows.

    Each line is "LABELS | need | STREAM:NAME" (that result must be there),
    "LABELS | skip | STREAM:NAME | REASON" (that case may skip, saying
    REASON), "LABELS | fail | STREAM:NAME | REASON" (that case fails on
    this tree, for REASON: a deliberate difference, which must show) or
    "LABELS | may-fail | STREAM:NAME | REASON" (a difference that shows in
    some runs only: a failure is expected, a pass is no news) or
    "LABELS | absent | STREAM:NAME | REASON" (this tree has no such thing:
    the needs it matches are dropped, and a result of that name is red);
    LABELS is a comma-separated list of boot labels (globs), each with an
    optional "@ARCH" (a glob too) that limits it to the boots of that
    architecture (--arch: x86_64, arm64, i386); NAME may be a glob too.  "include FILE" reads FILE's rows too (a path relative
    to this file's directory).  '#' starts a comment.  The stream "splat"
    names a kernel splat in a fail or may-fail row: NAME is a glob that
    one of its lines matches, and that splat does not fail the boot.
    """
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split(' #', 1)[0] if not line.startswith('#') else ''
            if not line.strip():
                continue
            if line.startswith('include '):
                rows += read_expect(os.path.join(os.path.dirname(path),
                                                 line.split()[1]))
                continue
            fields = [x.strip() for x in line.split('|')]
            if len(fields) < 3 or \
                    fields[1] not in ('need', 'skip', 'fail', 'may-fail', 'absent') or \
                    ':' not in fields[2] or \
                    (fields[1] != 'need') != (len(fields) == 4):
                raise SystemExit('%s:%d: not "LABELS | need | STREAM:NAME" or '
                                 '"LABELS | skip|fail|may-fail|absent | STREAM:NAME | '
                                 'REASON"' % (path, n))
            stream, _, name = fields[2].partition(':')
            rows.append((fields[0].split(','), fields[1], stream, name,
                         fields[3] if len(fields) == 4 else ''))
    return rows


def applies(labels, label, arch):
    """Whether a row's LABELS ("GLOB" or "GLOB@ARCH" items) cover the boot
    labelled label on architecture arch."""
    for l in labels:
        glob, _, a = l.strip().partition('@')
        if fnmatch.fnmatchcase(label, glob) and \
                (not a or fnmatch.fnmatchcase(arch, a)):
            return True
    return False


# Our KUnit suites, read off their sources: every case a suite's array
# lists (KUNIT_CASE*), for the architecture that ran, is needed whenever
# its suite ran, so that a case lost with its plan shortened to match is
# red without a row per case in the expectation files.
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
KUNIT_SOURCES = ['tools/testing/selftests/kprobes/test_modules/*.c',
                 'kernel/kprobes/*_test.c', 'arch/x86/kernel/kprobes/*_test.c',
                 'arch/arm64/kernel/probes/*_test.c']
KUNIT_ARRAY = re.compile(r'static struct kunit_case (\w+)\[\] = \{(.*?)\n\};', re.S)
KUNIT_SUITE = re.compile(r'static struct kunit_suite \w+ = \{(.*?)\n\};', re.S)
KUNIT_CASE = re.compile(r'\bKUNIT_CASE\w*\((\w+)')
# The configuration symbols that differ between the boots, each with the
# architectures that have it set (CONFIG_X86 is both x86 kernels'): an
# array entry under any other #if is needed when the symbol is set in
# every test configuration (OPTPROBES, KRETPROBES) and not otherwise
# known here.
KUNIT_ARCH_SYMBOLS = {'CONFIG_ARM64': ('arm64',), 'CONFIG_X86_64': ('x86_64',),
                      'CONFIG_X86': ('x86_64', 'i386'),
                      'CONFIG_X86_32': ('i386',)}
KUNIT_ALWAYS = ('CONFIG_OPTPROBES', 'CONFIG_KRETPROBES')


def kunit_array_cases(body, arch):
    """The cases of one kunit_case array that this architecture builds."""
    cases, conds = [], []      # conds: True, False or None (unknown)
    for line in body.split('\n'):
        text = line.strip()
        m = re.match(r'#\s*(ifdef|ifndef|if)\s+(.*)', text)
        if m:
            sym = m.group(2).strip()
            sym = re.sub(r'^IS_ENABLED\((\w+)\)$', r'\1', sym)
            if sym in KUNIT_ARCH_SYMBOLS:
                on = arch in KUNIT_ARCH_SYMBOLS[sym]
            elif sym in KUNIT_ALWAYS:
                on = True
            else:
                on = None
            if m.group(1) == 'ifndef' and on is not None:
                on = not on
            conds.append(on)
        elif text.startswith('#else'):
            conds[-1] = None if conds[-1] is None else not conds[-1]
        elif text.startswith('#endif'):
            conds.pop()
        elif all(c is True for c in conds):
            cases += KUNIT_CASE.findall(text)
    return cases


def kunit_cases(arch):
    """{suite: (source file, [case, ...])} of our KUnit suites."""
    suites = {}
    for pattern in KUNIT_SOURCES:
        for path in sorted(glob.glob(os.path.join(TOP, pattern))):
            with open(path) as f:
                src = f.read()
            arrays = {m.group(1): kunit_array_cases(m.group(2), arch)
                      for m in KUNIT_ARRAY.finditer(src)}
            for m in KUNIT_SUITE.finditer(src):
                name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
                array = re.search(r'\.test_cases\s*=\s*(\w+)', m.group(1))
                if name and array and array.group(1) in arrays:
                    suites[name.group(1)] = (os.path.relpath(path, TOP),
                                             arrays[array.group(1)])
    return suites


def check_expect(rows, label, arch, tag, cases, seen):
    """Needed results that are not there, skips nobody declared."""
    problems = []
    mine = [r for r in rows if applies(r[0], label, arch)]
    absent = [r for r in mine if r[1] == 'absent']
    for suite, (path, names) in sorted(kunit_cases(arch).items()):
        if suite not in seen['kunit']:
            continue
        for case in names:
            name = suite + '.' + case
            if name in seen['kunit'] or \
                    any(r[2] == 'kunit' and fnmatch.fnmatchcase(name, r[3])
                        for r in absent):
                continue
            problems.append((tag + 'kunit: %s did not run, but its suite did '
                             '(%s lists it)' % (name, path), [], 'need'))
    for _, _, stream, name, reason in absent:
        there = [n for n in seen[stream] if fnmatch.fnmatchcase(n, name)]
        if there:
            problems.append((tag + '%s: %s ran, but the expectation file says '
                             'this tree has none: %s' % (stream, there[0], reason),
                             []))
    for _, kind, stream, name, _ in mine:
        if kind != 'need':
            continue
        if any(r[2] == stream and fnmatch.fnmatchcase(name, r[3]) for r in absent):
            continue
        if not any(fnmatch.fnmatchcase(n, name) for n in seen[stream]):
            problems.append((tag + '%s: %s did not run (the expectation file '
                             'needs it)' % (stream, name), [], 'need'))
    for c in cases:
        stream = c.stream.rpartition(' ')[2]
        known = [r for r in mine if r[1] in ('fail', 'may-fail') and
                 r[2] == stream and fnmatch.fnmatchcase(c.name, r[3])]
        if known and c.status == 'fail':
            c.status, c.reason = 'xfail', known[0][4]
        elif known and c.status == 'pass' and known[0][1] == 'fail':
            problems.append((tag + '%s: %s passed, but the expectation file '
                             'says it fails here: %s' % (stream, c.name,
                                                         known[0][4]),
                             [c.line]))
        if c.status != 'skip':
            continue
        ok = [r for r in mine if r[1] == 'skip' and r[2] == stream and
              fnmatch.fnmatchcase(c.name, r[3]) and
              r[4].lower() in c.reason.lower()]
        if not ok:
            problems.append((tag + '%s: %s skipped, and no skip of it is '
                             'declared for %s: %s' % (stream, c.name, label,
                                                      c.reason or '(no reason)'),
                             [c.line]))
    return problems


def stop_report(output, sopen, kopen, shown_console):
    """Where a boot that stopped early stopped: (summary, lines)."""
    lines = []
    times = [TIME.match(l) for l in output]
    times = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in times if m]
    top = sopen[0] if sopen else None
    running = top.running() if top else None
    if running:
        since = ' since %d s of guest uptime' % times[-1][2] if times else ''
        summary = 'case %s was running%s, after %d case(s)' % (
            running, since, len(top.numbers))
        inner = [lv for lv in sopen[1:] if lv.numbers or lv.plan is not None]
        for lv in inner:
            where = lv.running() or '(its case after %s)' % (lv.last or 'none')
            lines.append('inside %s: %s was running, after %d of %s case(s)'
                         % (lv.name or running, where, len(lv.numbers),
                            lv.plan if lv.plan is not None else '?'))
    elif top and top.numbers:
        summary = 'after the last case of the suite (%s)' % top.last
    else:
        summary = 'before the suite started'
    kinner = [lv for lv in kopen if lv.name and lv.depth > 0]
    if kinner and running:
        lv = kinner[-1]
        lines.append('in the kernel log, KUnit suite %s was running, after %s'
                     % (lv.name, 'its case ' + lv.last if lv.last else 'none of its cases'))
    if times:
        lines.append('what each case before it took (s), %d in all:'
                     % sum(t[1] for t in times))
        row = []
        for name, secs, _ in times:
            row.append('%s %d' % (name, secs))
            if len(', '.join(row)) > 90:
                lines.append('  ' + ', '.join(row) + ',')
                row = []
        if row:
            lines.append('  ' + ', '.join(row))
        lines[-1] = lines[-1].rstrip(',')
    not_run = []
    for lv in sopen:
        not_run += lv.not_run()
    if not_run:
        lines.append('not run (%d): %s' % (len(not_run), ', '.join(not_run)))
    lines.append('the kernel log ends:')
    lines += shown_console
    return summary, lines


def judge(label, console, output, status, timeout, splats_only, expect,
          arch='x86_64'):
    """Cases and problems of one boot; prints its summary lines."""
    problems = []       # (title, lines) of failures that are not test cases
    tag = '' if label in (None, 'test', 'run') else label + ': '

    # A splat the expectation file says this boot shows ("splat:GLOB", a
    # glob over its lines), for its reason: counted apart, like an XFAIL.
    known_splats = [r for r in (expect or []) if r[2] == 'splat' and
                    r[1] in ('fail', 'may-fail') and
                    applies(r[0], label or 'test', arch)]
    shown_splats = set()
    for start, end in find_splats(console):
        row = next((r for r in known_splats
                    if any(fnmatch.fnmatchcase(l.strip(), r[3])
                           for l in console[start:end])), None)
        if row:
            shown_splats.add(id(row))
            print('XFAIL: %skernel splat: %s (expected here: %s)'
                  % (tag, console[start].strip(), row[4]))
            continue
        shown = console[start:min(end, start + SPLAT_SHOWN)]
        while shown and not shown[-1].strip():
            shown.pop()
        problems.append((tag + 'kernel splat: ' + console[start].strip(), shown))
    for row in known_splats:
        if row[1] == 'fail' and id(row) not in shown_splats:
            problems.append((tag + 'no kernel splat matches "%s", but the '
                             'expectation file says one shows here: %s'
                             % (row[3], row[4]), []))
    tail = [l for l in console if l.strip()][-10:]
    ended = any(l.strip() == END_MARKER for l in output)
    stop = None         # why the boot stopped before its end
    if status == 124:
        stop = 'the guest did not finish within %d s (timeout)' % timeout
    elif not ended:
        if any('kernel splat: Kernel panic' in p[0] for p in problems):
            stop = 'the guest stopped at the kernel panic above'
        else:
            stop = ('no end marker: the guest crashed or stopped early '
                    '(VM exit status %d)' % status)
    if splats_only:
        if stop:
            problems.append((tag + stop, tail))
        return [], problems

    kunit, kp, kseen, kopen = parse_ktap(console, tag + 'kunit')
    suite, sp, sseen, sopen = parse_ktap(output, tag + 'suite')
    problems += kp + sp
    exit_seen = False
    for l in output:
        m = re.match(r'# ktest: run_tests.sh exit status (\d+)', l)
        if not m:
            continue
        exit_seen = True
        rc = int(m.group(1))
        failed = any(c.status == 'fail' for c in suite) or sp
        if rc != 0 and not failed:
            problems.append((tag + 'run_tests.sh exited with status %d but '
                             'reported no failed case' % rc, []))
        elif rc == 0 and failed:
            problems.append((tag + 'run_tests.sh exited with status 0 after '
                             'a failure', []))
    if any(l.startswith('# ktest: tree=') and 'running the test suite' in l
           for l in output) and not exit_seen and ended:
        problems.append((tag + 'run_tests.sh never reported its exit status', []))
    if expect is not None:
        problems += check_expect(expect, label or 'test', arch, tag,
                                 kunit + suite,
                                 {'kunit': kseen, 'suite': sseen})
    if stop:
        # What did not run is where it stopped, not a suite that vanished:
        # one failure that says so, and names what did not run.
        problems = [p for p in problems if p[2:] not in (('open',), ('need',))]
        summary, lines = stop_report(output, sopen, kopen, tail)
        problems.append((tag + stop + ': ' + summary, lines))
    elif not kunit and not suite:
        problems.append((tag + 'no test results at all', []))
    for name, cs in (('KUnit (kernel log)', kunit), ('our suite', suite)):
        print('ktest: %-18s %d passed, %d failed, %d skipped'
              % (tag + name + ':', count(cs, 'pass'), count(cs, 'fail'),
                 count(cs, 'skip')))
    return kunit + suite, problems


def count(cs, st):
    return sum(1 for c in cs if c.status == st)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--label', action='append', default=[],
                    help='name of the boot whose logs follow (repeatable)')
    ap.add_argument('--console', action='append', required=True,
                    help='kernel console log (one per boot)')
    ap.add_argument('--output', action='append', required=True,
                    help='user-space output log (one per boot)')
    ap.add_argument('--status', action='append', type=int, default=[],
                    help="the VM's exit status (one per boot)")
    ap.add_argument('--timeout', action='append', type=int, default=[],
                    help='the time limit of the boot, s (one per boot, or one '
                    'for all)')
    ap.add_argument('--expect', action='append', default=[],
                    help='expectation file for the boot (one per boot, or '
                    'one for all; "-" for none)')
    ap.add_argument('--splats-only', action='store_true',
                    help='only look for splats and the end marker (make run)')
    ap.add_argument('--arch', default='x86_64',
                    help='architecture the boots ran on, for the expectation '
                    'rows limited to one ("LABEL@ARCH": x86_64, arm64 or '
                    'i386; default x86_64)')
    args = ap.parse_args()

    n = len(args.console)
    labels = args.label + [None] * (n - len(args.label))
    statuses = args.status + [0] * (n - len(args.status))
    timeouts = args.timeout * n if len(args.timeout) == 1 else \
        args.timeout + [0] * (n - len(args.timeout))
    expects = args.expect * n if len(args.expect) == 1 else \
        args.expect + ['-'] * (n - len(args.expect))
    cases, problems = [], []
    for i in range(n):
        c, p = judge(labels[i], read_log(args.console[i]),
                     read_log(args.output[i]), statuses[i], timeouts[i],
                     args.splats_only,
                     None if expects[i] == '-' else read_expect(expects[i]),
                     args.arch)
        cases += c
        problems += p

    if args.splats_only:
        for title, lines, *_ in problems:
            print('FAIL: ' + title)
            for l in lines:
                print('    | ' + l)
        return 1 if problems else 0

    for c in cases:
        if c.status != 'fail':
            continue
        print('FAIL: %s: %s' % (c.stream, c.name))
        for l in c.context + [c.line]:
            print('    | ' + l)
    for title, lines, *_ in problems:
        print('FAIL: ' + title)
        for l in lines:
            print('    | ' + l)

    for c in cases:
        if c.status == 'xfail':
            print('XFAIL: %s: %s (expected here: %s)' % (c.stream, c.name,
                                                         c.reason))
    if count(cases, 'xfail'):
        print('ktest: %d failed as the expectation file says (deliberate '
              'differences), not counted below' % count(cases, 'xfail'))
    passed, skipped = count(cases, 'pass'), count(cases, 'skip')
    failed = count(cases, 'fail') + len(problems)
    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
