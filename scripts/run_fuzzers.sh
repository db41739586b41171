#!/usr/bin/env bash
# run_fuzzers.sh BUILD_DIR SECONDS [JOBS]: runs every fuzz_* binary in BUILD_DIR/fuzz for SECONDS from its seed corpus
# (fuzz/corpus/<name>/, copied to a scratch dir so the committed corpus is never modified), JOBS of them at a time
# (default 1). A libFuzzer run is one single-threaded process, so on N cores N of them side by side each still fuzz
# for their full SECONDS: the smoke run covers the same, in 1/N of the wall time. Reports print in name order.
set -euo pipefail
build=$1
secs=${2:-15}
jobs=${3:-1}
shopt -s nullglob
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# fuzz_one BIN REPORT: one fuzzer; its report in REPORT, its status (0, or 1 on a finding) in REPORT.rc.
fuzz_one() {
  local bin=$1 report=$2 name work rc=0
  name=$(basename "$bin")
  work=$(mktemp -d)
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/"
  echo "== $name (${secs}s)" >"$report"
  if ! "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 "$work" >"$work.log" 2>&1
  then
    { tail -40 "$work.log"; echo "FAILED: $name"; } >>"$report"
    rc=1
  else
    grep -E "^(#[0-9]+ +DONE|Done)" "$work.log" | tail -1 >>"$report" || true
  fi
  rm -rf "$work" "$work.log"
  echo "$rc" >"$report.rc"
}

n=0
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  n=$((n + 1))
  fuzz_one "$bin" "$out/$(printf %03d $n)" &
done
wait
status=0
for report in "$out"/[0-9][0-9][0-9]; do
  cat "$report"
  [ "$(cat "$report.rc" 2>/dev/null)" = 0 ] || status=1  # a missing .rc: that run died before writing it
done
exit $status
