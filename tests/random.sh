#!/bin/sh
# random.sh — differential testing on random programs (TAP).
#
# tests/gen/gen writes valid, well-conditioned .te programs (many kernels
# per file so that one nvcc call serves many programs).  Then:
#   1. tecc compiles every generated program and every tests/regress/*.te at
#      -O0, -O1 and -O2: exit 0, no internal error, and the same output
#      twice (determinism);
#   2. with NVCC set, nvcc -c accepts the multi-kernel .cu files at every
#      level (no GPU needed; device code unoptimized, as gpu-all.sh's);
#   3. with a GPU, tests/conform/tecc-conform runs RANDOM_GPU_FILES files of
#      RANDOM_GPU_KERNELS kernels (plus the regression files) at each level
#      on random inputs and several size bindings and compares every element
#      with the reference interpreter (abi.md §6), and compute-sanitizer
#      memcheck runs over RANDOM_SANITIZE of those kernels.
#
# Knobs (environment): RANDOM_SEED (default 1), RANDOM_FILES (3),
# RANDOM_KERNELS (12), RANDOM_SINGLES (12 one-kernel implicit files),
# RANDOM_GPU_FILES (8), RANDOM_GPU_KERNELS (25), RANDOM_SANITIZE (10),
# RANDOM_MAX_ELEMENTS (100000: the largest tensor a GPU binding may have),
# RANDOM_JOBS (parallel nvcc/runner processes; default: the CPU count),
# RANDOM_KEEP (a directory to keep the generated files in).
# A failing program is reproduced with `gen --seed S --kernels K` (the
# seed and count are in its first line) and belongs in tests/regress/.
. "$top_srcdir/tests/tap.sh"

gen="$top_builddir/tests/gen/gen"
conform="$top_builddir/tests/conform/tecc-conform"
[ -x "$gen" ] || skip_all "tests/gen/gen is not built"
seed=${RANDOM_SEED:-1}
files=${RANDOM_FILES:-3}
kernels=${RANDOM_KERNELS:-12}
singles=${RANDOM_SINGLES:-12}
gpu_files=${RANDOM_GPU_FILES:-8}
gpu_kernels=${RANDOM_GPU_KERNELS:-25}
sanitize=${RANDOM_SANITIZE:-10}
max_elements=${RANDOM_MAX_ELEMENTS:-100000}
jobs=${RANDOM_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [ -n "${RANDOM_KEEP:-}" ]; then
  work=$RANDOM_KEEP
  mkdir -p "$work" || exit 1
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-random.XXXXXX") || exit 1
  trap 'rm -rf "$work"' EXIT
fi

# ---- 1. generate and compile at every level -----------------------------
i=0
while [ $i -lt "$files" ]; do
  i=$((i + 1))
  "$gen" --seed $((seed * 1000 + i)) --kernels "$kernels" > "$work/m$i.te"
done
i=0
while [ $i -lt "$singles" ]; do
  i=$((i + 1))
  "$gen" --seed $((seed * 1000 + 500 + i)) --implicit > "$work/s$i.te"
done
set -- "$work"/m*.te "$work"/s*.te
for f in "$top_srcdir"/tests/regress/*.te; do
  [ -f "$f" ] && set -- "$@" "$f"
done

for f in "$@"; do
  name=$(basename "$f")
  for level in 0 1 2; do
    out="$work/${name%.te}.O$level"
    "$TECC" -O$level -w "$f" -o "$out.cu" > "$out.err" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && ! grep -q "internal compiler error" "$out.err"; then
      pass "tecc -O$level $name"
    else
      fail "tecc -O$level $name (exit $rc)"
      diag "$(head -n 1 "$f")"
      diag "$(head -n 20 "$out.err")"
    fi
  done
  # determinism: a second run writes the same bytes
  mkdir -p "$work/again"
  "$TECC" -w -O2 "$f" -o "$work/again/${name%.te}.O2.cu" > /dev/null 2>&1
  if cmp -s "$work/again/${name%.te}.O2.cu" "$work/${name%.te}.O2.cu" &&
     cmp -s "$work/again/${name%.te}.O2.h" "$work/${name%.te}.O2.h"; then
    pass "tecc $name twice: same output"
  else
    fail "tecc $name twice: different output"
  fi
done

# ---- 2. nvcc -c on the multi-kernel files, in parallel ---------------------
if [ -z "${NVCC:-}" ]; then
  skip "nvcc -c on the generated .cu files" "NVCC is not set"
else
  # Whether nvcc accepts the code is the question here, not how fast it
  # runs: the device code is compiled unoptimized, as gpu-all.sh and
  # doc-examples.sh do (two to three times faster), when this nvcc takes
  # the flags; tests/nvcc/compile.sh builds the tree's programs optimized.
  fast="-Xcicc -O0 -Xptxas -O0"
  printf '__global__ void k() {}\n' > "$work/probe.cu"
  # shellcheck disable=SC2086 # $fast holds words
  "$NVCC" -arch=sm_90 -c $fast -o "$work/probe.o" "$work/probe.cu" > /dev/null 2>&1 || fast=
  # the multi-kernel files, and the programs that once failed (one of them
  # only in nvcc: tests/regress/apart_counts_scope.te)
  nvcc_files=$(for f in "$work"/m*.O?.cu "$work"/*.O?.cu; do echo "$f"; done | sort -u |
    grep -v '/s[0-9]*\.O.\.cu$')
  for f in $nvcc_files; do
    [ -f "$f" ] && echo "$f"
  done | xargs -P "$jobs" -I{} sh -c \
    '"$0" -arch=sm_90 -c $2 -o "${1%.cu}.o" "$1" > "${1%.cu}.nvcc" 2>&1 || echo failed > "${1%.cu}.nvfail"' \
    "$NVCC" {} "$fast"
  for f in $nvcc_files; do
    [ -f "$f" ] || continue
    if [ -f "${f%.cu}.nvfail" ]; then
      fail "nvcc -c $(basename "$f")"
      diag "$(head -n 20 "${f%.cu}.nvcc")"
    else
      pass "nvcc -c $(basename "$f")"
    fi
  done
fi

# ---- 3. on a GPU: the differential run ------------------------------------
if ! nvidia-smi -L > /dev/null 2>&1; then
  skip "differential run on the GPU" "no GPU"
elif [ -z "${NVCC:-}" ] || [ ! -x "$conform" ]; then
  skip "differential run on the GPU" "no nvcc or no tests/conform/tecc-conform"
else
  i=0
  while [ $i -lt "$gpu_files" ]; do
    i=$((i + 1))
    "$gen" --seed $((seed * 1000 + 700 + i)) --kernels "$gpu_kernels" \
      --max-elements "$max_elements" > "$work/g$i.te"
  done
  # a program tecc cannot compile would stop the whole runner (it links
  # libtecc): fail it here and run the others
  set --
  for f in "$work"/g*.te "$top_srcdir"/tests/regress/*.te; do
    [ -f "$f" ] || continue
    bad=
    for level in 0 1 2; do
      "$TECC" -w -O$level "$f" -o "$work/pre.cu" > "$work/pre.err" 2>&1 && continue
      fail "tecc -O$level $(basename "$f") before the GPU run"
      diag "$(head -n 5 "$work/pre.err")"
      bad=1
    done
    [ -z "$bad" ] && set -- "$@" "$f"
  done
  # the three levels in one run: one reference per binding, and -O1 reuses
  # -O2's objects where the code is the same (--cache)
  "$conform" -O2 -O1 -O0 --jobs="$jobs" --nvcc="$NVCC" --arch="${CONFORM_ARCH:-native}" \
    --seed="$seed" --max-elements="$max_elements" --cache="$work/cache" "$@" \
    > "$work/conform.log" 2>&1
  for level in 2 1 0; do
    summary=$(grep "^# conformance -O$level " "$work/conform.log" | sed 's/^# //')
    if [ -n "$summary" ] && ! grep -q "^not ok .* -O$level: " "$work/conform.log"; then
      pass "random programs -O$level: $summary"
    else
      fail "random programs -O$level: ${summary:-no summary (runner failed)}"
      diag "$(grep -E "^not ok .* -O$level: |FAIL .* -O$level|error" "$work/conform.log" | head -n 60)"
    fi
  done
  sanitizer=$(command -v compute-sanitizer 2>/dev/null)
  [ -n "$sanitizer" ] || { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ] &&
    sanitizer="${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"; }
  if [ -z "$sanitizer" ] || [ "$sanitize" -le 0 ]; then
    skip "compute-sanitizer memcheck on random programs" "no compute-sanitizer"
  else
    "$gen" --seed $((seed * 1000 + 999)) --kernels "$sanitize" > "$work/san.te"
    "$sanitizer" --tool memcheck --error-exitcode 99 "$conform" --quick --jobs=1 \
      --nvcc="$NVCC" --arch="${CONFORM_ARCH:-native}" --seed="$seed" "$work/san.te" \
      > "$work/san.log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY" "$work/san.log" | tail -n 1)
    if [ $rc -eq 0 ]; then
      pass "compute-sanitizer memcheck, $sanitize random kernels: ${summary:-clean}"
    else
      fail "compute-sanitizer memcheck, $sanitize random kernels (exit $rc): $summary"
      diag "$(grep -E '=========|not ok|FAIL' "$work/san.log" | head -n 40)"
    fi
  fi
fi
done_testing
