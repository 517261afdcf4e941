# SPDX-License-Identifier: Apache-2.0
"""A small ClassBench-like rule generator for firewall-style 5-tuple rule sets.

ClassBench (Taylor and Turner, 2005) draws rules from seed files of real filter sets; those
files are not in this repository. This generator draws from the same kinds of fields, with
fixed distributions close to the published fw1 statistics (the port-class mix of its
Table 3 and a prefix-length mix dominated by /32, /24 and wildcards):

- addresses: a prefix of a few base networks (so rules overlap), length drawn from
  {0: 20%, 8: 5%, 16: 10%, 24: 25%, 32: 40%};
- protocol: TCP 60%, UDP 25%, wildcard 10%, ICMP 5% (exact value, or wildcard);
- each port, by class: wildcard 0-65535 (45%), exact (25%), low ports 0-1023 (8%),
  high ports 1024-65535 (10%), an arbitrary range (7%), a range overlapping one already
  drawn (5%).

A rule is (src, src_len, dst, dst_len, proto or None, (sport lo, hi), (dport lo, hi)).
"""

ADDR_LENGTHS = [(0, 20), (8, 5), (16, 10), (24, 25), (32, 40)]
PROTOCOLS = [(6, 60), (17, 25), (None, 10), (1, 5)]
PORT_CLASSES = [("wildcard", 45), ("exact", 25), ("low", 8), ("high", 10), ("arbitrary", 7),
                ("overlap", 5)]
WELL_KNOWN = [22, 25, 53, 80, 110, 123, 143, 443, 993, 3306, 5060, 8080]


def _pick(rng, weighted):
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


class RuleGenerator:
    def __init__(self, rng, networks=4):
        self.rng = rng
        self.bases = [rng.getrandbits(32) for _ in range(networks)]
        self.ranges = []  # arbitrary ranges drawn so far, for overlapping ones

    def prefix(self):
        n = _pick(self.rng, ADDR_LENGTHS)
        base = self.rng.choice(self.bases) ^ self.rng.getrandbits(8)
        return (base >> (32 - n) << (32 - n) if n else 0), n

    def port(self, cls=None):
        rng = self.rng
        cls = cls or _pick(rng, PORT_CLASSES)
        if cls == "wildcard":
            return (0, 65535)
        if cls == "exact":
            p = rng.choice(WELL_KNOWN) if rng.random() < 0.7 else rng.randrange(65536)
            return (p, p)
        if cls == "low":
            return (0, 1023)
        if cls == "high":
            return (1024, 65535)
        if cls == "overlap" and self.ranges:
            lo, hi = rng.choice(self.ranges)
            a = rng.randint(lo, hi)
            r = (a, min(65535, a + rng.randint(0, 2 * (hi - lo) + 1)))
        else:
            lo = rng.randrange(65536)
            r = (lo, min(65535, lo + rng.choice([1, 15, 255, 1000, 20000])))
        self.ranges.append(r)
        return r

    def rule(self):
        src, sl = self.prefix()
        dst, dl = self.prefix()
        return (src, sl, dst, dl, _pick(self.rng, PROTOCOLS), self.port(), self.port())
