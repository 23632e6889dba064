#!/usr/bin/env python3
"""What kprobes must refuse among the probes of the suite's
probe_all_functions, read on the host from the kernel's own tables in
vmlinux and in the modules' ELF files, not from the kernel under test.

    harness/forbidden.py VMLINUX CONFIG OUT CROSS [MODULE.ko ...]

probe_all_functions puts two probes on every function that ftrace can
trace: one on its ftrace call site (its entry: on arm64 the instruction
before the site) and one on the first instruction past that call.  For
each of those probes that Documentation/trace/kprobes.rst says must be
refused, OUT gets a line

    KEY KIND ERRNO REASON

KEY names the function the way the suite's target list does: "@HEX", the
link-time address of its ftrace call site, for vmlinux, or MODULE:NAME.
KIND is entry or offset, ERRNO what registering it must return, and
REASON where the rule was found.  The rules:

  - a function on the blacklist may not be probed anywhere (EINVAL):
    a function named by NOKPROBE_SYMBOL() (the _kprobe_blacklist table),
    in .kprobes.text, .entry.text, .irqentry.text, .softirqentry.text or
    .noinstr.text, the architecture's own areas (x86-64: ftrace's
    trampoline templates; arm64: the identity-mapped, hypervisor,
    hibernation-exit and entry-trampoline text, and the software PAN
    helpers), and a compiler's copy (NAME.constprop.0 and the like) of
    any of them;
  - a jump label or static call site is refused with EBUSY, a BUG trap
    with EINVAL (the __jump_table, static_call_sites and __bug_table
    tables);
  - on arm64, an instruction of a class the backend refuses (EINVAL),
    read from the A64 encoding (a64_refused()).

The first line is "_text HEX": the suite checks that the kernel runs at
its link address (no KASLR), since the keys are link-time addresses.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from offsets import Elf, Funcs                   # noqa: E402

BLACK_SECTIONS = ('kprobes_text', 'entry_text', 'irqentry_text',
                  'softirqentry_text', 'noinstr_text')
MODULE_BLACK_SECTIONS = ('.kprobes.text', '.noinstr.text')
# arm64's own areas, as linker symbols __NAME_start/__NAME_end.
ARM64_AREAS = ('idmap_text', 'hyp_idmap_text', 'hyp_text',
               'hibernate_exit_text', 'entry_tramp_text')
ARM64_SWPAN = ('__swpan_entry_el1', '__swpan_entry_el0',
               '__swpan_exit_el1', '__swpan_exit_el0')


def config(path):
    opts = {}
    with open(path) as f:
        for line in f:
            if line.startswith('CONFIG_') and '=' in line:
                k, v = line.strip().split('=', 1)
                opts[k[len('CONFIG_'):]] = v
    return opts


def clone_base(name):
    """foo for foo.constprop.0 and the like; None for a plain name."""
    dot = name.find('.')
    return name[:dot] if dot > 0 else None


def a64_refused(w):
    """Why an arm64 probe on the instruction word W must be refused
    (kprobes.rst, "Architecture support", arm64's refused classes), from
    the A64 encodings, or None.  Only what can follow a function's ftrace
    call is asked about, so the classes that depend on neighbours (what
    lies between a load-exclusive and its store-exclusive) are left out."""
    if (w & 0xfff8f01f) == 0xd500401f:              # MSR (immediate)
        op1, op2 = (w >> 16) & 7, (w >> 5) & 7
        if not (op1 == 3 and op2 in (6, 7)):         # but DAIFSet, DAIFClr
            return 'MSR to a PSTATE field other than DAIF'
    if (w & 0x3f800000) == 0x08000000:
        return 'exclusive load or store'
    if (w & 0xff000000) == 0xd4000000:
        return 'exception-generating instruction'
    if (w & 0xfe000000) == 0xd6000000 and \
            (w & 0xfffffc1f) not in (0xd61f0000, 0xd63f0000, 0xd65f0000):
        return 'authenticated branch, ERET or DRPS'
    if (w & 0xffff0000) == 0:
        return 'UDF'
    return None


def verdicts(key, black, p, busy, bugs, where, refused=None):
    """The lines of one function: KEY, the reason it is on the blacklist
    (None if not), P where its probe past the ftrace call goes, as BUSY
    and BUGS index it, WHERE() that probe's "NAME+OFF: INSN" for the
    reason, and REFUSED why the instruction there is one the backend
    refuses (None if not)."""
    if black:
        return ['%s entry EINVAL %s' % (key, black),
                '%s offset EINVAL %s' % (key, black)]
    if p in busy:
        why = 'EBUSY %s' % busy[p]
    elif p in bugs:
        why = 'EINVAL BUG trap'
    elif refused:
        why = 'EINVAL %s' % refused
    else:
        return []
    return ['%s offset %s at %s' % (key, why, where())]


def objdump_insn(cross, path, addr, section=None):
    """objdump's text of the instruction at ADDR, for the reason."""
    cmd = [cross + 'objdump', '-d', '--no-show-raw-insn',
           '--start-address=%#x' % addr, '--stop-address=%#x' % (addr + 16)]
    if section:
        cmd += ['-j', section]
    out = subprocess.run(cmd + [path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        head, tab, insn = line.partition(':\t')
        if tab and head.strip().lstrip('0') == ('%x' % addr).lstrip('0'):
            return ' '.join(insn.split())
    return '?'


def vmlinux_rules(path, opts, cross, arch):
    elf = Elf(path)
    long_size = 8 if elf.is64 else 4
    lfmt = elf.end + ('Q' if elf.is64 else 'I')
    syms, funcs, names = {}, [], {}
    nm = subprocess.run([cross + 'nm', '-S', '--defined-only', path],
                        check=True, capture_output=True, text=True).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) >= 3:
            syms[f[-1]] = int(f[0], 16)
        if len(f) == 4 and f[2] in 'tTwW':
            funcs.append((int(f[0], 16), int(f[1], 16), f[3]))
    fn = Funcs(funcs)
    for i, f in enumerate(fn.funcs):
        names.setdefault(f[2], []).append(i)

    def table(start, stop, size, rel=True):
        a, b = syms.get(start), syms.get(stop)
        if a is None or b is None or b <= a:
            return []
        if rel:
            return elf.rel(a, b, size)
        data = elf.read(a, b - a)
        return [struct.unpack(lfmt, data[i:i + long_size])[0]
                for i in range(0, len(data) - len(data) % size, size)]

    # The blacklist, by function.
    black = {}
    for a in table('__start_kprobe_blacklist', '__stop_kprobe_blacklist',
                   long_size, rel=False):
        i = fn.index(a)
        if i is not None:
            black.setdefault(i, 'NOKPROBE_SYMBOL(%s)' % fn.funcs[i][2])
    areas = [('__%s_start' % s, '__%s_end' % s, '.' + s.replace('_', '.'))
             for s in BLACK_SECTIONS]
    if arch == 'x86_64':
        areas += [('ftrace_caller', 'ftrace_caller_end', 'ftrace_caller'),
                  ('ftrace_regs_caller', 'ftrace_regs_caller_end',
                   'ftrace_regs_caller')]
    if arch == 'aarch64':
        areas += [('__%s_start' % s, '__%s_end' % s, '.' + s.replace('_', '.'))
                  for s in ARM64_AREAS]
    for start, end, what in areas:
        if start in syms and end in syms:
            for i in fn.within(syms[start], syms[end]):
                black.setdefault(i, 'in %s' % what)
    if arch == 'aarch64' and opts.get('ARM64_SW_TTBR0_PAN') == 'y':
        for s in ARM64_SWPAN:
            for i in names.get(s, []):
                black.setdefault(i, 'arm64 software PAN helper')
    for i, f in enumerate(fn.funcs):
        base = clone_base(f[2])
        if base and i not in black:
            for j in names.get(base, []):
                if j in black:
                    black[i] = "a copy of %s, which is on the blacklist (%s)" % \
                        (base, black[j])
                    break

    # Text the kernel rewrites or traps on.
    busy = {}
    if opts.get('JUMP_LABEL') == 'y':
        for a in table('__start___jump_table', '__stop___jump_table',
                       8 + long_size):
            busy[a] = 'jump label'
    if opts.get('HAVE_STATIC_CALL_INLINE') == 'y':
        for a in table('__start_static_call_sites', '__stop_static_call_sites', 8):
            busy[a] = 'static call site'
    bugs = set()
    if opts.get('GENERIC_BUG') == 'y':
        size = 12 if opts.get('DEBUG_BUGVERBOSE') == 'y' else 8
        rel = opts.get('GENERIC_BUG_RELATIVE_POINTERS') == 'y'
        bugs = set(table('__start___bug_table', '__stop___bug_table', size, rel))

    # The ftrace call sites.
    sites = []
    for e in table('__start_mcount_loc', '__stop_mcount_loc', long_size,
                   rel=False):
        if arch == 'aarch64':
            i = fn.at_or_after(e)
            if i is not None:
                sites.append(fn.funcs[i][0] + 4)
        else:
            sites.append(e)

    out = ['_text %x' % syms['_text']]
    step = 4 if arch == 'aarch64' else 5
    for s in sorted(set(sites)):
        i = fn.index(s)
        if i is None:
            continue
        start, _, name = fn.funcs[i]
        p = s + step
        refused = None
        if arch == 'aarch64':
            refused = a64_refused(struct.unpack('<I', elf.read(p, 4))[0])
        out += verdicts('@%x' % s, black.get(i), p, busy, bugs,
                        lambda: '%s+%#x: %s' % (name, p - start,
                                               objdump_insn(cross, path, p)),
                        refused)
    return out


class Rel:
    """A module's sections, symbols and relocations."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b'\x7fELF':
            sys.exit('%s: not an ELF file' % path)
        self.is64 = d[4] == 2
        e = '<' if d[5] == 1 else '>'
        self.end = e
        if self.is64:
            h = struct.unpack_from(e + 'HHIQQQIHHHHHH', d, 16)
        else:
            h = struct.unpack_from(e + 'HHIIIIIHHHHHH', d, 16)
        shoff, shentsize, shnum, shstrndx = h[5], h[10], h[11], h[12]
        self.secs = []
        for i in range(shnum):
            o = shoff + i * shentsize
            if self.is64:
                s = struct.unpack_from(e + 'IIQQQQIIQQ', d, o)
            else:
                s = struct.unpack_from(e + 'IIIIIIIIII', d, o)
            # name, type, offset, size, link, info, entsize
            self.secs.append([s[0], s[1], s[4], s[5], s[6], s[7], s[9]])
        strtab = self.secs[shstrndx]
        for s in self.secs:
            s[0] = self.cstr(strtab[2] + s[0])
        self.byname = {s[0]: i for i, s in enumerate(self.secs)}
        self.syms = []
        for s in self.secs:
            if s[1] == 2:                           # SHT_SYMTAB
                names = self.secs[s[4]][2]
                n = s[3] // s[6]
                for k in range(n):
                    o = s[2] + k * s[6]
                    if self.is64:
                        nm, info, _, shndx, val, size = \
                            struct.unpack_from(e + 'IBBHQQ', d, o)
                    else:
                        nm, val, size, info, _, shndx = \
                            struct.unpack_from(e + 'IIIBBH', d, o)
                    self.syms.append((self.cstr(names + nm), info & 15,
                                      shndx, val, size))

    def cstr(self, off):
        return self.data[off:self.data.index(b'\0', off)].decode()

    def targets(self, name, entsize=None):
        """Where the relocations of section NAME point, as (section index,
        offset), for the fields at multiples of ENTSIZE (all: None)."""
        i = self.byname.get(name)
        if i is None:
            return []
        out = []
        for s in self.secs:
            if s[1] not in (4, 9) or s[5] != i:     # SHT_RELA, SHT_REL
                continue
            rela = s[1] == 4
            n = s[3] // s[6]
            for k in range(n):
                o = s[2] + k * s[6]
                if self.is64:
                    off, info = struct.unpack_from(self.end + 'QQ', self.data, o)
                    sym = info >> 32
                    add = struct.unpack_from(self.end + 'q', self.data, o + 16)[0] \
                        if rela else None
                else:
                    off, info = struct.unpack_from(self.end + 'II', self.data, o)
                    sym = info >> 8
                    add = struct.unpack_from(self.end + 'i', self.data, o + 8)[0] \
                        if rela else None
                if entsize and off % entsize:
                    continue
                if add is None:
                    add = struct.unpack_from(self.end + 'i', self.data,
                                             self.secs[i][2] + off)[0]
                _, _, shndx, val, _ = self.syms[sym]
                out.append((shndx, val + add))
        return out

    def funcs(self):
        """Functions by section: {index: Funcs}."""
        by = {}
        for name, typ, shndx, val, size in self.syms:
            if typ == 2 and 0 < shndx < len(self.secs):   # STT_FUNC
                by.setdefault(shndx, []).append((val, size, name))
        return {k: Funcs(v) for k, v in by.items()}

    def modname(self, path):
        i = self.byname.get('.modinfo')
        if i is not None:
            s = self.secs[i]
            for kv in self.data[s[2]:s[2] + s[3]].split(b'\0'):
                if kv.startswith(b'name='):
                    return kv[5:].decode()
        return os.path.basename(path).split('.')[0].replace('-', '_')


def module_rules(path, opts, cross, arch):
    m = Rel(path)
    mod = m.modname(path)
    by = m.funcs()
    long_size = 8 if m.is64 else 4

    def owner(sec, off):
        f = by.get(sec)
        i = f.index(off) if f else None
        return (sec, i) if i is not None else None

    black = {}
    for sec, off in m.targets('_kprobe_blacklist'):
        o = owner(sec, off)
        if o:
            black.setdefault(o, 'NOKPROBE_SYMBOL(%s)' % by[sec].funcs[o[1]][2])
    for name in MODULE_BLACK_SECTIONS:
        sec = m.byname.get(name)
        if sec in by:
            for i in range(len(by[sec].funcs)):
                black.setdefault((sec, i), 'in %s' % name)
    named = {}
    for sec, f in by.items():
        for i, fun in enumerate(f.funcs):
            named.setdefault(fun[2], []).append((sec, i))
    for sec, f in by.items():
        for i, fun in enumerate(f.funcs):
            base = clone_base(fun[2])
            if base and (sec, i) not in black:
                for o in named.get(base, []):
                    if o in black:
                        black[(sec, i)] = "a copy of %s, which is on the " \
                            "blacklist (%s)" % (base, black[o])
                        break

    busy = {}
    if opts.get('JUMP_LABEL') == 'y':
        for t in m.targets('__jump_table', 8 + long_size):
            busy[t] = 'jump label'
    if opts.get('HAVE_STATIC_CALL_INLINE') == 'y':
        for t in m.targets('.static_call_sites', 8):
            busy[t] = 'static call site'
    bugs = set()
    if opts.get('GENERIC_BUG') == 'y':
        bugs = set(m.targets('__bug_table',
                             12 if opts.get('DEBUG_BUGVERBOSE') == 'y' else 8))

    sites = []
    if arch == 'aarch64':
        for sec, off in m.targets('__patchable_function_entries'):
            f = by.get(sec)
            i = f.at_or_after(off) if f else None
            if i is not None:
                sites.append((sec, f.funcs[i][0] + 4))
    else:
        sites = m.targets('__mcount_loc')

    out = []
    step = 4 if arch == 'aarch64' else 5
    for sec, s in sorted(set(sites)):
        o = owner(sec, s)
        if not o:
            continue
        fun = by[sec].funcs[o[1]]
        p = s + step
        refused = None
        if arch == 'aarch64':
            at = m.secs[sec][2] + p
            refused = a64_refused(struct.unpack('<I', m.data[at:at + 4])[0])
        out += verdicts('%s:%s' % (mod, fun[2]), black.get(o), (sec, p),
                        busy, bugs,
                        lambda: '%s+%#x: %s' % (fun[2], p - fun[0],
                                               objdump_insn(cross, path, p,
                                                            m.secs[sec][0])),
                        refused)
    return out


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    vmlinux, cfg, out, cross = sys.argv[1:5]
    opts = config(cfg)
    arch = {62: 'x86_64', 3: 'i386', 183: 'aarch64'}.get(Elf(vmlinux).machine)
    if arch is None:
        sys.exit('forbidden.py: no rules for this architecture')
    lines = vmlinux_rules(vmlinux, opts, cross, arch)
    nv = len(lines) - 1
    for ko in sys.argv[5:]:
        lines += module_rules(ko, opts, cross, arch)
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    kinds = {}
    for line in lines[1:]:
        k = line.split()[1] + ' ' + line.split()[2]
        kinds[k] = kinds.get(k, 0) + 1
    print('forbidden: %d probes to be refused (%d in vmlinux, %d in %d '
          'modules): %s' % (len(lines) - 1, nv, len(lines) - 1 - nv,
                            len(sys.argv) - 5,
                            ', '.join('%d %s' % (v, k) for k, v in sorted(kinds.items()))))


if __name__ == '__main__':
    main()
