#!/bin/sh
# sanitize.sh — compute-sanitizer (memcheck, racecheck, initcheck) over the
# conformance runner on a subset of programs that covers each schedule class,
# with small bindings (TAP: one test per tool).  SANITIZE_PROGRAMS names
# another subset (base names in tests/programs).
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
sanitizer=${COMPUTE_SANITIZER:-}
[ -n "$sanitizer" ] || sanitizer=$(command -v compute-sanitizer 2>/dev/null)
[ -n "$sanitizer" ] || { [ -x "${CUDA_HOME}/bin/compute-sanitizer" ] && sanitizer="${CUDA_HOME}/bin/compute-sanitizer"; }
if [ -z "$sanitizer" ]; then
  echo "1..0 # SKIP compute-sanitizer not found"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-sanitize.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
p="$top_srcdir/tests/programs"
names=${SANITIZE_PROGRAMS:-"t_softmax red_outer red_all layernorm bcast_rank4 argmax_ties inplace col_softmax_3d"}
subset=
for name in $names; do
  subset="$subset $p/$name.te"
done
conform="$top_builddir/tests/conform/tecc-conform"
common="--quick --max-elements=20000 --workdir=$dir/build --nvcc=$NVCC --arch=${CONFORM_ARCH:-native}"
# Build once, outside the sanitizer; then it watches only the runs, all in
# one process (--no-fork: no children for it to follow).
if ! "$conform" --build-only $common $subset > "$dir/build.log" 2>&1; then
  echo "Bail out! building the subset failed"
  sed 's/^/# /' "$dir/build.log" | head -n 40
  exit 1
fi
echo "1..3"
n=0
for tool in memcheck racecheck initcheck; do
  n=$((n + 1))
  log=$dir/sanitize-$tool.log
  "$sanitizer" --tool "$tool" --error-exitcode 99 --target-processes application-only \
    "$conform" --prebuilt --no-fork $common $subset > "$log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
  if [ $rc -eq 0 ]; then
    echo "ok $n - compute-sanitizer $tool: ${summary:-clean}"
  else
    echo "not ok $n - compute-sanitizer $tool (exit $rc): $summary"
    grep -E "=========|not ok|FAIL" "$log" | head -n 40 | sed 's/^/# /'
  fi
done
