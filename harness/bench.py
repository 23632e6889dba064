#!/usr/bin/env python3
"""Turn the BENCH lines of the two benchmark boots into the table of
`make bench`: printed, and written as text, CSV and a PNG chart.

    bench.py --upstream build/logs/bench-upstream.out \\
             --ours build/logs/bench-ours.out --out build/bench \\
             [--arch x86_64|i386|arm64]

The guest prints "BENCH <name> <value>" (see
tools/testing/selftests/kprobes/bench/kpb_main.c): instructions per call
of a loop, or guest nanoseconds for the registration figures.  Hit
figures here are probed minus un-probed cost of the same call.  A figure
of a mechanism the architecture does not have is "BENCH-NA <name> <why>"
instead, shown as n/a.  --arch chooses the architecture's set of
figures: i386 has x86-64's (the same targets, built for both widths);
arm64 has figure 4 as a breakpoint (no probes on ftrace) and figure 12
by its own first instructions, with their hits.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

NMANY = 1000
SCALE = (100, 1000, 10000)     # figure 11's probe counts
NSHAPE = 200                   # figure 12's probes per first instruction
NCFUNCS = 1000                 # figure 13: C functions, entries probed
WL_NFUNCS = 50                 # figure 15: KPB_WL_NFUNCS, functions probed

# (key, title, baseline key, target ours/upstream)
# Fresh figures (1b, 2b, 4b, 5b) are the first loop of calls right
# after registration (issue 37: no state of a probe slower than
# upstream's); 1b is figure 1 on a nop inside a C function; 4c is what
# the entry probe adds to a call that the function tracer traces too
# (a second ftrace user on the function), over that call traced alone.
HITS = [
    ('post', '1. breakpoint + post_handler (stepped)', 'call_asm', 0.8),
    ('post_c', '1b. the same, on a nop inside a C function', 'call_c_nop',
     0.8),
    ('boosted', '2. breakpoint, boosted', 'call_asm', 0.7),
    ('bp_fresh', '2b. breakpoint, fresh (optimization on)', 'call_asm',
     1.0),
    ('optimized', '3. optimized (jump)', 'call_asm', 0.55),
    ('ftrace', '4. entry probe on ftrace', 'call_c', 0.8),
    ('ftrace_fresh', '4b. entry probe, fresh', 'call_c', 1.0),
    ('ftrace_traced', '4c. entry probe, function tracer on it too',
     'call_c_traced', 1.0),
    ('kretprobe', '5. kretprobe', 'call_c', 0.6),
    ('kretprobe_fresh', '5b. kretprobe, fresh', 'call_c', 1.0),
    ('kprobe_kretprobe', '6. kprobe + kretprobe', 'call_c', 0.55),
]
# arm64: figures 2 and 4 are n/a (BENCH-NA), and 3 on upstream; a probe
# on a function's entry is a breakpoint on ftrace's mov x9, x30, figure 4
# as it is there, then optimized where the kernel optimizes probes.
HITS_ARM64 = HITS[:7] + [
    ('entry', '4. entry probe, breakpoint on mov x9, x30', 'call_c', None),
    ('entry_fresh', '4b. entry probe, breakpoint, fresh', 'call_c', 1.0),
    ('entry_traced', '4c. entry probe, function tracer on it too',
     'call_c_traced', 1.0),
    ('entry_opt', '4. entry probe, optimized (jump)', 'call_c', None),
] + HITS[8:]

# The architectures with x86's figures: kpb_asm.S, kpb_funcs.S and
# kpb_gen.S are built for both widths.
X86 = ('x86_64', 'i386')

# Figure 12's first instructions (kpb_gen.S, kpb_gen_arm64.S): key and
# what the title calls it.  Registering on those of x86 but the plain
# one has a target (text checks cost the same whatever the bytes).
SHAPES = {
    'x86_64': [(k, 'a ' + k) for k in ('nop', 'call', 'jmp', '0f', '66',
                                       'plain')],
    'arm64': [('nop', 'a nop'), ('bti', 'a bti c'),
              ('b', 'a b to the next'), ('adrp', 'an adrp'),
              ('ldr', 'an ldr (literal)'), ('paciasp', 'a paciasp'),
              ('stp', 'an stp x29, x30'), ('plain', 'a plain mov')],
}
SHAPES['i386'] = SHAPES['x86_64']


def parse(path):
    """The values of a log, its errors, and its n/a figures (why)."""
    vals, errors, na = {}, [], {}
    # `harness/bench.sh ours` reuses the other tree's last log: there may
    # be none yet on this machine.
    if not os.path.exists(path):
        return vals, ['no log %s: run make bench (both trees) first' % path], na
    with open(path, errors='replace') as f:
        for line in f:
            line = line.strip()
            if line.startswith('BENCH-ERROR'):
                errors.append(line)
            elif line.startswith('BENCH-NA '):
                parts = line.split(None, 2)
                if len(parts) == 3:
                    na[parts[1]] = parts[2]
                else:
                    errors.append('unparsable: ' + line)
            elif line.startswith('BENCH '):
                parts = line.split()
                if len(parts) == 3:
                    try:
                        vals[parts[1]] = float(parts[2])
                    except ValueError:
                        errors.append('unparsable: ' + line)
    return vals, errors, na


class Row:
    def __init__(self, title, unit, up, ours, target=None, basis=None,
                 judged=None, note=''):
        self.title, self.unit, self.up, self.ours = title, unit, up, ours
        self.target = target      # bound on `judged`
        self.basis = basis        # what the bound is on, in words
        self.judged = judged      # the number compared with the target
        self.note = note
        self.up_optional = False  # not taken on upstream, by design
        self.na_up = self.na_ours = None  # why the figure does not exist

    def ratio(self):
        if self.up is None or self.ours is None or self.up <= 0:
            return None
        return self.ours / self.up

    def met(self):
        if self.target is None or self.na_up or self.na_ours:
            return None
        if self.judged is None:
            return False
        return self.judged <= self.target


def get(v, *keys):
    if any(k not in v for k in keys):
        return None
    return [v[k] for k in keys]


def rows_for(up, ours, arch='x86_64', na_up=None, na_ours=None):
    """The table's rows for @arch; na_*: the n/a figures of each tree."""
    rows = []
    na_up, na_ours = na_up or {}, na_ours or {}

    def both(fn):
        return fn(up), fn(ours)

    def na(r, name):
        """Mark @r n/a where figure @name is (its note says why)."""
        r.na_up, r.na_ours = na_up.get(name), na_ours.get(name)
        why = sorted(set(w for w in (r.na_up, r.na_ours) if w))
        if why:
            r.note = 'n/a on %s: %s' % (arch, '; '.join(why))
        return r

    for key, title in (('call_asm', 'un-probed call, breakpoint target'),
                       ('call_c', 'un-probed call, ftrace target'),
                       ('call_c_nop', 'un-probed call, C target (1b)'),
                       ('call_c_traced',
                        'un-probed call, ftrace target, function tracer (4c)')):
        rows.append(Row(title, 'insn', up.get(key), ours.get(key)))

    def hit(key, base):
        def f(v):
            g = get(v, key, base)
            return None if g is None else g[0] - g[1]
        return f

    for key, title, base, target in (HITS_ARM64 if arch == 'arm64'
                                     else HITS):
        u, o = both(hit(key, base))
        r = Row(title, 'insn/hit', u, o, target,
                None if target is None else 'ours/upstream')
        r.judged = r.ratio()
        rows.append(na(r, key))

    def per_hit(hitkey, callkey):
        def f(v):
            g = get(v, hitkey, callkey)
            return None if g is None else g[0] - g[1]
        return f

    # Figure 7: the breakpoint hit with NMANY others registered, against
    # the same hit alone (in the same kernel).
    u, o = both(per_hit('lookup_many', 'call_asm'))
    ua, oa = both(per_hit('lookup_one', 'call_asm'))
    r = Row('7. breakpoint hit, %d others registered' % NMANY, 'insn/hit',
            u, o, 1.05, 'ours: vs one probe alone')
    r.judged = o / oa if o is not None and oa else None
    r.note = 'alone: upstream %s, ours %s; upstream %s of alone' % (
        fmt(ua), fmt(oa), fmt(u / ua if u is not None and ua else None, 2))
    rows.append(r)

    # Figure 8: two CPUs hitting the same probe, per hit, against one CPU.
    u, o = both(per_hit('smp_hit_two', 'smp_call_two'))
    ua, oa = both(per_hit('smp_hit_one', 'smp_call_one'))
    r = Row('8. breakpoint hit, both CPUs at once', 'insn/hit', u, o, 1.2,
            'ours: vs one CPU')
    r.judged = o / oa if o is not None and oa else None
    r.note = 'one CPU: upstream %s, ours %s; upstream %s of one CPU' % (
        fmt(ua), fmt(oa), fmt(u / ua if u is not None and ua else None, 2))
    rows.append(r)

    # Figure 12's hits (arm64): on the first function of each first
    # instruction, simulated in the trap or stepped out of line.
    if arch == 'arm64':
        for kind, what in SHAPES[arch]:
            u, o = both(hit('shape_%s_hit' % kind, 'shape_%s_call' % kind))
            rows.append(Row('12. hit on %s' % what, 'insn/hit', u, o))

    def ms(key):
        def f(v):
            g = get(v, key, 'cycles_per_ms')
            return None if g is None or not g[1] else g[0] / g[1]
        return f

    for key, title, target in (
            ('single_register_ns', '9. register %d, one at a time' % NMANY,
             0.1),
            ('single_unregister_ns', '9. unregister %d, one at a time' % NMANY,
             0.05),
            ('batch_register_ns', '10. register_kprobes(%d)' % NMANY, 0.1),
            ('batch_unregister_ns', '10. unregister_kprobes(%d)' % NMANY,
             0.5)):
        u, o = both(ms(key))
        r = Row(title, 'ms', u, o, target, 'ours/upstream')
        r.judged = r.ratio()
        rows.append(r)
        # The same with debug.kprobes-optimization at 0 on both trees:
        # upstream's one-at-a-time figures include its optimizer's work,
        # ours defer it out of the timed window.
        noopt = key.replace('_', '_noopt_', 1)
        u, o = both(ms(noopt))
        rows.append(na(Row(title + ', optimization off', 'ms', u, o),
                       key.split('_')[0] + '_noopt'))

    # Figure 11: registration cost per probe from 100 to 10,000 probes, in
    # a module of 10,000 functions; flat means the largest count costs at
    # most 1.25 times the smallest, per probe.  Upstream takes only
    # register_kprobes() up to 1,000 (bench.sh says why).
    def us(key, n=1):
        def f(v):
            g = get(v, key, 'cycles_per_ms')
            return None if g is None or not g[1] else g[0] / g[1] * 1000 / n
        return f

    u, o = both(us('scale_first_register_ns'))
    r = Row('11. first probe in a module of %d functions' % SCALE[-1], 'us',
            u, o)
    rows.append(r)
    def scale_rows(key, title):
        for mode, what in (('batch', 'register_kprobes'),
                           ('single', 'one at a time')):
            per = {}
            for n in SCALE:
                u, o = both(us('%s_%s_%d_register_ns' % (key, mode, n), n))
                per[n] = o
                r = Row('%s %s, %d probes' % (title, what, n), 'us/probe',
                        u, o)
                r.up_optional = mode == 'single' or n > 1000
                if n == SCALE[-1]:
                    r.target = 1.25
                    r.basis = 'ours: vs %d probes' % SCALE[0]
                    r.judged = (o / per[SCALE[0]]
                                if o is not None and per[SCALE[0]] else None)
                    r.note = 'ours per probe: ' + ', '.join(
                        '%d: %s us' % (m, fmt(per[m], 2)) for m in SCALE)
                rows.append(r)

    scale_rows('scale', '11.')

    # Figure 12: one at a time on functions by first instruction.  The
    # text checks (jump label, static call, BUG) must cost the same
    # whatever the bytes: on a nop, call, jmp, 0f or 66 ours is to take at
    # most 0.02 of upstream's time to register.
    for kind, shape in SHAPES[arch]:
        for what in ('register', 'unregister'):
            u, o = both(us('shape_%s_%s_ns' % (kind, what), NSHAPE))
            r = Row('12. %s %d one at a time, on %s' % (what, NSHAPE, shape),
                    'us/probe', u, o)
            if what == 'register' and kind != 'plain' and arch in X86:
                r.target = 0.02
                r.basis = 'ours/upstream'
                r.judged = r.ratio()
            rows.append(r)

    # Figure 13: on the entries of C functions (their ftrace calls), where
    # perf probe, kprobe_events and bpftrace put nearly every probe.
    for mode, what in (('single', 'one at a time'),
                       ('batch', 'register_kprobes')):
        for op in ('register', 'unregister'):
            u, o = both(us('entry_%s_%s_ns' % (mode, op), NCFUNCS))
            r = Row('13. %s %d function entries, %s' % (op, NCFUNCS, what),
                    'us/probe', u, o)
            if mode == 'single':
                r.target = 0.05
                r.basis = 'ours/upstream'
                r.judged = r.ratio()
            rows.append(r)

    # Figure 13 at scale: as figure 11, on the entries of up to 10,000 C
    # functions; flat means the largest count costs at most 1.25 times
    # the smallest, per probe.
    scale_rows('escale', '13. entries,')

    # Figure 14: the same entries attached from user space (kpb_attach):
    # kprobe_events lines, enabled through their group; and one
    # perf_event_open() each on the kprobe PMU, as bpftrace attaches.
    # Enabling and disabling is arming and disarming one probe at a time:
    # the target of figure 13.  The other steps also create or delete a
    # trace event (and check that the symbol is unique), work of
    # kernel/trace/ that both trees share; their notes say so.
    single = {}
    for op in ('register', 'unregister'):
        single[op] = both(us('entry_single_%s_ns' % op, NCFUNCS))
    trace = 'the rest is kernel/trace/\'s, the same code in both trees'
    for key, what, note in (
            ('events_add', 'kprobe_events: append %d p: lines',
             'each registers a disabled kprobe, some us of ours (13.); ' + trace),
            ('events_enable', 'kprobe_events: enable the group', None),
            ('events_disable', 'kprobe_events: disable the group', None),
            ('events_remove', 'kprobe_events: %d -: lines',
             'each unregisters a disabled kprobe, some us of ours (13.); ' + trace),
            ('pmu_open', 'perf kprobe PMU: %d perf_event_open()', 'register'),
            ('pmu_close', 'perf kprobe PMU: close them', 'unregister')):
        u, o = both(us('attach_%s_ns' % key, NCFUNCS))
        title = what % NCFUNCS if '%d' in what else what
        r = Row('14. ' + title, 'us/probe', u, o)
        if note is None:
            r.target = 0.05
            r.basis = 'ours/upstream'
            r.judged = r.ratio()
        elif note in single:
            su, so = single[note]
            r.note = ('%s_kprobe() one at a time (13.): upstream %s us, '
                      'ours %s us; %s' % (note, fmt(su), fmt(so), trace))
        else:
            r.note = note
        rows.append(r)

    # Figure 15: what a workload pays (kpb_workload: open, read, close and
    # stat of a file, getpid(), fork() and exec of a child, wait), in
    # executed instructions per iteration of its loop, with no probes and
    # with an entry kprobe or a kretprobe on each of the WL_NFUNCS kernel
    # functions it calls (kpb_workload_funcs.h).  Judged: what the probes
    # add, ours against upstream's.
    for key, title in (
            ('none', '15. workload, per iteration, no probes'),
            ('entry', '15. the same, %d entry probes' % WL_NFUNCS),
            ('ret', '15. the same, %d kretprobes' % WL_NFUNCS)):
        k = 'workload_' + key
        rows.append(Row(title, 'insn', up.get(k), ours.get(k)))
    for key, what in (('entry', 'entry probes'), ('ret', 'kretprobes')):
        u, o = both(per_hit('workload_' + key, 'workload_none'))
        r = Row('15. overhead of %d %s' % (WL_NFUNCS, what), 'insn', u, o,
                0.5, 'ours/upstream')
        r.judged = r.ratio()
        # Hits and misses while armed (the untimed rounds and the rest
        # of the guest too): a miss costs less than a hit, so a tree
        # that misses more looks cheaper than it is.
        notes = []
        for what, k in (('hits', 'workload_%s_hits' % key),
                        ('missed hits', 'workload_%s_missed' % key),
                        ('missed returns',
                         'workload_%s_missed_returns' % key)):
            n = both(lambda v, k=k: v.get(k))
            if n != (None, None):
                notes.append('%s upstream %s, ours %s' % (
                    what, fmt(n[0], 0), fmt(n[1], 0)))
        r.note = '; '.join(notes)
        rows.append(r)
    return rows


def fmt(x, digits=1):
    if x is None:
        return '-'
    return '%.*f' % (digits, x)


def fmt_ratio(x):
    """Two decimals, or two significant digits below 0.1."""
    if x is not None and 0 < x < 0.1:
        return '%.2g' % x
    return fmt(x, 2)


def table(rows):
    head = ['figure', 'unit', 'upstream', 'ours', 'ours/up', 'target',
            'met']
    body = []
    for r in rows:
        met = r.met()
        tgt = '-'
        if r.target is not None and met is not None:
            tgt = '<= %.2f (%s)' % (r.target, r.basis)
            if r.basis != 'ours/upstream':
                tgt += ' = %s' % fmt(r.judged, 2)
        body.append([r.title, r.unit,
                     'n/a' if r.na_up else fmt(r.up),
                     'n/a' if r.na_ours else fmt(r.ours),
                     fmt_ratio(r.ratio()), tgt,
                     '-' if met is None else ('yes' if met else 'NO')])
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    right = {2, 3, 4}

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.rjust(widths[i]) if i in right else c.ljust(widths[i]))
        return '  '.join(out).rstrip()
    lines = [line(head), line(['-' * w for w in widths])]
    lines += [line(b) for b in body]
    notes = [(r.title, r.note) for r in rows if r.note]
    if notes:
        lines.append('')
        lines += ['%s: %s' % n for n in notes]
    return '\n'.join(lines)


def write_csv(path, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['figure', 'unit', 'upstream', 'ours', 'ours_over_upstream',
                    'target', 'target_basis', 'judged_value', 'met', 'note'])
        for r in rows:
            met = r.met()
            w.writerow([r.title, r.unit,
                        'n/a' if r.na_up else fmt(r.up),
                        'n/a' if r.na_ours else fmt(r.ours),
                        fmt(r.ratio(), 3),
                        '' if r.target is None else r.target,
                        r.basis or '', fmt(r.judged, 3),
                        '' if met is None else ('yes' if met else 'no'),
                        r.note])


def chart(out, rows, info):
    """Two bar charts: hit costs, registration times (log scale)."""
    gp = shutil.which('gnuplot')
    if not gp:
        return 'gnuplot not installed: no chart'
    hits = [r for r in rows if r.unit == 'insn/hit'
            and not (r.na_up or r.na_ours)]
    regs = [r for r in rows if r.unit == 'ms' and not (r.na_up or r.na_ours)]
    dat1 = os.path.join(out, 'bench-hits.dat')
    dat2 = os.path.join(out, 'bench-register.dat')

    def dump(path, rs):
        with open(path, 'w') as f:
            for r in rs:
                f.write('"%s" %s %s\n' % (r.title.replace('"', "'"),
                                          fmt(r.up) if r.up is not None else '0',
                                          fmt(r.ours) if r.ours is not None else '0'))
    dump(dat1, hits)
    dump(dat2, regs)
    png = os.path.join(out, 'bench.png')
    script = os.path.join(out, 'bench.gp')
    with open(script, 'w') as f:
        f.write('''set terminal pngcairo size 1400,1000 font ",11"
set output "%(png)s"
set termoption noenhanced
set multiplot layout 2,1 title "kprobes: upstream vs ours (%(info)s)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top right
set grid ytics
set xtics rotate by -20 scale 0
set title "Cost per hit (executed instructions, un-probed call subtracted; lower is better)"
set ylabel "instructions per hit"
set yrange [0:*]
plot "%(d1)s" using 2:xtic(1) title "upstream" lc rgb "#999999", \\
     "" using 3 title "ours" lc rgb "#2a6fbb", \\
     "" using 0:2:(sprintf("%%.0f",$2)) with labels offset -1.5,0.7 notitle, \\
     "" using 0:3:(sprintf("%%.0f",$3)) with labels offset 1.5,0.7 notitle
set title "Registering and unregistering %(n)d probes (guest milliseconds, log scale; lower is better)"
set ylabel "ms"
set logscale y
set yrange [1:*]
plot "%(d2)s" using 2:xtic(1) title "upstream" lc rgb "#999999", \\
     "" using 3 title "ours" lc rgb "#2a6fbb", \\
     "" using 0:2:(sprintf("%%.0f",$2)) with labels offset -1.5,0.7 notitle, \\
     "" using 0:3:(sprintf("%%.0f",$3)) with labels offset 1.5,0.7 notitle
unset multiplot
''' % {'png': png, 'info': info, 'd1': dat1, 'd2': dat2, 'n': NMANY})
    try:
        subprocess.run([gp, script], check=True, capture_output=True,
                       text=True)
    except subprocess.CalledProcessError as e:
        return 'gnuplot failed: ' + e.stderr.strip()
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--upstream', required=True)
    ap.add_argument('--ours', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--arch', default='x86_64', choices=sorted(SHAPES))
    args = ap.parse_args()

    up, up_err, up_na = parse(args.upstream)
    ours, ours_err, ours_na = parse(args.ours)
    rows = rows_for(up, ours, args.arch, up_na, ours_na)
    os.makedirs(args.out, exist_ok=True)

    info = 'QEMU TCG -icount shift=0, HZ=%s' % fmt(ours.get('hz'), 0)
    if args.arch != 'x86_64':
        info = '%s, %s' % (args.arch, info)
    text = ['kprobes benchmark: %s; hit figures in executed instructions,'
            % info,
            'the cheapest of 5 loops of 1000 calls; registration in guest ms.',
            '']
    if args.arch == 'arm64':
        # kpb_main.c's kpb_insns(): the generic timer's count, at 62.5 MHz.
        text[1:2] = [
            'the cheapest of 5 loops of 1000 calls (each known to 16 '
            'instructions:',
            'the generic timer counts at 62.5 MHz); registration in guest ms.']
    text.append(table(rows))
    errs = ['upstream: ' + e for e in up_err] + ['ours: ' + e for e in ours_err]
    if errs:
        text += [''] + errs
    text = '\n'.join(text) + '\n'
    with open(os.path.join(args.out, 'bench.txt'), 'w') as f:
        f.write(text)
    write_csv(os.path.join(args.out, 'bench.csv'), rows)
    problem = chart(args.out, rows, info)
    sys.stdout.write(text)
    print()
    print('written: %s/bench.txt, bench.csv%s' % (
        args.out, '' if problem else ', bench.png'))
    if problem:
        print('note: ' + problem)
    missing = [r.title for r in rows
               if (r.up is None and not r.up_optional and not r.na_up)
               or (r.ours is None and not r.na_ours)]
    if missing:
        print('missing figures: ' + '; '.join(missing))
    return 1 if missing or errs else 0


if __name__ == '__main__':
    sys.exit(main())
