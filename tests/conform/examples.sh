#!/bin/sh
# examples.sh — examples/Makefile builds libexamples.a, libexamples.so and
# the demo linked against each from another directory (srcdir=), and both
# demos' host checks pass on a GPU.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-examples.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
echo "1..4"
# Without a GPU to run the demos, whether the Makefile builds them is the
# question: their device code is compiled unoptimized (two to three times
# faster; tests/nvcc/compile.sh builds examples/ optimized).
flags="-O3 -arch=sm_90"
nvidia-smi -L > /dev/null 2>&1 || flags="$flags -Xcicc -O0 -Xptxas -O0"
if make -s -j"$(nproc 2>/dev/null || echo 2)" -C "$dir" -f "$top_srcdir/examples/Makefile" srcdir="$top_srcdir/examples" \
     TECC="$TECC" NVCC="$NVCC" NVCCFLAGS="$flags" CUDA_HOME="$CUDA_HOME" CC="${CC:-cc}" all > "$dir/make.log" 2>&1 &&
   # demo-shared really takes its kernels from the shared library
   readelf -d "$dir/demo-shared" 2>> "$dir/make.log" | grep -q 'NEEDED.*libexamples\.so'; then
  echo "ok 1 - make builds libexamples.a, libexamples.so, demo and demo-shared"
else
  echo "not ok 1 - make builds libexamples.a, libexamples.so, demo and demo-shared"
  tail -n 30 "$dir/make.log" | sed 's/^/# /'
fi
# -MD: the dependency file names the .te
if grep -q 'softmax.te' "$dir/softmax.d" 2>/dev/null; then
  echo "ok 2 - tecc -MD wrote softmax.d naming softmax.te"
else
  echo "not ok 2 - tecc -MD wrote softmax.d naming softmax.te"
fi
n=2
for demo in demo demo-shared; do
  n=$((n + 1))
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "ok $n # SKIP no GPU to run $demo"
  elif "$dir/$demo" 1000 777 > "$dir/$demo.log" 2>&1 && "$dir/$demo" 3 1 >> "$dir/$demo.log" 2>&1; then
    sed 's/^/# /' "$dir/$demo.log"
    echo "ok $n - $demo: softmax and layernorm match the host"
  else
    sed 's/^/# /' "$dir/$demo.log"
    echo "not ok $n - $demo: softmax and layernorm match the host"
  fi
done
