#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file the repository tracks names its licence in an SPDX line near its top
# (docs, data files and captures excepted). Run by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=$(git ls-files -- ':!*.md' ':!*.json' ':!*.pcap' ':!*.txt' ':!*.gz' ':!*.xz' ':!LICENSE' ':!.gitignore' |
  while read -r f; do head -n 5 "$f" | grep -q "SPDX-License-Identifier:" || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "check_spdx: no SPDX-License-Identifier line in:"; echo "$missing"; exit 1
fi
echo "check_spdx: ok"
