#!/bin/sh
# header-names.sh — the entry point's parameters keep their .te names
# (doc/abi.md §2): builtin names (cos, mean), names ending in _t (cos_t,
# time_t) and the other words C reserves for types only by convention are
# kept; a name the generated code or the compiler needs (int64_t, uint4,
# linux: a macro of GNU compilers, t_x: tecc's temporaries) becomes u_NAME.
# The header compiles as C99 after <time.h> and <math.h>, and the .cu
# with nvcc when there is one (TAP).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-header-names.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
cat > names.te << 'TE'
kernel rope(x: f32[S, D], cos: f32[S, D], sin: f32[S, D], cos_t: f32[S, D],
            time_t: f32[S, D], int64_t: f32[S, D], uint4: f32[S, D], linux: f32[S, D],
            t_x: f32[S, D]) -> (y: f32[S, D], mean: f32[S], var: f32[S]) {
    y = x * cos + x * sin + cos_t * time_t + int64_t * uint4 + linux * t_x
    mean = mean(y, -1)
    var = sum((y - mean) * (y - mean), -1) / 4
}
TE
"$TECC" names.te -o names.cu
is "$?" 0 "tecc compiles parameters named like builtins and C types"
cat > want << 'H'
tecc_status rope(const float *x, const float *cos, const float *sin, const float *cos_t, const float *time_t, const float *u_int64_t, const float *u_uint4, const float *u_linux, const float *u_t_x, float *y, float *mean, float *var, int64_t S, int64_t D, cudaStream_t stream);
H
grep '^tecc_status rope(' names.h > got
diff_ok "names kept unless the generated code needs them" want got

CC=${CC:-cc}
cuda_inc=${CUDA_HOME:-/usr/local/cuda}/include
printf '#include <math.h>\n#include <time.h>\n#include "names.h"\nint main(void) { return 0; }\n' > main.c
if [ -f "$cuda_inc/cuda_runtime_api.h" ]; then
  ok "the header compiles as C99 after <math.h> and <time.h>" \
    "$CC" -std=c99 -Wall -Wextra -pedantic -Werror -isystem "$cuda_inc" -c main.c -o main.o
  ok "and with GNU extensions (where linux is a macro)" \
    "$CC" -std=gnu99 -Wall -Wextra -Werror -isystem "$cuda_inc" -c main.c -o main.o
else
  skip "the header compiles as C99 after <math.h> and <time.h>" "no CUDA headers"
  skip "and with GNU extensions (where linux is a macro)" "no CUDA headers"
fi
if [ -n "${NVCC:-}" ]; then
  ok "nvcc compiles the .cu" "$NVCC" -c -gencode arch=compute_90,code=sm_90 names.cu -o names.o
else
  skip "nvcc compiles the .cu" "no nvcc"
fi
done_testing
