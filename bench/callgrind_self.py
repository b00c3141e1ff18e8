#!/usr/bin/env python3
"""Self cost per function of a callgrind dump, per request: `callgrind_self.py DUMP N [TOP]`.

callgrind_annotate attributes every self cost of bench/instr_per_request.py's dumps to
`clone` (the counters are zeroed mid-run), so this sums each function's own cost lines
(those not following a `calls=` line) and divides them by N, the dump's request count.
"""
import sys, re, collections
path, n = sys.argv[1], float(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
names = {}
selfc = collections.Counter()
fn = None
after_calls = False
def resolve(spec):
    m = re.match(r'\((\d+)\)(?:\s+(.*))?', spec)
    if m:
        if m.group(2): names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))
    return spec
for line in open(path, errors='replace'):
    line = line.rstrip('\n')
    if line.startswith('fn='):
        fn = resolve(line[3:]); after_calls = False; continue
    if line.startswith(('cfn=', 'cfi=', 'cfl=', 'cob=')):
        if line.startswith('cfn='): resolve(line[4:])
        continue
    if line.startswith('calls='):
        after_calls = True; continue
    if line and (line[0].isdigit() or line[0] in '+-*'):
        parts = line.split()
        if len(parts) >= 2 and fn is not None:
            if after_calls:
                after_calls = False
            else:
                selfc[fn] += int(parts[1])
        continue
tot = sum(selfc.values())
print("total %.1f" % (tot / n))
for f, c in selfc.most_common(top):
    print("%8.1f  %s" % (c / n, f[:150]))
