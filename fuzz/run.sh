#!/bin/sh
# run.sh — builds libtecc with clang and libFuzzer/ASan/UBSan instrumentation
# in a build directory of its own and fuzzes the front end for
# $FUZZ_SECONDS seconds (default 600).
#
#   FUZZ_SECONDS=60 fuzz/run.sh          # from anywhere
#   FUZZ_BUILD=/tmp/fz fuzz/run.sh       # where to build (default ./fuzz-build)
#   FUZZ_JOBS=2                          # parallel fuzzing processes (default 1)
#
# Seeds come from fuzz/corpus (read only); new inputs go to
# $FUZZ_BUILD/corpus; crashes, leaks and timeouts are saved in fuzz/crashes/.
set -e
srcdir=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-600}
build=${FUZZ_BUILD:-$PWD/fuzz-build}
jobs=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

mkdir -p "$build" "$build/corpus" "$srcdir/fuzz/crashes"
cd "$build"
if [ ! -f Makefile ]; then
  "$srcdir/configure" -q --disable-shared CC="$CLANG" \
    CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san"
fi
make -j"$(nproc 2>/dev/null || echo 2)" lib/libtecc.la >make.log 2>&1 || {
  tail -30 make.log
  exit 1
}
"$CLANG" -g -O1 -fsanitize=fuzzer $san -I"$srcdir/lib" \
  "$srcdir/fuzz/fuzz_frontend.c" lib/.libs/libtecc.a -lm -o fuzz_frontend

seeds=
[ -d "$srcdir/fuzz/corpus" ] && seeds="$srcdir/fuzz/corpus"
parallel=
[ "$jobs" -gt 1 ] && parallel="-jobs=$jobs -workers=$jobs"
# stdin is /dev/null so that an `import "/dev/stdin"` cannot block.
./fuzz_frontend -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 $parallel \
  -artifact_prefix="$srcdir/fuzz/crashes/" -dict="$srcdir/fuzz/te.dict" \
  corpus $seeds </dev/null
