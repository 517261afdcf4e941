#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time of each testbench directory in a pytest JUnit report (`make tb-test` writes
build/logs/tb-test.xml): tests, total seconds, the slowest test. Markdown on stdout.

    python3 tools/tb_times.py build/logs/tb-test.xml
"""

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def main(path):
    dirs = defaultdict(list)
    for case in ET.parse(path).getroot().iter("testcase"):
        # classname is the module's dotted path: tb.<directory>.test_<module>
        parts = case.get("classname", "").split(".")
        directory = parts[1] if len(parts) > 2 and parts[0] == "tb" else parts[0]
        # `--dist loadgroup` ends a grouped test's name with "@<group>".
        name = case.get("name").rsplit("@", 1)[0]
        dirs[directory].append((float(case.get("time", 0)), name))
    print("| directory | tests | total s | slowest test (s) |")
    print("| --- | ---: | ---: | --- |")
    for directory, cases in sorted(dirs.items(), key=lambda kv: -sum(t for t, _ in kv[1])):
        slow_t, slow_name = max(cases)
        print(f"| `{directory}/` | {len(cases)} | {sum(t for t, _ in cases):.0f} | "
              f"`{slow_name}` ({slow_t:.1f}) |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
