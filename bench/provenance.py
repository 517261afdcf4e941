# SPDX-License-Identifier: Apache-2.0
"""Where a bench result comes from: the commit the report names, and the report's ending."""

import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git_commit():
    """The short hash of HEAD, marked when rtl/ has changes not committed; "unknown"
    outside a git checkout."""
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "rtl"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (rtl/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def invocation():
    """The command line that runs this benchmark, as its report quotes it: `python`, the
    script's path from the repository root, and its arguments quoted for a shell."""
    script = Path(sys.argv[0]).resolve()
    where = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return " ".join(["python", str(where)] + [shlex.quote(a) for a in sys.argv[1:]])


def yosys_version():
    """"Yosys 0.23+..." of the yosys on PATH, or "Yosys" when it cannot say."""
    try:
        return subprocess.run(["yosys", "-V"], capture_output=True, text=True,
                              check=True).stdout.split("(")[0].strip()
    except (OSError, subprocess.CalledProcessError):
        return "Yosys"


def read_resources(path):
    """A resources.txt of tools/synth_ecp5.sh as {cell: count}; {} when it is missing."""
    p = Path(path)
    if not p.exists():
        return {}
    return {k: int(v) for k, v in (ln.split() for ln in p.read_text().splitlines() if ln.strip())}


def write_report(md, out, command, problems):
    """Ends report `md` with its failures and the command and commit that produced it,
    writes it to `out`, prints it, and exits non-zero if there were failures."""
    if problems:
        md += "**Failures:**\n\n" + "\n".join(f"- {p}" for p in problems) + "\n\n"
    md += (f"Produced by `{command}` on commit {git_commit()}, "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n")
    Path(out).write_text(md)
    print(md)
    if problems:
        sys.exit("bench: " + "; ".join(problems))
