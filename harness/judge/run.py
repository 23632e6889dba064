#!/usr/bin/env python3
"""make test-judge: the judge (harness/ktap.py) on recorded logs.

The logs under harness/judge/ were recorded from a green `make test`
(the base configuration's boot) and a green `make run`.  Each check below changes them the way a
broken run would look (a suite lost, a plan cut short, ftracetest killed
half-way, a skip nobody declared, a splat...), feeds them to ktap.py with
the expectation file the real run uses, and checks the verdict: red with
the expected reason, or green for the logs as recorded.  No kernel boots.

When the suite or harness/expected-ours changes, the recorded logs must
come from a green run of the new suite (the first check fails until then):
after `make test`, copy build/logs/test-ours.{log,out} here as test.*,
and after `make run`, build/logs/run-ours.{log,out} as run.*.

arm64 (the expectation rows limited to it, "LABEL@arm64"): logs of a green
`make test-baseline ARCH=arm64` (its base boot), copied from
build/logs-arm64/test-upstream.{log,out} as test-arm64-upstream.*, judged
with harness/expected-upstream and --arch arm64.
"""
import glob
import itertools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KTAP = os.path.join(HERE, '..', 'ktap.py')
EXPECT = os.path.join(HERE, '..', 'expected-ours')
EXPECT_RUN = os.path.join(HERE, '..', 'expected-run')


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read().split('\n')


BOOTS = {'test': (load('test.log'), load('test.out'))}
RUN = (load('run.log'), load('run.out'))
ARM64 = {'test': (load('test-arm64-upstream.log'), load('test-arm64-upstream.out'))}
EXPECT_UPSTREAM = os.path.join(HERE, '..', 'expected-upstream')
# The cases of ours that the arm64 logs predate: the judge needs every
# case of a suite that ran (ktap.py's kunit_cases()).  Re-recording the
# logs (above) empties this list.
ARM64_PREDATES = []
# And the skip reasons they show that were reworded since: (case, the
# words the logs have).
ARM64_OLD_REASONS = []
ARM64_EXPECT = tempfile.NamedTemporaryFile('w', suffix='-expected', delete=False)
ARM64_EXPECT.write('include %s\n' % os.path.abspath(EXPECT_UPSTREAM) + ''.join(
    'test@arm64 | absent | %s | written after these logs were recorded\n'
    % c for c in ARM64_PREDATES) + ''.join(
    'test@arm64 | skip | %s | %s\n' % r for r in ARM64_OLD_REASONS))
ARM64_EXPECT.close()
ON_ARM64 = ('--arch', 'arm64', 'expect=' + ARM64_EXPECT.name)


# An expectation file that says samples fails on this tree (as
# harness/expected-upstream lists upstream's known failures).
XFAIL = tempfile.NamedTemporaryFile('w', suffix='-expected', delete=False)
XFAIL.write('include %s\ntest | fail | suite:samples | a listed difference\n'
            % os.path.abspath(EXPECT))
XFAIL.close()

# One that says this tree has no kprobes_compat suite (as
# harness/expected-upstream says of our own suites), while it ran.
ABSENT = tempfile.NamedTemporaryFile('w', suffix='-expected', delete=False)
ABSENT.write('include %s\ntest | absent | kunit:kprobes_compat* | not in this tree\n'
             % os.path.abspath(EXPECT))
ABSENT.close()


# One that says a kernel splat through kpt_oops_here shows here (as
# harness/expected-arches says of an emulator's fault).
SPLAT = tempfile.NamedTemporaryFile('w', suffix='-expected', delete=False)
SPLAT.write('include %s\ntest | fail | splat:*kpt_oops_here+* | a listed splat\n'
            % os.path.abspath(EXPECT))
SPLAT.close()

OOPS = ['Oops: 0004 ilc:1 [#1] SMP', 'Call Trace:',
        ' [<000003ff60000030>] kpt_oops_here+0x30/0x40',
        '---[ end trace 0000000000000000 ]---']


def ktap(boots, extra=(), status=None):
    """Run ktap.py on {label: (console, output)}; (exit status, output).
    An extra argument "expect=FILE" replaces the expectation file."""
    expect = EXPECT
    for e in extra:
        if e.startswith('expect='):
            expect = e[len('expect='):]
    extra = [e for e in extra if not e.startswith('expect=')]
    with tempfile.TemporaryDirectory() as d:
        args = [sys.executable, KTAP, '--timeout', '900'] + list(extra)
        for label, (console, output) in boots.items():
            c, o = os.path.join(d, label + '.log'), os.path.join(d, label + '.out')
            with open(c, 'w') as f:
                f.write('\n'.join(console))
            with open(o, 'w') as f:
                f.write('\n'.join(output))
            args += ['--label', label, '--console', c, '--output', o,
                     '--status', str((status or {}).get(label, 0))]
            args += ['--expect', EXPECT_RUN if label == 'run' else expect]
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        return p.returncode, p.stdout


def mutate(label, stream, fn, recorded=None):
    """The recorded boots (BOOTS, or those given) with one log of one boot
    changed by fn."""
    boots = dict(recorded or BOOTS)
    console, output = boots[label]
    boots[label] = (fn(list(console)), output) if stream == 'log' else \
        (console, fn(list(output)))
    return boots


def drop(pattern):
    return lambda lines: [l for l in lines if not re.search(pattern, l)]


def sub(pattern, repl, count=0):
    def fn(lines):
        out, n = [], 0
        for l in lines:
            if re.search(pattern, l) and (not count or n < count):
                l = re.sub(pattern, repl, l)
                n += 1
            out.append(l)
        return out
    return fn


def insert_after(pattern, new):
    def fn(lines):
        i = next(i for i, l in enumerate(lines) if re.search(pattern, l))
        return lines[:i + 1] + new + lines[i + 1:]
    return fn


def block_without(start, end):
    """Drop the lines from the one matching start to the one matching end."""
    def fn(lines):
        i = next(i for i, l in enumerate(lines) if re.search(start, l))
        j = next(j for j in range(i, len(lines)) if re.search(end, lines[j]))
        return lines[:i] + lines[j + 1:]
    return fn


def module_gone(name):
    """Drop a KUnit module's whole report, its top-level KTAP header too."""
    def fn(lines):
        i = next(i for i, l in enumerate(lines) if l.endswith('# Subtest: ' + name))
        while i > 0 and not lines[i].startswith('KTAP version'):
            i -= 1
        j = next(j for j in range(i, len(lines))
                 if re.match(r'ok \d+ %s( |$)' % name, lines[j]))
        return lines[:i] + lines[j + 1:]
    return fn


def kunit_case_gone(suite, case):
    """Drop one case of a KUnit suite, its plan shortened and the cases
    after it renumbered to match: a suite that lost a case cleanly."""
    def fn(lines):
        i = next(i for i, l in enumerate(lines) if l.endswith('# Subtest: ' + suite))
        end = next(j for j in range(i, len(lines))
                   if re.match(r'(not )?ok \d+ %s( |$)' % suite, lines[j]))
        out, gone = lines[:i], False
        for l in lines[i:end]:
            plan = re.match(r'^    1\.\.(\d+)$', l)
            res = re.match(r'^(    (?:not )?ok )(\d+) (\S+)(.*)$', l)
            if plan:
                l = '    1..%d' % (int(plan.group(1)) - 1)
            elif res and res.group(3) == case:
                gone = True
                continue
            elif res and gone:
                l = '%s%d %s%s' % (res.group(1), int(res.group(2)) - 1,
                                   res.group(3), res.group(4))
            out.append(l)
        return out + lines[end:]
    return fn


def ftracetest_killed(lines):
    """ftracetest stopped after half its cases; its case then failed."""
    first = next(i for i, l in enumerate(lines) if l.startswith('    ok 1 '))
    last = next(i for i, l in enumerate(lines) if re.match(r'ok \d+ ftracetest', l))
    nested = [i for i in range(first, last) if re.match(r'    (not )?ok \d+', lines[i])]
    cut = nested[len(nested) // 2]
    out = lines[:cut] + ['# ftracetest exited with status 124']
    out.append(re.sub(r'^ok', 'not ok', lines[last]))
    return out + lines[last + 1:]


def stopped_in(case):
    """The guest stopped (timed out, say) while case ran: the output ends
    after the result of the case before it, that case's time line
    included."""
    def fn(lines):
        i = next(i for i, l in enumerate(lines) if re.match(r'ok \d+ %s$' % case, l))
        j = max(j for j in range(i) if re.match(r'(not )?ok \d+ ', lines[j]))
        return lines[:j + 1]
    return fn


def ftracetest_timed_out(lines):
    """ftracetest stopped at its limit in the guest after half its cases:
    the suite's script reports the running case as timed out, the rest as
    not run (kprobes_events.sh), and the ftracetest case fails."""
    first = next(i for i, l in enumerate(lines) if l.startswith('    ok 1 '))
    last = next(i for i, l in enumerate(lines) if re.match(r'ok \d+ ftracetest', l))
    nested = [i for i in range(first, last) if re.match(r'    (not )?ok \d+', lines[i])]
    half = len(nested) // 2
    out = lines[:nested[half]]
    for k, i in enumerate(nested[half:]):
        desc = re.sub(r'^    (not )?ok \d+ (.*?)( # .*)?$', r'\2', lines[i])
        n = half + k + 1
        out.append('    not ok %d %s # %s' % (
            n, desc, 'TIMEOUT x.tc was running when ftracetest reached its limit of 480 s'
            if k == 0 else 'not run: ftracetest had stopped at its time limit'))
    out.append('# ftracetest timed out: x.tc was running at its limit of 480 s')
    out.append(re.sub(r'^ok', 'not ok', lines[last]))
    return out + lines[last + 1:]


def first_three_kunit_cases_skip(lines):
    """Every case of kprobes_blacklist skipped (and its suite line)."""
    out, inside = [], False
    for l in lines:
        if re.search(r'# Subtest: kprobes_blacklist', l):
            inside = True
        elif inside and re.match(r'^ok \d+ kprobes_blacklist', l):
            l += ' # SKIP'
            inside = False
        elif inside and re.match(r'^    ok \d+ ', l):
            l += ' # SKIP no blacklist'
        out.append(l)
    return out


def lost(what, case, reason):
    """The check for a feature lost: case skipped with reason."""
    return ('%s lost (an undeclared skip)' % what,
            mutate('test', 'out', sub(r'^ok (\d+) %s$' % case,
                                      r'ok \1 %s # SKIP %s' % (case, reason))),
            (), None, 1, r'%s skipped, and no skip of it is declared' % case)


CHECKS = [
    # (what, boots, extra ktap args, statuses, expected exit, expected text)
    ('the recorded logs', BOOTS, (), None, 0, r'^\d+ passed, 0 failed'),
    ('ftracetest killed half-way',
     mutate('test', 'out', ftracetest_killed), (), None, 1,
     r'ftracetest plan 1\.\.\d+, \d+ result\(s\) missing .*: \w'),
    ('a parent says not ok, no case under it failed',
     mutate('test', 'out', sub(r'^ok (\d+) ftracetest', r'not ok \1 ftracetest')),
     (), None, 1, r'ftracetest says "not ok", yet no case under it failed'),
    ('our plan cut short (the guest stopped before the last cases)',
     mutate('test', 'out', drop(r'^ok \d+ (kmemleak|ftrace_kill|no_splat|kmemleak_last)$')),
     (), None, 1,
     r'plan 1\.\.\d+, 4 result\(s\) missing .*: kmemleak, no_splat, ftrace_kill, kmemleak_last'),
    ('a KUnit plan cut short (a case lost)',
     mutate('test', 'log', drop(r'^    ok \d+ test_kprobe_missed')), (), None, 1,
     r'kprobes_test plan 1\.\.7, 1 result\(s\) missing \(#3\)'),
    ('a case of test_kprobes.c gone, plan and all',
     mutate('test', 'log', lambda ls: sub(r'^    1\.\.7$', '    1..6')(
         drop(r'^    ok \d+ test_kprobe_missed')(ls))), (), None, 1,
     r'kprobes_test\.test_kprobe_missed did not run'),
    ('a KUnit module that did not load (its suite missing)',
     mutate('test', 'log', block_without(r'# Subtest: kprobes_kretprobe',
                                        r'^ok \d+ kprobes_kretprobe')),
     (), None, 1, r'kunit: kprobes_kretprobe did not run'),
    ('a built-in KUnit suite of ours missing (kprobes_entry)',
     mutate('test', 'log', block_without(r'# Subtest: kprobes_entry',
                                        r'^ok \d+ kprobes_entry')),
     (), None, 1, r'kprobes_entry\.kpe_entry did not run'),
    ('a KUnit case of ours gone, its plan shortened to match',
     mutate('test', 'log', kunit_case_gone('kprobes_api', 'kpk_by_module_symbol')),
     (), None, 1, r'kprobes_api\.kpk_by_module_symbol did not run, but its suite did'),
    ('arm64: a KUnit case of ours gone, its plan shortened to match',
     mutate('test', 'log', kunit_case_gone('kprobes_handlers', 'kpk_change_path'), ARM64),
     ON_ARM64, None, 1, r'kprobes_handlers\.kpk_change_path did not run, but its suite did'),
    ('a case of ours removed from the suite (plan and all)',
     mutate('test', 'out', lambda ls: [re.sub(r'^# cases:(.*) samples', r'# cases:\1', l)
                                      for l in drop(r'^ok \d+ samples$')(ls)]),
     (), None, 1, r'suite: samples did not run'),
    lost('return probes', 'kretprobe_suite', 'no return probes in this kernel'),
    lost('jump optimization', 'opt_suite', 'no /proc/sys/debug/kprobes-optimization'),
    lost('the perf PMU', 'perf_kprobe_pmu', 'no kprobe PMU'),
    lost('the kprobes_perf helper', 'perf_kretprobe_pmu', 'no ./kprobes_perf'),
    ('a declared skip, for another reason',
     mutate('test', 'out', sub(r'with maxactive # SKIP .*',
                               'with maxactive # SKIP no second CPU')),
     (), None, 1, r'with maxactive skipped, and no skip'),
    ('the second CPU lost',
     mutate('test', 'out', sub(r'^ok (\d+) cpus$', r'not ok \1 cpus')),
     (), None, 1, r'FAIL: suite: cpus'),
    ('a KUnit suite whose cases all skipped',
     mutate('test', 'log', first_three_kunit_cases_skip), (), None, 1,
     r'kprobes_blacklist: every one of its \d+ case\(s\) skipped'),
    ('kretprobe BUG!',
     mutate('test', 'log', insert_after(r'Run /init',
                                        ['kretprobe BUG!: Processing kretprobe 00000000 @ x'])),
     (), None, 1, r'kernel splat: kretprobe BUG!'),
    ('printk messages dropped',
     mutate('test', 'log', insert_after(r'Run /init', ['** 3 printk messages dropped **'])),
     (), None, 1, r'kernel splat: \*\* 3 printk messages dropped'),
    ('__this_cpu in preemptible code',
     mutate('test', 'log', insert_after(r'Run /init', [
         'BUG: using __this_cpu_read() in preemptible [00000000] code: sh/1'])),
     (), None, 1, r'kernel splat: BUG: using __this_cpu_read'),
    ('sleeping function called from invalid context',
     mutate('test', 'log', insert_after(r'Run /init', [
         'BUG: sleeping function called from invalid context at mm/slub.c:4119'])),
     (), None, 1, r'kernel splat: BUG: sleeping function'),
    ('an UBSAN report (the preempt configuration has UBSAN)',
     mutate('test', 'log', insert_after(r'Run /init', [
         'UBSAN: shift-out-of-bounds in kernel/kprobes/arm.c:120:5'])),
     (), None, 1, r'kernel splat: UBSAN: shift-out-of-bounds'),
    # kprobes' own messages that say it went wrong (ktap.py's
    # KPROBES_ERRORS), each a failure unless a case declares it.
    ('kprobes could not arm some probes',
     mutate('test', 'log', insert_after(r'Run /init', [
         'kprobes: some probes could not be armed'])),
     (), None, 1, r'kernel splat: kprobes: some probes could not be armed'),
    ('ftrace refused to arm entry probes',
     mutate('test', 'log', insert_after(r'Run /init', [
         'kprobes: ftrace refused to arm 2 probe(s) with a post_handler: -16'])),
     (), None, 1, r'kernel splat: kprobes: ftrace refused to arm 2 probe'),
    ('an incomplete blacklist',
     mutate('test', 'log', insert_after(r'Run /init', [
         'kprobes: incomplete blacklist: -12'])),
     (), None, 1, r'kernel splat: kprobes: incomplete blacklist: -12'),
    ('a refused registration is no failure',
     mutate('test', 'log', insert_after(r'Run /init', [
         'kprobes: vfs_read+0x1/0x2ca is not on an instruction boundary'])),
     (), None, 0, r'^\d+ passed, 0 failed'),
    ('arm64: an oops on a BRK (arm64 prints no "Oops" first)',
     mutate('test', 'log', insert_after(r'Run /init', [
         'Internal error: Oops - BRK: 00000000f2000100 [#1] PREEMPT SMP',
         'Modules linked in: kprobes_target', 'Call trace:',
         ' kpt_asm_add+0x0/0x8 [kprobes_target]',
         '---[ end trace 0000000000000000 ]---']), ARM64),
     ON_ARM64, None, 1, r'kernel splat: Internal error: Oops - BRK'),
    ('run_tests.sh failed but reported no failure',
     mutate('test', 'out', sub(r'exit status 0', 'exit status 1')), (), None, 1,
     r'exited with status 1 but reported no failed case'),
    ('run_tests.sh exit status lost',
     mutate('test', 'out', drop(r'run_tests.sh exit status')), (), None, 1,
     r'never reported its exit status'),
    ('no end marker', mutate('test', 'out', drop(r'^KTEST-END$')), (), None, 1,
     r'no end marker'),
    ('a timeout', BOOTS, (), {'test': 124}, 1, r'the guest did not finish'),
    ('a timeout names the case that was running, and what did not run',
     mutate('test', 'out', stopped_in('kretprobe_suite')), (), {'test': 124}, 1,
     r'^FAIL: the guest did not finish within 900 s \(timeout\): case '
     r'kretprobe_suite was running since \d+ s of guest uptime, after \d+ case\(s\)\n'
     r'(.*\n)*    \| what each case before it took \(s\), \d+ in all:\n'
     r'    \|   cpus \d+, irq_masking \d+, kunit_suites \d+, .*\n'
     r'(.*\n)*    \| not run \(\d+\): perf_kretprobe_pmu, '),
    ('a guest that stopped early, without the end marker, says where',
     mutate('test', 'out', stopped_in('kretprobe_suite')), (), None, 1,
     r'^FAIL: no end marker: .*: case kretprobe_suite was running'),
    ('a stop is one failure, not a vanished suite',
     mutate('test', 'out', stopped_in('kretprobe_suite')), (), {'test': 124}, 1,
     r'^\d+ passed, 1 failed'),
    ('ftracetest stopped at its limit in the guest',
     mutate('test', 'out', lambda ls: sub(r'exit status 0', 'exit status 1')(
         ftracetest_timed_out(ls))), (), None, 1,
     r'^FAIL: suite: ftracetest\.\S.*\n(    \|.*\n)*?    \| +not ok \d+ .* # TIMEOUT x\.tc was running'),
    ('a failure the expectation file lists (a deliberate difference)',
     mutate('test', 'out', lambda ls: sub(r'exit status 0', 'exit status 1')(
         sub(r'^ok (\d+) samples$', r'not ok \1 samples')(ls))),
     ('expect=' + XFAIL.name,), None, 0, r'^XFAIL: suite: samples'),
    ('a listed difference that did not show',
     BOOTS, ('expect=' + XFAIL.name,), None, 1,
     r'samples passed, but the expectation file says it fails here'),
    ('a suite the expectation file says this tree has not, seen running',
     BOOTS, ('expect=' + ABSENT.name,), None, 1,
     r'kprobes_compat\S* ran, but the expectation file says this tree has none'),
    ('a suite this tree has not, absent: its needs are dropped',
     mutate('test', 'log', module_gone('kprobes_compat')),
     ('expect=' + ABSENT.name,), None, 0, r'^\d+ passed, 0 failed'),
    ('a splat the expectation file lists',
     mutate('test', 'log', insert_after(r'Run /init', OOPS)),
     ('expect=' + SPLAT.name,), None, 0, r'^XFAIL: kernel splat: Oops: 0004'),
    ('a listed splat that did not show',
     BOOTS, ('expect=' + SPLAT.name,), None, 1,
     r'no kernel splat matches "\*kpt_oops_here\+\*"'),
    ('a splat the expectation file lists for another function',
     mutate('test', 'log', insert_after(r'Run /init',
                                        [l.replace('kpt_oops_here', 'kpt_other')
                                         for l in OOPS])),
     ('expect=' + SPLAT.name,), None, 1, r'FAIL: kernel splat: Oops: 0004'),
    ('make run, as recorded', {'run': RUN}, (), None, 0, r'^\d+ passed, 0 failed'),
    # arm64's upstream boot: its own rows (x86-only skips, no jump
    # optimization, no kprobes on ftrace), the others' needs.
    ('arm64 upstream, as recorded', ARM64, ON_ARM64, None, 0,
     r'^\d+ passed, 0 failed'),
    ('arm64 logs judged as x86-64 (the x86-64 rows apply)', ARM64,
     ('expect=' + EXPECT_UPSTREAM,), None, 1,
     r'kunit: kprobes_stress did not run'),
    ('arm64: an x86-only case that skipped for another reason',
     mutate('test', 'out', sub(r'^ok (\d+) stress_suite # SKIP .*',
                               r'ok \1 stress_suite # SKIP no second CPU'), ARM64),
     ON_ARM64, None, 1, r'stress_suite skipped, and no skip of it is declared'),
    ('arm64: an x86-only KUnit case that skipped for another reason',
     mutate('test', 'log', sub(r'kpk_ftrace_duo # SKIP .*',
                               'kpk_ftrace_duo # SKIP no second CPU'), ARM64),
     ON_ARM64, None, 1, r'kpk_ftrace_duo skipped, and no skip of it is declared'),
    ('arm64: a KUnit module that did not load (its suite missing)',
     mutate('test', 'log', block_without(r'# Subtest: kprobes_kretprobe',
                                        r'^(not )?ok \d+ kprobes_kretprobe'), ARM64),
     ON_ARM64, None, 1, r'kunit: kprobes_kretprobe did not run'),
    ('arm64: a case of test_kprobes.c gone, plan and all',
     mutate('test', 'log', lambda ls: sub(r'^    1\.\.7$', '    1..6')(
         drop(r'^    ok \d+ test_stacktrace_on_kretprobe$')(ls)), ARM64),
     ON_ARM64, None, 1, r'kprobes_test\.test_stacktrace_on_kretprobe did not run'),
    ('arm64: a case of ours removed from the suite (plan and all)',
     mutate('test', 'out', lambda ls: [re.sub(r'^# cases:(.*) samples', r'# cases:\1', l)
                                      for l in drop(r'^ok \d+ samples$')(ls)], ARM64),
     ON_ARM64, None, 1, r'suite: samples did not run'),
    ('arm64: upstream\'s listed difference that did not show',
     mutate('test', 'out', sub(r'^not ok (\d+) bad_address$', r'ok \1 bad_address'), ARM64),
     ON_ARM64, None, 1, r'bad_address passed, but the expectation file says it fails here'),
    ('make run, a sample that did not load',
     {'run': (RUN[0], [re.sub(r'^ok 2 kretprobe_example', 'not ok 2 kretprobe_example', l)
                       for l in RUN[1]])}, (), None, 1,
     r'FAIL: suite: kretprobe_example'),
    ('make run, the samples never reported',
     {'run': (RUN[0], [l for l in RUN[1] if not re.match(r'(ok|1\.\.)', l)])},
     (), None, 1, r'kprobe_example did not run'),
]


# Where the product prints its messages, and how a call to print one at
# warning level or above looks (its format: the string literals that
# follow).  The same literals come out of the console as "kprobes: TEXT".
TOP = os.path.join(HERE, '..', '..')
SOURCES = ['kernel/kprobes', 'arch/x86/kernel/kprobes', 'arch/arm64/kernel/probes']
PRINT = re.compile(r'\b(pr_(?:emerg|alert|crit|err|warn|info|notice)'
                   r'(?:_once|_ratelimited)?)\s*\(((?:\s*"(?:[^"\\]|\\.)*")+)')
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
# What each conversion can print: a text must be classified for one of the
# combinations (%s is a name, a state or a clause).
SAMPLES = [(r'%p[SsB]', ['kpt_asm_add+0x1/0x2 [kprobes_target]', 'vfs_read+0x0/0x2ca']),
           (r'%p', ['00000000a1b2c3d4']),
           (r'%s', ['vfs_read', 'enabled', 'disabled', ' with a post_handler', '']),
           (r'%(?:l|z)?[ud]', ['3', '-22']),
           (r'%x', ['1f'])]
CONVERSION = re.compile('|'.join('(%s)' % c for c, _ in SAMPLES))


def renderings(fmt):
    """Each text a format can print, over SAMPLES."""
    fmt = fmt.replace('\\n', '').replace('%%', '%')
    parts = CONVERSION.split(fmt)
    # split() gives text, then one group per SAMPLES entry, repeatedly.
    n = len(SAMPLES) + 1
    texts, slots = [parts[0]], []
    for i in range(1, len(parts), n):
        groups = parts[i:i + n - 1]
        k = next(j for j, g in enumerate(groups) if g is not None)
        slots.append(SAMPLES[k][1])
        texts.append(parts[i + n - 1])
    for values in itertools.product(*slots):
        out = texts[0]
        for v, t in zip(values, texts[1:]):
            out += v + t
        yield out


def messages_sorted():
    """The product's messages that KPROBES_ERRORS and KPROBES_NOTICES
    (ktap.py) leave out: (file, call, format).  Also how many were read."""
    sys.path.insert(0, os.path.join(HERE, '..'))
    import ktap
    left, n = [], 0
    for d in SOURCES:
        for f in sorted(glob.glob(os.path.join(TOP, d, '*.[chS]'))):
            with open(f) as fh:
                src = fh.read()
            for m in PRINT.finditer(src):
                n += 1
                fmt = ''.join(LITERAL.findall(m.group(2)))
                if not any(ktap.kprobes_message(t) for t in renderings(fmt)):
                    left.append((os.path.relpath(f, TOP), m.group(1), fmt))
    return left, n


def main():
    bad = 0
    left, n = messages_sorted()
    print('%s every message of the product sorted (%d read): %s' %
          ('ok  ' if n and not left else 'FAIL', n,
           'none left out' if not left else '%d left out' % len(left)))
    for f, call, fmt in left:
        print('    %s: %s("%s") is in neither KPROBES_ERRORS nor '
              'KPROBES_NOTICES (harness/ktap.py)' % (f, call, fmt))
    if not n or left:
        bad += 1
    for what, boots, extra, status, want_rc, want in CHECKS:
        rc, out = ktap(boots, extra, status)
        hit = re.search(want, out, re.M)
        good = rc == want_rc and hit
        print('%s %s: %s' % ('ok  ' if good else 'FAIL', what,
                             'red' if rc else 'green'))
        if not good:
            bad += 1
            print('    wanted %s matching /%s/; ktap.py said:' %
                  ('red' if want_rc else 'green', want))
            for l in out.split('\n')[-15:]:
                print('    | ' + l)
    os.unlink(XFAIL.name)
    os.unlink(ABSENT.name)
    os.unlink(SPLAT.name)
    os.unlink(ARM64_EXPECT.name)
    print('test-judge: %d checks, %d wrong' % (len(CHECKS) + 1, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
