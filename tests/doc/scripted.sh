#!/bin/sh
# scripted.sh — the scripted-generation example works (TAP):
# examples/scripted/libtecc_demo.c builds against libtecc and runs, and
# gen-kernels.sh generates its family through `tecc - -o -` with -D.
set -u
: "${TECC:?TECC must name the tecc command}"
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$(dirname "$(dirname "$TECC")")}
NVCC=${NVCC:-}
CC=${CC:-cc}
ex=$top_srcdir/examples/scripted

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-scripted.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  [ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err" | head -40
  return 0
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

printf 'x: f32[N]\ny = x + 1\n' > "$tmp/probe.te"
codegen=no
(cd "$tmp" && "$TECC" probe.te -o probe.cu) >/dev/null 2>&1 && [ -s "$tmp/probe.cu" ] && codegen=yes

echo "1..5"

# 1-2: the C API demo.
lib=$top_builddir/lib/.libs/libtecc.a
if [ ! -f "$lib" ]; then
  skip "libtecc_demo builds" "no $lib"; skip "libtecc_demo runs" "not built"
else
  # A sanitizer build's library needs the same flags to link.
  san=$(sed -n 's/^SAN_CFLAGS = //p' "$top_builddir/Makefile" 2>/dev/null)
  # shellcheck disable=SC2086 # $san holds words
  if "$CC" -std=c99 -Wall -Wextra -pedantic -Werror $san -I"$top_srcdir/lib" \
      "$ex/libtecc_demo.c" "$lib" -lm -o "$tmp/demo" > "$tmp/err" 2>&1; then
    ok "libtecc_demo builds (C99, -pedantic -Werror)"
    emit=; [ $codegen = yes ] || emit=--emit=ir
    # shellcheck disable=SC2086 # $emit is empty or one word
    "$tmp/demo" $emit 2048 > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then
      not_ok "libtecc_demo $emit runs: exit $rc"
    elif [ $codegen = yes ] && ! grep -q 'rmsnorm_2048' "$tmp/out"; then
      cat "$tmp/out" > "$tmp/err"; not_ok "libtecc_demo: the header declares rmsnorm_2048"
    elif ! grep -q 'bad.te line 3 ' "$tmp/out"; then
      cat "$tmp/out" > "$tmp/err"; not_ok "libtecc_demo: a diagnostic at bad.te line 3"
    else
      ok "libtecc_demo${emit:+ $emit} runs and reports bad.te at line 3"
    fi
  else
    not_ok "libtecc_demo builds (C99, -pedantic -Werror)"
    skip "libtecc_demo runs" "not built"
  fi
fi

# 3-5: the generated family.
if [ $codegen = no ]; then
  skip "gen-kernels.sh writes the family" "tecc cannot generate code yet"
  skip "the family's headers are C99" "no family"
  skip "nvcc -c builds a generated kernel" "no family"
  exit 0
fi
if TECC=$TECC sh "$ex/gen-kernels.sh" "$tmp/gen" > "$tmp/out" 2> "$tmp/err"; then
  count=$(find "$tmp/gen" -name '*.cu' | wc -l)
  if [ "$count" -eq 8 ] && [ -f "$tmp/gen/family.h" ] && [ ! -s "$tmp/err" ] &&
     grep -q 'rmsnorm_bf16_4096' "$tmp/gen/rmsnorm_bf16_4096.h" &&
     ! grep -q 'int64_t D' "$tmp/gen/rmsnorm_bf16_4096.h"; then
    ok "gen-kernels.sh writes 8 kernels and family.h; D is bound (not a parameter)"
  else
    { echo "$count .cu files"; cat "$tmp/gen/rmsnorm_bf16_4096.h"; } >> "$tmp/err" 2>&1
    not_ok "gen-kernels.sh writes 8 kernels and family.h; D is bound"
  fi
else
  not_ok "gen-kernels.sh writes the family"
fi
if [ -z "$NVCC" ]; then
  skip "the family's headers are C99" "no CUDA (NVCC is empty)"
  skip "nvcc -c builds a generated kernel" "NVCC is empty"
  exit 0
fi
# family.h declares every kernel: a C99 file that names each entry point.
{
  echo '#include "family.h"'
  echo 'int main(void) {'
  for cu in "$tmp"/gen/*.cu; do
    name=$(basename "$cu" .cu); echo "  (void)sizeof(&$name);"
  done
  echo '  return 0;'
  echo '}'
} > "$tmp/gen/uses_family.c"
if "$CC" -std=c99 -Wall -Wextra -pedantic -Werror -isystem "${CUDA_HOME:-/usr/local/cuda}/include" \
    -fsyntax-only "$tmp/gen/uses_family.c" > "$tmp/err" 2>&1; then
  ok "family.h (all 8 headers in one file) declares every kernel, C99 -pedantic clean"
else
  not_ok "family.h (all 8 headers in one file) declares every kernel, C99 -pedantic clean"
fi
if (cd "$tmp/gen" && "$NVCC" -c -arch=sm_80 layernorm_bf16_4096.cu -o /dev/null) > "$tmp/err" 2>&1; then
  ok "nvcc -c builds gen/layernorm_bf16_4096.cu"
else
  not_ok "nvcc -c builds gen/layernorm_bf16_4096.cu"
fi
