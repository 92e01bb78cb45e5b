#!/bin/sh
# arch.sh — --arch changes what is emitted where it matters: for sm_90 the
# schedule of a softmax over long rows has a cluster variant (read from
# --emit=json) and the .cu its cluster code (thread-block clusters,
# distributed shared memory: the text itself); for sm_80 neither.  Each .cu
# compiles with nvcc for its own architecture (tests/nvcc/compile.sh also
# builds the sm_90 files for sm_80: doc/cli.md).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-arch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te="$top_srcdir/examples/softmax.te"

plan 8
for a in sm_80 sm_90; do
  "$TECC" --arch=$a --emit=json "$te" -o "$work/$a.json"
  "$TECC" --arch=$a "$te" -o "$work/$a.cu"
  is "$?" 0 "tecc --arch=$a examples/softmax.te"
done
# clusters ARCH: the kernels with a cluster variant, by --emit=json.
clusters() {
  "$JQ" -r '[.kernels[] | select(any(.groups[].variants[]; .storage == "cluster")) | .name] | join(" ")' "$work/$1.json"
}
if have_jq; then
  is "$(clusters sm_90)" "softmax_f32 softmax_bf16" "sm_90: each softmax has a cluster variant"
  is "$(clusters sm_80)" "" "sm_80: none has"
else
  skip "sm_90: each softmax has a cluster variant" "jq not found by configure"
  skip "sm_80: none has" "jq not found by configure"
fi
# The cluster code is the .cu's own (its launch, the cluster intrinsics).
ok "sm_90: the .cu launches clusters" grep -q 'tecc::launch_cluster(' "$work/sm_90.cu"
ok "sm_80: the .cu has no cluster code" sh -c "! grep -q -e 'cluster_' -e '__cluster' '$work/sm_80.cu'"
if [ -z "$NVCC" ]; then
  skip "nvcc -arch=sm_80 compiles the sm_80 file" "nvcc not found by configure"
  skip "nvcc -arch=sm_90 compiles the sm_90 file" "nvcc not found by configure"
  exit 0
fi
for a in sm_80 sm_90; do
  if "$NVCC" -c -arch=$a -Werror all-warnings "$work/$a.cu" -o "$work/$a.o" > "$work/$a.log" 2>&1; then
    pass "nvcc -arch=$a compiles the $a file"
  else
    fail "nvcc -arch=$a compiles the $a file"
    sed 's/^/# /' "$work/$a.log"
  fi
done
