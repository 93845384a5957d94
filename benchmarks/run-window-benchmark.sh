#!/usr/bin/env bash
# Runs the dedup-window side-by-side (docs/benchmarks.md) and refreshes its figures:
#   1. JMH: ns per event of each structure over the seed workload (2 forks x 3 measured 10 M-event runs each),
#   2. WindowFootprint: heap bytes per held id at the end of the run (JOL; heap delta as a cross-check),
#   3. WindowReport: the Markdown table with ratios and targets, and the plot docs/img/window-benchmark.png,
#   4. WindowInterleaved: our window (single checks and checkBatch) and Caffeine in one JVM, round after round, with
#      the memory floor (independent and dependent random loads on a table of the window's size) measured in the same
#      rounds: the ratios to the floor and their targets; the machine's load (uptime) before and after.
# Takes about 10 minutes on 2 cores (up to 30 when the machine is heavily loaded).
# Usage: benchmarks/run-window-benchmark.sh [results-dir]   (default docs/results).
# Builds benchmarks/target/benchmarks.jar first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-docs/results}"
jar=benchmarks/target/benchmarks.jar
flags_file=benchmarks/target/classes/io/github/vertxdedup/benchmarks/window/jvm.flags
if [[ ! -f "$jar" || ! -f "$flags_file" ]]; then
  mvn -B -ntp -q -pl benchmarks -am package -DskipTests
fi
# The project's JVM flags (parent pom, dedup.jvm.flags), for every JVM started here; JMH's forks inherit them.
read -r -a flags < "$flags_file"
mkdir -p "$out" docs/img

date -u +"run started %Y-%m-%dT%H:%M:%SZ on $(nproc) cores"
java "${flags[@]}" -jar "$jar" WindowBenchmark -rf json -rff "$out/window-benchmark.json" \
  | tee "$out/window-benchmark.log"
# allowAttachSelf lets JOL attach its agent instead of warning; the sizes are the same either way.
java "${flags[@]}" -Xmx8g -XX:+UseParallelGC -Djdk.attach.allowAttachSelf=true -cp "$jar" \
  io.github.vertxdedup.benchmarks.window.WindowFootprint "$out/window-footprint.json"
java "${flags[@]}" -cp "$jar" io.github.vertxdedup.benchmarks.window.WindowReport \
  "$out/window-benchmark.json" "$out/window-footprint.json" docs/img/window-benchmark.png \
  | tee "$out/window-report.md"
{
  echo "uptime before: $(uptime)"
  java "${flags[@]}" -Xmx8g -XX:+UseParallelGC -cp "$jar" io.github.vertxdedup.benchmarks.window.WindowInterleaved 6
  echo "uptime after: $(uptime)"
} | tee "$out/window-interleaved.txt"
