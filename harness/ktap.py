#!/usr/bin/env python3
"""Judge guest runs from their logs (two per boot; several boots add up).

  console log  kernel messages (ttyS0): KUnit's KTAP and any kernel splat
  output log   user space (ttyS1): our suite's KTAP and the end marker

Counts every test case once (KTAP leaf results: a result line with no
deeper result lines above it since the previous result at its depth),
prints each failure with the log lines just before it, each splat, and a
missing end marker or a timeout; the last line is "N passed, N failed,
N skipped".  Exit status 1 on any failure.
"""
import argparse
import re
import sys

TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(\s*)(not ok|ok)\s+\d+\b\s*(?:-\s+)?(.*)$')
SUBTEST = re.compile(r'^(\s*)# Subtest:\s*(.*)$')
SPLAT = re.compile(
    r'^(?:Kernel panic|Oops\b|BUG:|kernel BUG at|WARNING:'
    r'|general protection fault|Unable to handle kernel'
    r'|INFO: task .* blocked for more than)'
    r'|possible recursive locking|inconsistent lock state'
    r'|possible circular locking|suspicious RCU usage'
    r'|sleeping function called from invalid context'
    r'|detected stall|soft lockup|hard LOCKUP')
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
    def __init__(self, stream, name, status, line, context):
        self.stream, self.name, self.status = stream, name, status
        self.line, self.context = line, context


def parse_ktap(lines, stream):
    """Leaf test cases of the KTAP documents found in lines."""
    cases = []
    deeper = {}     # depth -> a deeper result was seen since the last one here
    names = {}      # depth -> name of the open '# Subtest:' at that depth
    last_result = -1
    for i, line in enumerate(lines):
        m = SUBTEST.match(line)
        if m:
            names[len(m.group(1))] = m.group(2).strip()
            continue
        m = RESULT.match(line)
        if not m:
            continue
        depth, ok, rest = len(m.group(1)), m.group(2) == 'ok', m.group(3)
        summary = deeper.get(depth, False)
        for d in list(deeper):
            if d >= depth:
                deeper[d] = False
        for d in range(depth):
            deeper[d] = True
        if summary:
            for d in [d for d in names if d > depth]:
                del names[d]
            last_result = i
            continue
        if rest.startswith('#'):
            name, directive = '', rest[1:]
        else:
            name, _, directive = rest.partition(' # ')
        directive = directive.strip().upper()
        if directive.startswith('SKIP') or directive.startswith('TODO'):
            status = 'skip'
        else:
            status = 'pass' if ok else 'fail'
        prefix = [names[d] for d in sorted(names) if d <= depth]
        full = '.'.join(prefix + [name.strip() or '(unnamed)'])
        first = max(last_result + 1, i - CONTEXT)
        cases.append(Case(stream, full, status, line.strip(),
                          [l for l in lines[first:i] if l.strip()]))
        last_result = i
    return cases


def find_splats(lines):
    """(start, end) line ranges of kernel splats, one per report."""
    splats = []
    i = 0
    while i < len(lines):
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


def judge(label, console, output, status, timeout, splats_only):
    """Cases and problems of one boot; prints its summary lines."""
    problems = []       # (title, lines) of failures that are not test cases
    tag = '' if label in (None, 'test', 'run') else label + ': '

    for start, end in find_splats(console):
        shown = console[start:min(end, start + SPLAT_SHOWN)]
        while shown and not shown[-1].strip():
            shown.pop()
        problems.append((tag + 'kernel splat: ' + console[start].strip(), shown))
    if status == 124:
        problems.append((tag + 'the guest did not finish within %d s (timeout)'
                         % timeout, [l for l in console if l.strip()][-10:]))
    elif any('kernel splat: Kernel panic' in t for t, _ in problems):
        pass    # the panic is why the guest stopped
    elif not any(l.strip() == END_MARKER for l in output):
        problems.append((tag + 'no end marker: the guest crashed or stopped early '
                         '(VM exit status %d)' % status,
                         [l for l in console if l.strip()][-10:]))
    if splats_only:
        return [], problems

    kunit = parse_ktap(console, tag + 'kunit')
    suite = parse_ktap(output, tag + 'suite')
    for l in output:
        m = re.match(r'# ktest: run_tests.sh exit status (\d+)', l)
        if m and int(m.group(1)) not in (0, 4) and \
                not any(c.status == 'fail' for c in suite):
            problems.append((tag + 'run_tests.sh exited with status %s but '
                             'reported no failed case' % m.group(1), []))
        if 'our suite: not present yet' in l:
            print('ktest: our suite: not present yet (only the built-in KUnit suites ran)')

    if not kunit and not suite:
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
    ap.add_argument('--timeout', type=int, default=0, help='time limit, s')
    ap.add_argument('--splats-only', action='store_true',
                    help='only look for splats and the end marker (make run)')
    args = ap.parse_args()

    n = len(args.console)
    labels = args.label + [None] * (n - len(args.label))
    statuses = args.status + [0] * (n - len(args.status))
    cases, problems = [], []
    for i in range(n):
        c, p = judge(labels[i], read_log(args.console[i]),
                     read_log(args.output[i]), statuses[i], args.timeout,
                     args.splats_only)
        cases += c
        problems += p

    if args.splats_only:
        for title, lines in problems:
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
    for title, lines in problems:
        print('FAIL: ' + title)
        for l in lines:
            print('    | ' + l)

    passed, skipped = count(cases, 'pass'), count(cases, 'skip')
    failed = count(cases, 'fail') + len(problems)
    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
