#!/bin/sh
# nvcc-compile.sh — every test program and example: tecc writes the .cu and
# .h, nvcc -c compiles the .cu for sm_90 with no -I flag, and the header
# compiles as pedantic C99 (abi.md §1).  No GPU needed; skipped without nvcc.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-nvcc.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# Whether the code compiles is the question, not how fast it runs: compile
# the device code unoptimized (several times faster) when this nvcc takes it.
FAST="-Xcicc -O0 -Xptxas -O0"
echo '__global__ void k(void) {}' > "$dir/probe.cu"
"$NVCC" -arch=sm_90 $FAST -c -o "$dir/probe.o" "$dir/probe.cu" > /dev/null 2>&1 || FAST=
export FAST
set -- "$top_srcdir"/tests/programs/*.te "$top_srcdir"/examples/*.te
echo "1..$#"
jobs=$(nproc 2>/dev/null || echo 2)
# Compile in parallel, one status file per program; report in order.
i=0
for te in "$@"; do
  i=$((i + 1))
  echo "$i $te"
done | xargs -P "$jobs" -L 1 sh -c '
  i=$0 te=$1 d='"'$dir'"'
  base=p$i
  if ! "$TECC" -w "$te" -o "$d/$base.cu" > "$d/$base.log" 2>&1; then
    echo tecc > "$d/$base.st"
  elif ! "$NVCC" -arch=sm_90 $FAST -c -o "$d/$base.o" "$d/$base.cu" >> "$d/$base.log" 2>&1; then
    echo nvcc > "$d/$base.st"
  elif ! ${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -isystem "$CUDA_HOME/include" \
         -fsyntax-only -x c "$d/$base.h" >> "$d/$base.log" 2>&1; then
    echo header > "$d/$base.st"
  else
    echo ok > "$d/$base.st"
  fi'
i=0
for te in "$@"; do
  i=$((i + 1))
  st=$(cat "$dir/p$i.st" 2>/dev/null)
  if [ "$st" = ok ]; then
    echo "ok $i - $te"
  else
    echo "not ok $i - $te (${st:-not run} failed)"
    head -n 20 "$dir/p$i.log" | sed 's/^/# /'
  fi
done
