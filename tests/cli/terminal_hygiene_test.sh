#!/bin/sh
# Issue 53, items 5-6, through the real executable (torch-free commands, so every build runs it): what reaches a
# terminal from outside -- a BRIDGETUNE_* value, a value CLI11 quotes, a 100,000-item list for a one-value flag --
# comes back as short lines with control bytes escaped. Usage: terminal_hygiene_test.sh BRIDGETUNE
set -u
exe=$1
esc=$(printf '\033')
bel=$(printf '\007')
fails=0
check() {  # check NAME OUTPUT EXPECTED-SUBSTRING
  case $2 in *"$esc"* | *"$bel"*) echo "FAIL $1: raw ESC/BEL in: $2"; fails=$((fails + 1)); return ;; esac
  case $2 in *"$3"*) ;; *) echo "FAIL $1: '$3' not in: $2"; fails=$((fails + 1)); return ;; esac
  [ "${#2}" -lt 2100 ] || { echo "FAIL $1: ${#2} bytes"; fails=$((fails + 1)); return; }
  echo "ok $1"
}

# An environment switch's bad value is quoted in its warning: escaped.
out=$(BRIDGETUNE_CPU_GEMM="x${esc}]0;pwned${bel}${esc}[2J" "$exe" --version 2>&1)
check env_warning "$out" 'BRIDGETUNE_CPU_GEMM=x\x1b]0;pwned\x07\x1b[2J is not one of'

# A value CLI11 cannot convert is quoted in its error: one escaped line.
out=$("$exe" synth --out /nonexistent/x --n "7${esc}]0;pwned${bel}" 2>&1)
code=$?
[ "$code" -ne 0 ] || { echo "FAIL conversion: exit 0"; fails=$((fails + 1)); }
check conversion "$out" 'error: '
check conversion_escaped "$out" '\x1b]0;pwned\x07'

# 100,000 values for a one-value flag: one short line (was the whole list, 200 KB).
out=$("$exe" synth --out /nonexistent/x --n $(seq 100000) 2>&1)
code=$?
[ "$code" -ne 0 ] || { echo "FAIL list: exit 0"; fails=$((fails + 1)); }
check list "$out" 'error: --n takes one value; the command line gives 100000 after it'

[ "$fails" -eq 0 ]
