#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Maven in rtl/, quiet and in batch mode, with every version rtl/pom.xml takes from
# versions.env passed as a -D property: `tools/mvn.sh <goals and options>` from anywhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
set -a; . "$root/versions.env"; set +a
cd "$root/rtl"
exec "${MVN:-mvn}" -B -q \
  -Dspinalhdl.version="$SPINALHDL_VERSION" \
  -Dscala.version="$SCALA_VERSION" \
  -Dscala.binary.version="$SCALA_BINARY_VERSION" \
  -Dscala-maven-plugin.version="$SCALA_MAVEN_PLUGIN_VERSION" \
  -Dexec-maven-plugin.version="$EXEC_MAVEN_PLUGIN_VERSION" \
  -Dujson.version="$UJSON_VERSION" \
  -Dscalatest.version="$SCALATEST_VERSION" \
  -Dscalatest-maven-plugin.version="$SCALATEST_MAVEN_PLUGIN_VERSION" \
  -Dsurefire.version="$SUREFIRE_VERSION" \
  "$@"
