#!/bin/sh
# nvcc.sh — the gradient kernels of the examples' norms and softmaxes
# (tests/grad/programs/*.te) compile and run on the interpreter (TAP):
# tecc -O2, nvcc -c for sm_90 optimized with every warning an error, the
# header as pedantic C99; and the reference interpreter evaluates every
# kernel on the small bindings of the conformance runner (tecc-conform
# --no-device --quick).  Some of their sm_90 instances spill: each program
# lists its spilling instances as diagnostics, not failures.  They are
# kept out of tests/programs/, whose spills tests/nvcc/compile.sh fails
# on, until the backward schedules hold their rows without spilling.
# The nvcc part is skipped without nvcc.
. "$top_srcdir/tests/tap.sh"
: "${top_builddir:=.}"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-grad-nvcc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

conform="$top_builddir/tests/conform/tecc-conform"
for te in "$top_srcdir"/tests/grad/programs/*.te; do
  name=$(basename "$te" .te)
  if "$conform" --tap --no-device --quick "$te" > "$work/$name.interp" 2>&1; then
    pass "$name: the interpreter runs its kernels"
  else
    fail "$name: the interpreter runs its kernels"
    diag "$(grep -v '^ok' "$work/$name.interp" | head -n 20)"
  fi
done

if [ -z "${NVCC:-}" ]; then
  skip "nvcc -c of tests/grad/programs" "nvcc not found by configure"
  done_testing
fi
ls "$top_srcdir"/tests/grad/programs/*.te | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c '
  te=$1 d=$2 base=$(basename "$1" .te)
  if ! "$TECC" -w -O2 "$te" -o "$d/$base.cu" > "$d/$base.log" 2>&1; then
    echo tecc > "$d/$base.st"
  elif ! "$NVCC" -c -gencode arch=compute_90,code=sm_90 -Xptxas -v -Werror all-warnings \
         -Xcompiler -Wall,-Wextra -o "$d/$base.o" "$d/$base.cu" >> "$d/$base.log" 2>&1; then
    echo nvcc > "$d/$base.st"
  elif ! ${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -isystem "$CUDA_HOME/include" \
         -fsyntax-only -x c "$d/$base.h" >> "$d/$base.log" 2>&1; then
    echo header > "$d/$base.st"
  else
    echo ok > "$d/$base.st"
  fi
  rm -f "$d/$base.o"' sh {} "$work"
for te in "$top_srcdir"/tests/grad/programs/*.te; do
  name=$(basename "$te" .te)
  st=$(cat "$work/$name.st" 2>/dev/null)
  if [ "$st" = ok ]; then
    pass "$name: tecc -O2, nvcc -c for sm_90, the header as C99"
  else
    fail "$name: tecc -O2, nvcc -c for sm_90, the header as C99 (${st:-not run} failed)"
    diag "$(grep -v 'ptxas info\|bytes stack frame' "$work/$name.log" | head -n 20)"
    continue
  fi
  # the instances with a stack frame or spills, as compile.sh reads them
  awk '/Compiling entry function/ { e = ""; if ($0 !~ /for .sm_90.$/) next
         e = $0; sub(/^[^\047]*\047/, "", e); sub(/\047.*$/, "", e); i = index(e, "tecc_"); if (i) e = substr(e, i); next }
       /bytes stack frame/ && e != "" { fr = $1; ss = $5; sl = $9; next }
       /Used [0-9]+ registers/ && e != "" { if (fr + ss + sl > 0) print "spills: " e, fr " bytes stack frame, " ss " bytes spill stores, " sl " bytes spill loads"; e = "" }' \
    "$work/$name.log" | sed 's/^/# /'
done
done_testing
