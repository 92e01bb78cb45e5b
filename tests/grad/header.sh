#!/bin/sh
# header.sh — a gradient kernel's entry point is declared like any other,
# with a second comment that says which kernel it is the gradient of
# (abi.md §1), and --emit=json names it as gradient_of (TAP).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-grad-header.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cat > "$work/norm.te" << 'TE'
kernel rmsnorm(x: bf16[N, D], w: bf16[D]) -> (y: bf16[N, D]) {
    xf = f32(x)
    y = bf16(xf * rsqrt(mean(xf * xf, -1) + 1e-6) * f32(w))
}
kernel rmsnorm_bwd = grad(rmsnorm)
TE
"$TECC" --emit=header "$work/norm.te" -o "$work/norm.h"
cat > "$work/want" << 'H'
/* kernel rmsnorm(x: bf16[N, D], w: bf16[D]) -> (y: bf16[N, D]) */
tecc_status rmsnorm(const tecc_bf16 *x, const tecc_bf16 *w, tecc_bf16 *y, int64_t N, int64_t D, cudaStream_t stream);

/* kernel rmsnorm_bwd(x: bf16[N, D], w: bf16[D], dy: bf16[N, D]) -> (dx: bf16[N, D], dw: bf16[D]) */
/* gradient of rmsnorm */
tecc_status rmsnorm_bwd(const tecc_bf16 *x, const tecc_bf16 *w, const tecc_bf16 *dy, tecc_bf16 *dx, tecc_bf16 *dw, int64_t N, int64_t D, cudaStream_t stream);
H
sed -n '/^\/\* kernel rmsnorm(/,/^tecc_status rmsnorm_bwd/p' "$work/norm.h" > "$work/got"
diff_ok "the header declares the gradient kernel, gradient of rmsnorm" "$work/want" "$work/got"
"$TECC" -w "$work/norm.te" -o "$work/norm.cu"
is "$(grep -c 'gradient of' "$work/norm.h")" 1 "the .cu's header: one gradient comment"
if have_jq; then
  "$TECC" --emit=json "$work/norm.te" -o "$work/norm.json"
  is "$("$JQ" -r '[.kernels[] | (.name + ":" + (.gradient_of // "-"))] | join(" ")' "$work/norm.json")" \
     "rmsnorm:- rmsnorm_bwd:rmsnorm" "--emit=json: gradient_of"
else
  skip "--emit=json: gradient_of" "no jq"
fi
done_testing
