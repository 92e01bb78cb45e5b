#!/bin/sh
# perf_frontend.sh — the front end is fast: a generated file of 10,000
# statements must parse (--emit=ast) within PERF_AST_MS and parse+check+lower
# (--emit=ir) within PERF_IR_MS.  The bounds are generous (sanitizer builds
# and a busy CI machine pass); the real numbers are printed as diagnostics.
#
# --emit=ir takes 60-90 ms of CPU on a 2-core machine, idle or busy (issue
# 45; busy, its wall time was 170-250 ms: hence CPU time, below).  The
# bound of 300 ms is some 4x that, so that a busy CI machine passes, yet a
# lookup that grows with the program fails: one linear search of the names
# assigned before, at each assignment, took it to 330-350 ms.  Drifts of
# 10 or 20% pass; the printed number shows them.  Each is the fastest of
# three runs: in .ci/run, beside the suite's nvcc builds, one run of
# --emit=ir took 400 ms of CPU where it takes 60-140 (2026-12-01; its
# arena asks for huge pages, and under memory pressure a fault may
# compact memory first), while a compiler whose cost grew fails all three.
: "${TECC:?TECC must name the tecc binary}"
ast_bound=${PERF_AST_MS:-500}
ir_bound=${PERF_IR_MS:-300}
# An AddressSanitizer build (configure --enable-sanitizers) runs 2-3x
# slower and, on a busy 2-core CI machine, varies by half as much again
# (the same --emit=ast took 330 and 530 ms there): it only guards against
# gross slowdowns, so its bounds are 3x (--emit=ir took 190-240 ms of CPU
# in .ci/run's sanitizer build, -O1 with leak checks: 900 ms is 4x).
if grep -q __asan_init "$TECC" 2>/dev/null; then
  ast_bound=$((ast_bound * 3))
  ir_bound=$((ir_bound * 3))
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-perf.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# 10,000 statements: 100 inputs, then 9,900 assignments each reading the
# previous value and an input, with every kind of expression; the last
# value is the one output.
awk 'BEGIN {
  for (i = 0; i < 100; i++) printf "x%d: f32[N, D]\n", i
  print "t0 = x0"
  for (i = 1; i < 9900; i++) {
    x = "x" (i % 100)
    if (i % 4 == 0)      printf "t%d = t%d * 0.5 + %s - 1e-3\n", i, i - 1, x
    else if (i % 4 == 1) printf "t%d = where(%s > 0.0, t%d, -%s ** 2)\n", i, x, i - 1, x
    else if (i % 4 == 2) printf "t%d = exp(t%d - max(t%d, -1)) / (1.0 + abs(%s))\n", i, i - 1, i - 1, x
    else                 printf "t%d = maximum(t%d, %s) # a comment\n", i, i - 1, x
  }
}' >"$tmp/big.te"

now_ms() { date +%s%N | cut -c1-13; }
# CPU time (user + system) of the finished children so far, in ms: steadier
# than the wall clock on a busy machine.
# (`times` runs in this shell, not in a command substitution's subshell.)
child_cpu_ms() {
  awk 'NR == 2 {
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60000 + p[2] * 1000 }
    printf "%d\n", t
  }' "$tmp/times"
}

echo "1..2"
n=0
for emit in ast ir; do
  n=$((n + 1))
  bound=$ast_bound
  [ $emit = ir ] && bound=$ir_bound
  cpu= ms= all= status=0
  for run in 1 2 3; do # the fastest of three: another process's burst (a
    start=$(now_ms)    # compaction for huge pages, nvcc's cicc) fell on one
    times >"$tmp/times"
    cpu_start=$(child_cpu_ms)
    "$TECC" --emit=$emit -o "$tmp/out" "$tmp/big.te" 2>"$tmp/err" || status=$?
    times >"$tmp/times"
    c=$(($(child_cpu_ms) - cpu_start))
    w=$(($(now_ms) - start))
    all="$all${all:+, }$c"
    if [ -z "$cpu" ] || [ "$c" -lt "$cpu" ]; then cpu=$c ms=$w; fi
  done
  what="--emit=$emit of 10,000 statements: $cpu ms CPU, $ms ms wall, the fastest of three (CPU $all; bound $bound ms CPU)"
  if [ $status = 0 ] && [ "$cpu" -le "$bound" ]; then
    echo "ok $n - $what"
  else
    echo "not ok $n - $what, exit $status"
    head -20 "$tmp/err" | sed 's/^/# /'
  fi
done
