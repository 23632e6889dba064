#!/usr/bin/env python3
"""FUNC+OFF probe sites for the suite's probe_random_offsets, each with the
answer an independent decoder gives: binutils' objdump on vmlinux.

    harness/offsets.py VMLINUX OUT [CROSS]

Draws functions and offsets from vmlinux's symbol table (nm -S) with a
fixed seed and writes one line per pick to OUT:

    NAME OFF b    objdump decodes an instruction starting at NAME+OFF
    NAME OFF i    NAME+OFF is inside an instruction
    NAME OFF x    inside a return or retpoline site, which the kernel
                  rewrites at boot into instructions of other lengths

Only functions whose name is unique and that hold no text the kernel
rewrites in other lengths or reserves (alternatives, jump labels, static
calls: the tables below) are drawn; in the rest the
instructions seen in vmlinux are the ones that run.  On arm64 every
instruction is four bytes long, and objdump says so too.
"""
import bisect
import random
import struct
import subprocess
import sys

SEED = 1103
PICKS = 1500        # more than the suite keeps: it drops what it cannot probe
NEAR = 64           # every other pick within this many bytes of the entry


class Elf:
    def __init__(self, path):
        self.f = open(path, 'rb')
        ident = self.f.read(16)
        if ident[:4] != b'\x7fELF':
            sys.exit('%s: not an ELF file' % path)
        self.is64 = ident[4] == 2
        self.end = '<' if ident[5] == 1 else '>'
        if self.is64:
            hdr = struct.unpack(self.end + 'HHIQQQIHHHHHH', self.f.read(48))
        else:
            hdr = struct.unpack(self.end + 'HHIIIIIHHHHHH', self.f.read(36))
        self.machine, shoff, shentsize, shnum, shstrndx = \
            hdr[1], hdr[5], hdr[10], hdr[11], hdr[12]
        secs = []
        for i in range(shnum):
            self.f.seek(shoff + i * shentsize)
            if self.is64:
                s = struct.unpack(self.end + 'IIQQQQIIQQ', self.f.read(64))
            else:
                s = struct.unpack(self.end + 'IIIIIIIIII', self.f.read(40))
            secs.append((s[0], s[3], s[4], s[5]))   # name, addr, offset, size
        self.f.seek(secs[shstrndx][2])
        names = self.f.read(secs[shstrndx][3])
        self.sec = {}
        for name, addr, off, size in secs:
            n = names[name:names.index(b'\0', name)].decode()
            self.sec[n] = (addr, off, size)

    def read(self, vma, size):
        """SIZE bytes of the loaded image at address VMA."""
        for addr, off, total in self.sec.values():
            if addr <= vma and vma + size <= addr + total:
                self.f.seek(off + vma - addr)
                return self.f.read(size)
        sys.exit('no section holds %#x..%#x' % (vma, vma + size))

    def rel(self, start, stop, size):
        """The address each SIZE-byte entry of the table from START to
        STOP points to with its first field, an s32 relative to itself."""
        if start is None or stop is None or stop <= start:
            return []
        data = self.read(start, stop - start)
        return [start + i + struct.unpack(self.end + 'i', data[i:i + 4])[0]
                for i in range(0, len(data) - len(data) % size, size)]


class Funcs:
    """Functions by address: (start, size, name), sorted."""

    def __init__(self, funcs):
        self.funcs = sorted(funcs)
        self.starts = [f[0] for f in self.funcs]

    def index(self, addr):
        """The function that holds ADDR, else None."""
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0 and addr < self.funcs[i][0] + max(self.funcs[i][1], 1):
            return i
        return None

    def at_or_after(self, addr):
        """The function that holds ADDR, or else the first one past it."""
        i = self.index(addr)
        if i is None:
            i = bisect.bisect_left(self.starts, addr)
        return i if i < len(self.funcs) else None

    def within(self, start, end):
        """Every function that starts in [START, END)."""
        return [i for i, f in enumerate(self.funcs) if start <= f[0] < end]


def main():
    vmlinux, out = sys.argv[1], sys.argv[2]
    cross = sys.argv[3] if len(sys.argv) > 3 else ''
    elf = Elf(vmlinux)
    x86 = elf.machine in (3, 62)
    long_size = 8 if elf.is64 else 4

    funcs, seen, syms = [], {}, {}
    nm = subprocess.run([cross + 'nm', '-S', '--defined-only', vmlinux],
                        check=True, capture_output=True, text=True).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
        if len(f) != 4:
            continue
        syms[f[3]] = int(f[0], 16)
        seen[f[3]] = seen.get(f[3], 0) + 1
        if f[2] in 'tT' and int(f[1], 16) >= 2:
            funcs.append((int(f[0], 16), int(f[1], 16), f[3]))
    funcs = sorted(fn for fn in funcs
                   if seen[fn[2]] == 1 and not fn[2].startswith(('__pfx_', '__cfi_')))
    owner = Funcs(funcs).index

    def table(name, size, start='__start_%s', stop='__stop_%s'):
        return elf.rel(syms.get(start % name), syms.get(stop % name), size)

    # Functions with text the kernel rewrites or reserves: not drawn.
    barred = set()
    sites = table('__jump_table', 8 + long_size) + table('static_call_sites', 8)
    if x86:
        sites += table('__alt_instructions', 14, '%s', '%s_end')
    for a in sites:
        i = owner(a)
        if i is not None:
            barred.add(i)
    # Return and retpoline sites: rewritten in place, the rest stays.
    rewritten = []
    if x86:
        rewritten = table('__return_sites', 4, '%s', '%s_end') + \
            table('__retpoline_sites', 4, '%s', '%s_end')

    rng = random.Random(SEED)
    ok = [i for i in range(len(funcs)) if i not in barred]
    picks, chosen = [], set()
    while len(picks) < PICKS and len(chosen) < len(ok):
        i = ok[rng.randrange(len(ok))]
        size = funcs[i][1]
        if len(picks) % 2 == 0:
            size = min(size, NEAR)
        off = 1 + rng.randrange(size - 1)
        if (i, off) not in chosen:
            chosen.add((i, off))
            picks.append((i, off))

    # objdump's instruction starts in the functions drawn.
    want = sorted({i for i, _ in picks})
    starts_of = {i: [] for i in want}
    ranges = sorted((funcs[i][0], funcs[i][0] + funcs[i][1], i) for i in want)
    bad = set()
    proc = subprocess.Popen([cross + 'objdump', '-d', '--no-show-raw-insn',
                             '-j', '.text', vmlinux],
                            stdout=subprocess.PIPE, text=True, bufsize=1 << 20)
    r = 0
    for line in proc.stdout:
        head, tab, _ = line.partition(':\t')
        if not tab:
            continue
        try:
            a = int(head, 16)
        except ValueError:
            continue
        while r < len(ranges) and ranges[r][1] <= a:
            r += 1
        if r == len(ranges):
            break
        if a >= ranges[r][0]:
            starts_of[ranges[r][2]].append(a)
            if '(bad)' in line:
                bad.add(ranges[r][2])
    proc.stdout.close()
    proc.wait()

    xr = {}
    for a in rewritten:
        i = owner(a)
        if i is not None and i in starts_of:
            xr.setdefault(i, []).append(a)

    n = {'b': 0, 'i': 0, 'x': 0}
    with open(out, 'w') as f:
        for i, off in picks:
            if i in bad or not starts_of[i]:
                continue
            start = funcs[i][0]
            insns = starts_of[i]
            a = start + off
            kind = 'b' if a in insns else 'i'
            for s in xr.get(i, []):
                nxt = min([b for b in insns if b > s] or [start + funcs[i][1]])
                if s < a < nxt:
                    kind = 'x'
            n[kind] += 1
            f.write('%s %d %s\n' % (funcs[i][2], off, kind))
    print('offsets: %d picks in %d functions (%d barred): %d boundaries, '
          '%d inside, %d in rewritten sites' %
          (sum(n.values()), len(want), len(barred), n['b'], n['i'], n['x']))


if __name__ == '__main__':
    main()
