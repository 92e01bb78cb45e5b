#!/bin/sh
# run-all.sh — builds libtecc once with clang, libFuzzer, ASan and UBSan,
# and fuzzes both harnesses for $FUZZ_SECONDS seconds each (default 1800,
# the issue's 30 minutes), the two at the same time:
#   fuzz_frontend  scanner, parser, sema, lowering, optimizer (fuzz/corpus)
#   fuzz_pipeline  the same plus fusion, scheduling and every emitter at
#                  -O0/-O1/-O2 (fuzz/corpus_pipeline, fuzz/corpus)
#
#   FUZZ_SECONDS=600 fuzz/run-all.sh
#   FUZZ_BUILD=/tmp/fz fuzz/run-all.sh     (default ./fuzz-build)
#   FUZZ_ONLY=pipeline fuzz/run-all.sh     (one harness)
#   FUZZ_STOP=1 fuzz/run-all.sh            (stop at the first crash; by
#       default libFuzzer's fork mode goes on after a crash, so that one
#       known bug does not hide the others)
#
# New inputs go to $FUZZ_BUILD/corpus-NAME, crashes to fuzz/crashes/, each
# harness's log to $FUZZ_BUILD/NAME.log; the final stats (executions,
# coverage, crashes) are printed at the end.  Exit status 1 when a harness
# found a crash.
set -e
srcdir=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-1800}
build=${FUZZ_BUILD:-$PWD/fuzz-build}
only=${FUZZ_ONLY:-}
CLANG=${CLANG:-clang}
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

mkdir -p "$build" "$srcdir/fuzz/crashes"
cd "$build"
if [ ! -f Makefile ]; then
  "$srcdir/configure" -q --disable-shared CC="$CLANG" \
    CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san"
fi
make -j"$(nproc 2>/dev/null || echo 2)" lib/libtecc.la >make.log 2>&1 || {
  tail -30 make.log
  exit 1
}
for h in frontend pipeline; do
  "$CLANG" -g -O1 -fsanitize=fuzzer $san -I"$srcdir/lib" \
    "$srcdir/fuzz/fuzz_$h.c" lib/.libs/libtecc.a -lm -o "fuzz_$h"
done

# fuzz NAME SEEDDIR...: one harness in the background; stdin is /dev/null
# so that an `import "/dev/stdin"` cannot block.
fuzz() {
  name=$1
  shift
  mkdir -p "corpus-$name"
  keep_going="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
  [ -n "${FUZZ_STOP:-}" ] && keep_going=
  "./fuzz_$name" $keep_going -max_total_time="$seconds" -max_len=4096 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$srcdir/fuzz/crashes/$name-" -dict="$srcdir/fuzz/te.dict" \
    "corpus-$name" "$@" </dev/null >"$name.log" 2>&1 &
}
pids=
if [ -z "$only" ] || [ "$only" = frontend ]; then
  fuzz frontend "$srcdir/fuzz/corpus"
  pids="$pids $!"
fi
if [ -z "$only" ] || [ "$only" = pipeline ]; then
  fuzz pipeline "$srcdir/fuzz/corpus_pipeline" "$srcdir/fuzz/corpus"
  pids="$pids $!"
fi
status=0
for p in $pids; do
  wait "$p" || status=1
done
for h in frontend pipeline; do
  [ -f "$h.log" ] || continue
  echo "== fuzz_$h"
  grep -E '^#[0-9]+.*(DONE|pulse|cov:)|stat::|SUMMARY|Test unit written|crash:' "$h.log" | tail -8
  echo "crash artifacts: $(grep -c 'Test unit written' "$h.log")"
  grep -h 'internal compiler error\|^SUMMARY' "$h.log" | sort | uniq -c | sort -rn | head -10
done
exit $status
