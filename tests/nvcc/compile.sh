#!/bin/sh
# compile.sh — the back end's compile checks (no GPU needed): every program
# of tests/nvcc/ (at -O0 and -O2), tests/programs/, tests/stitch/ and
# examples/ (at -O2) goes through tecc; nvcc compiles each .cu for sm_80
# and sm_90 in one call with every warning an error; each header compiles as pedantic C99.  The
# tests/nvcc/ programs at -O2 compile once more with -DTECC_INDEX64=0 (no
# 64-bit-index kernels, abi.md section 3).
# Skipped without nvcc.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${TECC:=$top_builddir/src/tecc}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-h4nvcc.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
list=$dir/list
for te in "$top_srcdir"/tests/nvcc/*.te; do
  echo "-O0 $te" >> "$list"
  echo "-O2 $te" >> "$list"
  echo "-O2 $te -DTECC_INDEX64=0" >> "$list"
done
for te in "$top_srcdir"/tests/programs/*.te "$top_srcdir"/tests/stitch/*.te "$top_srcdir"/examples/*.te; do
  [ -f "$te" ] && echo "-O2 $te" >> "$list"
done
n=$(wc -l < "$list")
echo "1..$n"
jobs=$(nproc 2>/dev/null || echo 2)
awk '{ print NR, $0 }' "$list" | xargs -P "$jobs" -L 1 sh -c '
  i=$0 opt=$1 te=$2 define=$3 d='"'$dir'"'
  base=p$i
  if ! "$TECC" -w $opt "$te" -o "$d/$base.cu" > "$d/$base.log" 2>&1; then
    echo tecc > "$d/$base.st"
  elif ! "$NVCC" -c $define -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
         -Werror all-warnings -Xcompiler -Wall,-Wextra -o "$d/$base.o" "$d/$base.cu" >> "$d/$base.log" 2>&1; then
    echo nvcc > "$d/$base.st"
  elif ! ${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -isystem "$CUDA_HOME/include" \
         -fsyntax-only -x c "$d/$base.h" >> "$d/$base.log" 2>&1; then
    echo header > "$d/$base.st"
  else
    echo ok > "$d/$base.st"
  fi
  rm -f "$d/$base.o"'
i=0
while read -r opt te define; do
  i=$((i + 1))
  st=$(cat "$dir/p$i.st" 2>/dev/null)
  if [ "$st" = ok ]; then
    echo "ok $i - $opt $te${define:+ $define}"
  else
    echo "not ok $i - $opt $te${define:+ $define} (${st:-not run} failed)"
    head -n 20 "$dir/p$i.log" | sed 's/^/# /'
  fi
done < "$list"
