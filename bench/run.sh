#!/bin/sh
# bench/run.sh [--quick] [bench.py options]: the whole doc/performance.md
# benchmark in one command on a GPU machine with nvcc, python3 and PyTorch.
# Results go to $OUT (else ./bench-out): bench.csv, latency.csv, bench.png.
# bench/run.sh --train [train.py options]: the training suite instead
# (train.txt, train.json), Liger-Kernel from bench-carry/liger/src if there.
#
# tecc comes from $TECC, else a build in the tree (src/tecc), else a binary
# or a `make dist` tarball carried in bench-carry/ (built here: no
# flex/bison/autotools needed).  Libraries prebuilt in bench-carry/build
# (bench.py --build-only --build-dir bench-carry/build) are used when their
# stamp matches the suite and the GPU's arch.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${OUT:-$PWD/bench-out}
carry=$top/bench-carry

python3 -c 'import torch' 2>/dev/null || { echo "bench: python3 cannot import torch" >&2; exit 1; }
if [ -z "${TECC:-}" ]; then
  for t in "$top/src/tecc" "$carry/tecc"; do
    if [ -x "$t" ]; then TECC=$t; break; fi
  done
fi
if [ -z "${TECC:-}" ]; then
  tarball=$(ls "$carry"/tecc-*.tar.gz 2>/dev/null | tail -n 1 || true)
  if [ -n "$tarball" ]; then
    b=${TMPDIR:-/tmp}/tecc-bench-build.$$
    mkdir -p "$b" && tar -xzf "$tarball" -C "$b"
    (cd "$b"/tecc-* && ./configure -q && make -j"$(nproc)" src/tecc >"$b/make.log" 2>&1) \
      || { echo "bench: building $tarball failed; see $b/make.log" >&2; exit 1; }
    TECC=$(echo "$b"/tecc-*/src/tecc)
  fi
fi
if [ -n "${TECC:-}" ]; then export TECC; fi

if [ "${1:-}" = --train ]; then  # the training suite, bench/train.py (README.md)
  shift
  if [ -d "$carry/liger/src" ]; then export PYTHONPATH="$carry/liger/src${PYTHONPATH:+:$PYTHONPATH}"; fi
  exec python3 "$here/train.py" --out "$out" "$@"
fi
set -- --out "$out" "$@"
if [ -d "$carry/build" ]; then set -- --build-dir "$carry/build" "$@"; fi
exec python3 "$here/bench.py" "$@"
