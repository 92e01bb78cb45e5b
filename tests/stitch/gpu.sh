#!/bin/sh
# gpu.sh — stitch kernels on the GPU (TAP): tests/stitch/rows.te,
# axes.te, regress.te, moments.te, cluster_rows.te, odd_rows.te,
# batch_rows.te, kept_rows.te, narrow_rows.te, slices2.te (gathers
# along two axes of one value), pipe.te (blocks of several long rows,
# the stream kernel's pipe), labels.te (positions compared with a
# label, a pack at a time) and ahead_rows.te (the next row loaded ahead
# into shared memory) through the conformance
# runner at -O1 and -O2, against the reference interpreter.  Their
# `# conform: sizes` bindings pick every variant (warp, block, narrow and
# long register kernels with and without 16-byte packs, clusters,
# clusters looping over rows, streaming, column, rows visited
# batch-fastest), the runner's own bindings add odd sizes, empty rows and
# misaligned pointers.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
conform="$top_builddir/tests/conform/tecc-conform"
n=0 failed=0
for o in -O1 -O2; do
  for prog in rows axes regress moments cluster_rows odd_rows batch_rows kept_rows narrow_rows slices2 pipe labels ahead_rows; do
    n=$((n + 1))
    log=$("$conform" $o --nvcc="$NVCC" --arch="${CONFORM_ARCH:-native}" ${CONFORM_FLAGS} \
      "$top_srcdir/tests/stitch/$prog.te" 2>&1)
    if [ $? -eq 0 ]; then
      echo "ok $n - $prog.te at $o matches the interpreter"
    else
      failed=$((failed + 1))
      echo "not ok $n - $prog.te at $o matches the interpreter"
      printf '%s\n' "$log" | tail -n 40 | sed 's/^/# /'
    fi
  done
done
echo "1..$n"
[ $failed -eq 0 ]
