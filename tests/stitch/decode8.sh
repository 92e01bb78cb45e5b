#!/bin/sh
# decode8.sh — how the emitters decode 8-bit floats read from memory
# (emit_expr.c, cu_load_conv_of): where nothing can show a NaN's sign
# (ir_nan_sign_unseen: every use is arithmetic whose NaN result's sign
# IEEE 754 leaves open, a comparison or a class test, through broadcasts
# and widenings), the decode leaves the sign out
# (tecc::f8e4m3_to_f32_arith); a value stored, or read by abs, max,
# maximum or a select, keeps it, bit for bit PyTorch's decode.  And the
# block variant's threads for a row (tecc::row_threads: the warps a row
# of whole warps fills, else the power of two).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-decode8.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

cat > "$work/d.te" <<'TE'
kernel dq(q: f8e4m3[N, D], s: f32[N, 1], w: bf16[D]) -> y: bf16[N, D] {
    h = f32(q) * s
    y = bf16(h * rsqrt(mean(h * h, -1) + 1e-6) * f32(w))
}
kernel stored(q: f8e4m3[N]) -> y: f32[N] { y = f32(q) }
kernel absed(q: f8e4m3[N]) -> y: f32[N] { y = abs(f32(q)) }
kernel rowmax(q: f8e4m3[N, D]) -> y: f32[N, 1] { y = max(f32(q), -1) }
kernel both(q: f8e4m3[N]) -> (y: f32[N], z: f32[N]) {
    y = f32(q) + 1
    z = f32(q)
}
kernel centred(x: i8[N, D]) -> y: i8[N, D] { y = x - max(x, -1) }
kernel e5(e: f8e5m2[N, D]) -> (y: f32[N, 1], c: bool[N, D]) {
    y = sum(f32(e) * 2, -1)
    c = f32(e) > 0
}
TE
"$TECC" -O2 "$work/d.te" -o "$work/d.cu" || { echo "Bail out! tecc failed"; exit 1; }
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/d.cu"; }
arith() { kernel_text "$1" | grep -c "tecc::$2_to_f32_arith("; }
signed() { kernel_text "$1" | grep -c "tecc::$2_to_f32("; }

plan 22
ok "dequantize + RMSNorm: every decode without the sign" test "$(arith tecc_dq_g0_reg f8e4m3)" -gt 0 -a "$(signed tecc_dq_g0_reg f8e4m3)" -eq 0
ok "... in the stream kernel too" test "$(arith tecc_dq_g0_stream f8e4m3)" -gt 0 -a "$(signed tecc_dq_g0_stream f8e4m3)" -eq 0
is "$(arith tecc_stored_g0_loop f8e4m3)" 0 "f32(q) stored: no decode without the sign"
ok "... it keeps the sign" test "$(signed tecc_stored_g0_loop f8e4m3)" -gt 0
keeps() { test "$(arith "$1" f8e4m3)" -eq 0 -a "$(signed "$1" f8e4m3)" -gt 0; }
ok "abs(f32(q)): keeps the sign" keeps tecc_absed_g0_loop
ok "max(f32(q)): keeps the sign (max propagates the NaN)" keeps tecc_rowmax_g0_row
ok "one use stored, one added: keeps the sign" keeps tecc_both_g0_loop
ok "e5m2 summed and compared: without the sign" test "$(arith tecc_e5_g0_reg f8e5m2)" -gt 0 -a "$(signed tecc_e5_g0_reg f8e5m2)" -eq 0
ok "the runtime defines the decodes without the sign" grep -q '__device__ __forceinline__ float f8e4m3_to_f32_arith(uint8_t b)' "$work/d.cu"

# Quads: the held words, the body and its two kernels, the WHOLE launch.
ok "dq: the held f8 row four to a word" sh -c "sed -n '/void tecc_dq_g0_reg_body(/,/^}/p' '$work/d.cu' | grep -q 'uint32_t t_c0\[ROWS \* ITEMS \* VEC / 4\]; /\* four 8-bit elements a word \*/'"
ok "dq: each use decodes from the words" grep -q 'const float q_val = tecc::f8e4m3_quad_arith(t_c0, t_e);' "$work/d.cu"
ok "dq: the WHOLE kernel bound to 32 registers calls the body" grep -q '__global__ void TECC_QUADS_BOUND(1024, 32) tecc_dq_g0_reg_whole(.*) { tecc_dq_g0_reg_body<IndexT, ITEMS, VEC, ROWS, PACKS, WHOLE, CLUSTER, LANES>(q, s, w, y, N, D, t_rcount); }' "$work/d.cu"
ok "dq: the other instances' kernel, a block an SM for 32 lanes (and for LANES -1, of 128 threads)" grep -q '__global__ void __launch_bounds__(LANES < 0 ? 128 : 1024, LANES < 0 ? 1 : (LANES == 32 ? 1 : 0)) tecc_dq_g0_reg(' "$work/d.cu"
ok "dq: the WHOLE launch takes the _whole kernel" grep -q 'tecc_dq_g0_reg_whole<int32_t, 4, 8, 1, true, true, false, 0><<<' "$work/d.cu"
ok "i8 rows four to a word, sign-extended at each use" grep -q 'const int32_t x_val = (int32_t)(int8_t)tecc::quad_byte(t_c0, t_e);' "$work/d.cu"

# The block variant (schedule.c, variant_exact_rows) and only it fits the
# row's warps; the long variant, the stream and the warp keep powers of two.
"$TECC" -O2 --emit=plan "$work/d.te" -o "$work/d.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
ok "plan: the block variant's T is the row's whole warps" grep -q 'variant block (when R <= 32768 and 32-bit indices do): registers, VEC 8, ITEMS 4, block T x max(1, 128/T), T = R/32 where that is whole warps, else pow2 in \[32, 1024\] >= R/32' "$work/d.plan"
is "$(grep -c 'where that is whole warps' "$work/d.plan")" "$(grep -c 'variant block ' "$work/d.plan")" "plan: every block variant so, no other"
is "$(grep -c 'const int t_tx = tecc::row_threads(t_len, \(32\|64\), 1024);' "$work/d.cu")" 3 "launch: the block variants' threads from tecc::row_threads (dq, centred, e5)"
ok "runtime: row_threads gives whole warps only where the row fills them" grep -q 'return len > 0 && len % (32 \* (int64_t)per) == 0 && lanes <= hi ? (int)lanes : pow2_at_least(lanes, 32, hi);' "$work/d.cu"

# The warp variant of 16-bit rows that write 8-bit values along them holds
# 2 packs a thread (schedule.c, warp_items): rows up to 512; others 4.
cat > "$work/w.te" <<'TE'
kernel qb(x: bf16[N, G, 128]) -> (q: f8e4m3[N, G, 128], s: f32[N, G, 1]) {
    s = max(abs(f32(x)), -1) / 448
    q = f8e4m3(f32(x) / s)
}
kernel qf(x: f32[N, D]) -> (q: i8[N, D], s: f32[N, 1]) {
    s = max(abs(x), -1) / 127
    q = i8(round(x / s))
}
kernel nb(x: bf16[N, D]) -> y: bf16[N, D] { y = bf16(f32(x) * rsqrt(mean(f32(x) * f32(x), -1) + 1e-6)) }
TE
"$TECC" -O2 --emit=plan "$work/w.te" -o "$work/w.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
warp_of() { sed -n "/^kernel $1:/,/^kernel /p" "$work/w.plan" | grep -o 'variant warp (when R <= [0-9]*[^:]*: registers, VEC [0-9]*, ITEMS [0-9]*'; }
is "$(warp_of qb)" "variant warp (when R <= 512 and 32-bit indices do): registers, VEC 8, ITEMS 2" "plan: bf16 rows quantized to f8, the warp variant at 2 items"
is "$(warp_of qf)" "variant warp (when R <= 512 and 32-bit indices do): registers, VEC 4, ITEMS 4" "plan: f32 rows quantized to i8 keep 4 (VEC 4)"
is "$(warp_of nb)" "variant warp (when R <= 1024 and 32-bit indices do): registers, VEC 8, ITEMS 4" "plan: bf16 rows written as bf16 keep 4"
done_testing
