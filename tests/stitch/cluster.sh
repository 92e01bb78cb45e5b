#!/bin/sh
# cluster.sh — the cluster variant of stitch rows on a GPU (TAP from
# cluster_main.cu): examples/softmax.te built for the GPU at hand, rows
# from 32769 to 262144 elements (one more than a block's registers hold, up
# to 8 blocks' worth), f32 and bf16, against a float64 softmax.  Skipped
# without a GPU or nvcc.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "${NVCC:-}" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-cluster.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! "$TECC" "$top_srcdir/examples/softmax.te" -o "$dir/softmax.cu" > "$dir/log" 2>&1 ||
   ! "$NVCC" -O2 -std=c++17 -arch="${CONFORM_ARCH:-native}" -I"$dir" -o "$dir/cluster" \
       "$top_srcdir/tests/stitch/cluster_main.cu" "$dir/softmax.cu" >> "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - building the cluster test"
  sed 's/^/# /' "$dir/log" | head -n 40
  exit 0
fi
exec "$dir/cluster"
