#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Substitute ${VAR} in a template with the KEY=VALUE pins of versions.env.

    tools/subst_versions.py versions.env tools/requirements.txt.in > requirements.txt

Fails on a ${VAR} that versions.env does not define, so a typo never reaches pip.
"""
import re
import sys


def read_env(path):
    pins = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
                sys.exit(f"{path}:{n}: not KEY=VALUE: {line}")
            pins[key.strip()] = value.strip().strip("'\"")
    return pins


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} VERSIONS_ENV TEMPLATE")
    pins = read_env(sys.argv[1])
    template = open(sys.argv[2]).read()
    missing = []

    def repl(m):
        key = m.group(1) or m.group(2)
        if key not in pins:
            missing.append(key)
            return m.group(0)
        return pins[key]

    out = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", repl, template)
    if missing:
        sys.exit(f"{sys.argv[2]}: not in {sys.argv[1]}: {', '.join(sorted(set(missing)))}")
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
