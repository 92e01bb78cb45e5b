/* tecc_runtime.cuh — the device and host primitives that tecc's generated
 * code uses.  Embedded into tecc (build-aux/embed.sh); a generated .cu
 * carries the pieces it uses (lib/runtime.c), and the runtime tests
 * (tests/runtime/) compile the whole file on its own.
 *
 * Everything is inside an anonymous namespace: two generated files linked
 * into one program never clash.  Host helpers are `inline` so that an unused
 * one is not a warning.  Only cuda_runtime.h and <stdint.h> are used: the
 * 16-bit conversions are the cvt instructions cuda_fp16.h and cuda_bf16.h
 * wrap, written here, as those two headers were a fifth of an empty
 * kernel's nvcc time (0.45 s of softmax_bf16's 6.2; bench/NOTES.md). */
#ifndef TECC_RUNTIME_CUH
#define TECC_RUNTIME_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Unused helpers in an anonymous namespace are not worth a warning. */
#pragma nv_diag_suppress 177
namespace {
namespace tecc {

/* @piece f16_to_f32 f32_to_f16 bf16_to_f32 f32_to_bf16 round_f16 round_bf16 f64_to_f32_odd f64_to_f16 f64_to_bf16 */
/* ---- 16-bit storage types (uint16_t bit patterns) ---------------------- */

/* The instructions of cuda_fp16.h's __half2float and __float2half_rn and
 * cuda_bf16.h's __float2bfloat16_rn, in the same text (braces and all:
 * the optimizer sizes an asm by its text, and a bare cvt changed how a
 * GELU backward stream kernel of tests/grad/programs/grad_activations.te
 * was unrolled), so the same PTX; below sm_80, which has no cvt to bf16,
 * that header's rounding: to nearest, ties to even, a NaN to 0x7fff. */
__device__ __forceinline__ float f16_to_f32(uint16_t b) {
  float f;
  asm("{  cvt.f32.f16 %0, %1;}\n" : "=f"(f) : "h"(b));
  return f;
}
__device__ __forceinline__ uint16_t f32_to_f16(float f) {
  uint16_t b;
  asm("{  cvt.rn.f16.f32 %0, %1;}\n" : "=h"(b) : "f"(f));
  return b;
}
__device__ __forceinline__ float bf16_to_f32(uint16_t b) {
  return __uint_as_float((uint32_t)b << 16);
}
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t b;
  asm("{  cvt.rn.bf16.f32 %0, %1;}\n" : "=h"(b) : "f"(f));
  return b;
#else
  const uint32_t x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return 0x7fffu;
  const uint32_t rest = x << 16;
  const uint16_t b = (uint16_t)(x >> 16);
  return rest > 0x80000000u || (rest == 0x80000000u && (b & 1u)) ? (uint16_t)(b + 1u) : b;
#endif
}
/* An explicit cast to a 16-bit type rounds; the value stays in f32. */
__device__ __forceinline__ float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }
__device__ __forceinline__ float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }
/* f64 -> f32 rounding to odd: a later rounding to a 16-bit type then
 * gives the same result as rounding the double directly (no double
 * rounding), since f32 keeps more than two extra bits. */
__device__ __forceinline__ float f64_to_f32_odd(double d) {
  float f = __double2float_rz(d);
  if ((double)f != d && f == f && (f - f) == 0.0f) f = __int_as_float(__float_as_int(f) | 1);
  return f;
}
__device__ __forceinline__ uint16_t f64_to_f16(double d) { return f32_to_f16(f64_to_f32_odd(d)); }
__device__ __forceinline__ uint16_t f64_to_bf16(double d) { return f32_to_bf16(f64_to_f32_odd(d)); }

/* @piece f8e4m3_to_f32 f8e5m2_to_f32 f8e4m3_to_f32_arith f8e5m2_to_f32_arith f32_to_f8e4m3 f32_to_f8e5m2 f8e4m3x2_to_f32x2 f8e5m2x2_to_f32x2 f32_to_f8e4m3_pack f32_to_f8e5m2_pack f32_to_f8_pack f8_four_within f8_code f8_word f8_cvt_e4m3x4 f8_cvt_e5m2x4 round_f8e4m3 round_f8e5m2 f64_to_f8e4m3 f64_to_f8e5m2 f8e4m3_to_f32_soft f32_to_f8e4m3_soft f32_to_f8e5m2_soft @needs f16_to_f32 */
/* ---- 8-bit float storage types (uint8_t bit patterns) ------------------ */
/* f8e4m3 is torch.float8_e4m3fn (bias 7, no infinities, S.1111.111 NaN)
 * and f8e5m2 torch.float8_e5m2 (bias 15, IEEE-like: inf S.11111.00); both
 * are computed in f32.  A conversion from f32 gives the bits PyTorch's
 * x.to(dtype) gives for every float: to nearest, ties to even, subnormals
 * included, the sign kept (for zero and NaN too).  What does not fit: in
 * e4m3, |x| > 464 (past the tie between 448, the largest, and 480, where
 * code 0x7f would be: c10 rounds 464 < |x| < 480 into 0x7f, a NaN, not
 * to 448), inf and NaN give NaN 0x7f; in e5m2, |x| >= 61440 (the tie
 * between 57344 and 2^16, to even) and inf give inf 0x7c, NaN gives 0x7f.
 * sm_89 and newer convert two values in one cvt; before, the _soft
 * functions, integer arithmetic on the f32 bits, which the hardware path
 * must match bit for bit (tests/runtime/f8.sh, every float). */

/* The sign of x as the sign bit of a byte. */
__device__ __forceinline__ uint32_t f8_sign(float x) { return __float_as_uint(x) >> 24 & 0x80u; }

/* m / 2^sh rounded to nearest, ties to even; 1 <= sh <= 31, m < 2^31. */
__device__ __forceinline__ uint32_t f8_shift_rne(uint32_t m, int sh) {
  return (m + (1u << (sh - 1)) - 1u + (m >> sh & 1u)) >> sh;
}

/* The code of a = |x|'s bits (finite, not past the largest code) in a
 * format of `drop` fewer mantissa bits than f32 whose exponent is f32's
 * less `off` (e4m3: 20 and 120, e5m2: 21 and 112).  Normal results shift
 * the rebiased bits, a carry out of the mantissa stepping the exponent;
 * below the smallest normal, 2^(1 - bias), the mantissa with its implicit
 * bit shifts into the subnormal units (2^-9, 2^-16), a carry giving the
 * smallest normal's code.  f32 subnormals shift to 0 with the rest. */
__device__ __forceinline__ uint32_t f8_round_abs(uint32_t a, uint32_t off, int drop) {
  if (a >= (off + 1u) << 23) return f8_shift_rne(a - (off << 23), drop);
  const int sh = (int)(off + 1u) + drop - (int)(a >> 23);
  return f8_shift_rne((a & 0x7fffffu) | 0x800000u, sh < 31 ? sh : 31);
}

__device__ __forceinline__ uint8_t f32_to_f8e4m3_soft(float x) {
  const uint32_t a = __float_as_uint(x) & 0x7fffffffu;
  return (uint8_t)(f8_sign(x) | (a > 0x43e80000u /* 464 */ ? 0x7fu : f8_round_abs(a, 120, 20)));
}
__device__ __forceinline__ uint8_t f32_to_f8e5m2_soft(float x) {
  const uint32_t a = __float_as_uint(x) & 0x7fffffffu;
  const uint32_t r = a > 0x7f800000u ? 0x7fu : a >= 0x47700000u /* 61440 */ ? 0x7cu : f8_round_abs(a, 112, 21);
  return (uint8_t)(f8_sign(x) | r);
}

/* e4m3 -> f32: exponent 1 to 15 rebias (+120) in place; subnormals are
 * m 2^-9, by an int-to-float conversion and an exact product (not f32
 * subnormals, which -ftz would flush). */
__device__ __forceinline__ float f8e4m3_to_f32_soft(uint8_t b) {
  const uint32_t em = b & 0x7fu;
  float v = em >= 8u ? __uint_as_float((em << 20) + (120u << 23)) : (float)em * 0.001953125f;
  if (em == 0x7fu) v = __uint_as_float(0x7fc00000u);
  return __uint_as_float(__float_as_uint(v) | (uint32_t)(b & 0x80u) << 24);
}
/* The code's sign on f: the conversions give a NaN code the canonical
 * NaN, without the sign PyTorch's decode keeps (the other values have
 * theirs). */
__device__ __forceinline__ float f8_signed(float f, uint32_t code) {
  return __uint_as_float(__float_as_uint(f) | (code & 0x80u) << 24);
}
/* e5m2 is f16 without its low byte: f16 -> f32 is exact, inf included,
 * and a NaN's sign put back.  A byte move on every architecture, as cheap
 * as sm_89's cvt from e5m2x2, so there is no hardware path. */
__device__ __forceinline__ float f8e5m2_to_f32(uint8_t b) {
  return f8_signed(f16_to_f32((uint16_t)((unsigned)b << 8)), b);
}
__device__ __forceinline__ float2 f8e5m2x2_to_f32x2(uint16_t w) {
  return make_float2(f8e5m2_to_f32((uint8_t)w), f8e5m2_to_f32((uint8_t)(w >> 8)));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/* cvt of two floats: the first source goes to the high byte (PTX ISA). */
__device__ __forceinline__ uint32_t f8_cvt_e4m3x2(float hi, float lo) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t f8_cvt_e5m2x2(float hi, float lo) {
  uint16_t r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
/* satfinite gives the largest finite value where PyTorch gives NaN (e4m3)
 * or inf (e5m2), and a NaN without the input's sign: where |x| is past the
 * last value that rounds to a finite code, or NaN, the code PyTorch gives
 * instead (a compare and a select). */
__device__ __forceinline__ uint32_t f8e4m3_fix(float x, uint32_t b) {
  return ::fabsf(x) <= 464.0f ? b : f8_sign(x) | 0x7fu;
}
__device__ __forceinline__ uint32_t f8e5m2_fix(float x, uint32_t b) {
  return ::fabsf(x) < 61440.0f ? b : f8_sign(x) | (x != x ? 0x7fu : 0x7cu);
}
/* Two e4m3 codes (low byte the first) as f16x2, exact (a NaN unsigned). */
__device__ __forceinline__ uint32_t f8_cvt_f16x2_e4m3x2(uint16_t w) {
  uint32_t h;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(w));
  return h;
}
/* ... then f32, each NaN with its code's sign. */
__device__ __forceinline__ float2 f8_cvt_f32x2_e4m3x2(uint16_t w) {
  const uint32_t h = f8_cvt_f16x2_e4m3x2(w);
  return make_float2(f8_signed(f16_to_f32((uint16_t)h), w),
                     f8_signed(f16_to_f32((uint16_t)(h >> 16)), (uint32_t)w >> 8));
}
#endif

__device__ __forceinline__ uint8_t f32_to_f8e4m3(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return (uint8_t)f8e4m3_fix(x, f8_cvt_e4m3x2(0.0f, x) & 0xffu);
#else
  return f32_to_f8e4m3_soft(x);
#endif
}
__device__ __forceinline__ uint8_t f32_to_f8e5m2(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return (uint8_t)f8e5m2_fix(x, f8_cvt_e5m2x2(0.0f, x) & 0xffu);
#else
  return f32_to_f8e5m2_soft(x);
#endif
}
/* The N codes of a store pack (a value at a time below 4).  sm_89 and newer
 * convert two values a cvt, four to a word, and the word takes each
 * value's fix-up (f8e4m3_fix) only where one of its four values is past
 * the range or NaN, one test of the floats a word: the fix-up's compare,
 * select and sign were four instructions of about sixteen an element in
 * the quantization kernels (bench/NOTES.md, issue 49).  The test is of
 * the floats, not of the codes: a block scaled to 448 holds a code 0x7e
 * in every warp, and a branch on the codes made quant_block 12% slower. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/* Four values to a word of codes, a in the low byte (two cvts). */
__device__ __forceinline__ uint32_t f8_cvt_e4m3x4(float a, float b, float c, float d) {
  uint32_t w;
  asm("{\n .reg .b16 lo, hi;\n cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
      " mov.b32 %0, {lo, hi};\n}" : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));
  return w;
}
__device__ __forceinline__ uint32_t f8_cvt_e5m2x4(float a, float b, float c, float d) {
  uint32_t w;
  asm("{\n .reg .b16 lo, hi;\n cvt.rn.satfinite.e5m2x2.f32 lo, %2, %1;\n cvt.rn.satfinite.e5m2x2.f32 hi, %4, %3;\n"
      " mov.b32 %0, {lo, hi};\n}" : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));
  return w;
}
#endif
/* All four |f[i]| <= lim (false for a NaN). */
__device__ __forceinline__ bool f8_four_within(const float *f, float lim) {
  return (::fabsf(f[0]) <= lim) & (::fabsf(f[1]) <= lim) & (::fabsf(f[2]) <= lim) & (::fabsf(f[3]) <= lim);
}
/* One code of e4m3 (E5 false) or e5m2 (E5 true), and a word of four. */
template <bool E5> __device__ __forceinline__ uint32_t f8_code(float x) {
  return E5 ? f32_to_f8e5m2(x) : f32_to_f8e4m3(x);
}
template <bool E5> __device__ __forceinline__ uint32_t f8_word(const float *f) {
  return f8_code<E5>(f[0]) | f8_code<E5>(f[1]) << 8 | f8_code<E5>(f[2]) << 16 | f8_code<E5>(f[3]) << 24;
}
template <bool E5, int N> __device__ __forceinline__ void f32_to_f8_pack(const float *f, uint8_t *out) {
  int i = 0;
  #pragma unroll
  for (; i + 4 <= N; i += 4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    /* within these bounds the cvt's bits are PyTorch's (the fix-ups' own
     * bounds: e4m3 464; e5m2 61440, of which its largest value 57344 is
     * taken, a value between going the value-at-a-time way, same bits) */
    const bool plain = f8_four_within(f + i, E5 ? 57344.0f : 464.0f);
    const uint32_t w = !plain ? f8_word<E5>(f + i)
                       : E5   ? f8_cvt_e5m2x4(f[i], f[i + 1], f[i + 2], f[i + 3])
                              : f8_cvt_e4m3x4(f[i], f[i + 1], f[i + 2], f[i + 3]);
#else
    const uint32_t w = f8_word<E5>(f + i);
#endif
    __builtin_memcpy(out + i, &w, 4);
  }
  #pragma unroll
  for (; i < N; i++) out[i] = (uint8_t)f8_code<E5>(f[i]); /* packs of 1 or 2 (f32 beside f64) */
}
template <int N> __device__ __forceinline__ void f32_to_f8e4m3_pack(const float *f, uint8_t *out) {
  f32_to_f8_pack<false, N>(f, out);
}
template <int N> __device__ __forceinline__ void f32_to_f8e5m2_pack(const float *f, uint8_t *out) {
  f32_to_f8_pack<true, N>(f, out);
}

__device__ __forceinline__ float f8e4m3_to_f32(uint8_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return f8_cvt_f32x2_e4m3x2(b).x;
#else
  return f8e4m3_to_f32_soft(b);
#endif
}
/* The decodes of a value that only arithmetic, comparisons and class
 * tests read (ir_nan_sign_unseen, lib/ir.c): the same numbers, but a NaN
 * code gives a NaN of either sign, which IEEE 754 leaves open for an
 * arithmetic result.  The sign's fix-up took two instructions of about
 * twenty an element: dequantize + RMSNorm 8192 x 4096 went from 28.5 to
 * 27.2 us of kernel time on an H200 (bench/NOTES.md, issue 49). */
__device__ __forceinline__ float f8e4m3_to_f32_arith(uint8_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return f16_to_f32((uint16_t)f8_cvt_f16x2_e4m3x2(b));
#else
  return f8e4m3_to_f32_soft(b);
#endif
}
__device__ __forceinline__ float f8e5m2_to_f32_arith(uint8_t b) {
  return f16_to_f32((uint16_t)((unsigned)b << 8));
}
/* The two codes of a load, the low byte's in .x. */
__device__ __forceinline__ float2 f8e4m3x2_to_f32x2(uint16_t w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return f8_cvt_f32x2_e4m3x2(w);
#else
  return make_float2(f8e4m3_to_f32_soft((uint8_t)w), f8e4m3_to_f32_soft((uint8_t)(w >> 8)));
#endif
}

/* An explicit cast to an 8-bit float rounds; the value stays in f32. */
__device__ __forceinline__ float round_f8e4m3(float f) { return f8e4m3_to_f32(f32_to_f8e4m3(f)); }
__device__ __forceinline__ float round_f8e5m2(float f) { return f8e5m2_to_f32(f32_to_f8e5m2(f)); }
/* f64 -> f8 as PyTorch does it: the double to float first, to nearest
 * ((float)d), then to f8.  Two roundings (a double just off an f8 tie can
 * land on it and go to even), unlike f64_to_f16's rounding to odd: the
 * point is the same bits as torch's float64 -> float8. */
__device__ __forceinline__ uint8_t f64_to_f8e4m3(double d) { return f32_to_f8e4m3((float)d); }
__device__ __forceinline__ uint8_t f64_to_f8e5m2(double d) { return f32_to_f8e5m2((float)d); }

/* @piece exp exp2 expm1 log log2 log10 log1p sqrt rsqrt asin acos atan sinh cosh tanh erf floor ceil round trunc fabs */
/* ---- float math: one name, f32 and f64 overloads ----------------------- */

#define TECC_MATH1(name, f32fn, f64fn)                                   \
  __device__ __forceinline__ float name(float x) { return f32fn(x); }    \
  __device__ __forceinline__ double name(double x) { return f64fn(x); }
/* exp in f32 is 2^(x log2 e) by the SFU (ex2.approx.ftz), two instructions
 * where expf takes about eight.  Its relative error is below 2^-22 + |x| 2^-24
 * (the rounding of x log2 e), inside abi.md section 6: the magnitude
 * bound of exp(a) is e^a (1 + |a|) and more.  Results under 2^-126 flush
 * to 0 (an absolute error below 1.2e-38).  Softmax, logsumexp and card
 * rows in bf16 gained 1 to 7 points of copy bandwidth on an H100
 * (bench/NOTES.md, issue 12). */
__device__ __forceinline__ float ex2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float exp(float x) { return ex2_approx(x * 1.4426950408889634f); }
__device__ __forceinline__ double exp(double x) { return ::exp(x); }
TECC_MATH1(exp2, ::exp2f, ::exp2)
TECC_MATH1(expm1, ::expm1f, ::expm1)
TECC_MATH1(log, ::logf, ::log)
TECC_MATH1(log2, ::log2f, ::log2)
TECC_MATH1(log10, ::log10f, ::log10)
TECC_MATH1(log1p, ::log1pf, ::log1p)
TECC_MATH1(sqrt, ::sqrtf, ::sqrt)
TECC_MATH1(rsqrt, ::rsqrtf, ::rsqrt)
TECC_MATH1(asin, ::asinf, ::asin)
TECC_MATH1(acos, ::acosf, ::acos)
TECC_MATH1(atan, ::atanf, ::atan)
TECC_MATH1(sinh, ::sinhf, ::sinh)
TECC_MATH1(cosh, ::coshf, ::cosh)
TECC_MATH1(tanh, ::tanhf, ::tanh)
TECC_MATH1(erf, ::erff, ::erf)
TECC_MATH1(floor, ::floorf, ::floor)
TECC_MATH1(ceil, ::ceilf, ::ceil)
TECC_MATH1(round, ::rintf, ::rint) /* half to even */
TECC_MATH1(trunc, ::truncf, ::trunc)
TECC_MATH1(fabs, ::fabsf, ::fabs)
#undef TECC_MATH1

/* @piece sin cos tan */
/* ---- sin, cos, tan: tecc's own, in registers -------------------------- */
/* CUDA's sin, cos and tan reduce a huge argument (Payne-Hanek) through an
 * array in local memory, which gave every kernel calling them a stack frame
 * (issue 45); these index nothing but constant tables.  The host runs the
 * same code (tests/runtime/trig.sh): every rounding is written out, fma
 * included, so that host and device agree.
 *
 * x = j pi/2 + r with |r| <= pi/4 (a hair more): sin x is sin r, cos r,
 * -sin r or -cos r by j mod 4.  Up to a moderate |x|, j is x 2/pi rounded
 * by adding 1.5 2^p (p the precision: the integer lands in the low bits of
 * the sum, with no conversion instruction), and r = x - j pi/2 with pi/2 in
 * three parts (Cody-Waite): x - j C1 is exact, C2 and C3 give back what C1
 * lacks; each part is below what is left of pi/2, so that for j = 0 every
 * step adds -0 and sin(-0) stays -0.  Past that bound the bits of 2/pi that
 * matter multiply the mantissa exactly, as integers (Payne-Hanek): the bits
 * before them give multiples of 4, those after them cannot move r.  sin r,
 * cos r and tan r are minimax polynomials in r^2 on [-pi/4, pi/4] (Remez on
 * the relative error, coefficients rounded one at a time and the rest
 * refitted); odd j gives -1/tan r.  The largest errors found: f32 sin and
 * cos 1.56 ulp, tan 0.98 (every float); f64 sin and cos 1.51, tan 0.93
 * (10^7 samples of every exponent). */

__host__ __device__ __forceinline__ float trig_fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return ::fmaf(a, b, c);
#endif
}
__host__ __device__ __forceinline__ double trig_fma(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return ::fma(a, b, c);
#endif
}
/* Products and sums that nvcc may not contract into an fma. */
__host__ __device__ __forceinline__ float trig_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ __forceinline__ double trig_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ __forceinline__ float trig_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ __forceinline__ double trig_add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ __forceinline__ uint32_t trig_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
#endif
}
__host__ __device__ __forceinline__ uint64_t trig_bits(double d) {
#ifdef __CUDA_ARCH__
  return (uint64_t)__double_as_longlong(d);
#else
  uint64_t u;
  __builtin_memcpy(&u, &d, sizeof u);
  return u;
#endif
}
__host__ __device__ __forceinline__ float trig_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
#endif
}
__host__ __device__ __forceinline__ double trig_double(uint64_t u) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double((long long)u);
#else
  double d;
  __builtin_memcpy(&d, &u, sizeof d);
  return d;
#endif
}
/* a != 0 */
__host__ __device__ __forceinline__ int trig_clz(uint64_t a) {
#ifdef __CUDA_ARCH__
  return __clzll((long long)a);
#else
  return __builtin_clzll(a);
#endif
}

/* 2/pi: word k holds bits 32k - 31 to 32k after the point; word 0, the
 * bits before it, is 0.  Enough for any exponent of a double. */
#define TECC_TWO_OVER_PI \
  0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, \
  0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, \
  0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, \
  0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, \
  0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, \
  0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, \
  0x1f8d5d08u, 0x56033046u
__device__ const uint32_t trig_two_over_pi_dev[38] = {TECC_TWO_OVER_PI};
const uint32_t trig_two_over_pi_host[38] = {TECC_TWO_OVER_PI};
#undef TECC_TWO_OVER_PI
__host__ __device__ __forceinline__ uint64_t trig_two_over_pi(int k) {
#ifdef __CUDA_ARCH__
  return trig_two_over_pi_dev[k];
#else
  return trig_two_over_pi_host[k];
#endif
}
/* Bits sh to sh + 31 of (hi lo), 1 <= sh <= 32. */
__host__ __device__ __forceinline__ uint32_t trig_funnel(uint32_t lo, uint32_t hi, int sh) {
  return (uint32_t)(((uint64_t)hi << 32 | lo) >> sh);
}

/* The polynomials of sin r (r + r^3 S(r^2)) and cos r (1 + r^2 C(r^2),
 * C's last coefficient -1/2) for f64 as one Horner chain in r^2, sin's
 * with a leading 0: A0 ... A6, then a pad; two coefficients a load. */
#define TECC_SINCOS_F64                                                          \
  {0.0, 1.58985037130787707e-10}, {-2.50507921449285486e-08, 2.75573139498652434e-06}, \
      {-1.98412698307251701e-04, 8.33333333332391367e-03},                       \
      {-1.66666666666666408e-01, 0.0},                                            \
      {-1.13653708435261777e-11, 2.08758449468885747e-09},                       \
      {-2.75573153513345881e-07, 2.48015872934115193e-05},                       \
      {-1.38888888888814496e-03, 4.16666666666666505e-02}, {-0.5, 0.0}
__device__ const double2 trig_sincos_f64_dev[8] = {TECC_SINCOS_F64};
const double2 trig_sincos_f64_host[8] = {TECC_SINCOS_F64};
#undef TECC_SINCOS_F64
__host__ __device__ __forceinline__ const double2 *trig_sincos_f64(int cos) {
#ifdef __CUDA_ARCH__
  return trig_sincos_f64_dev + 4 * cos;
#else
  return trig_sincos_f64_host + 4 * cos;
#endif
}

/* x = (j + 4k) pi/2 + r; q is j (mod 4); tan's r + rr (rr 0 for sin and
 * cos, but past Payne-Hanek). */
struct TrigArgF { float r, rr; int q; };
struct TrigArgD { double r, rr; int q; };

/* |x| >= 105615, x finite: x = m 2^e with m the 24-bit mantissa; 128 bits
 * of 2/pi from word i on, where 2 <= d = e - 32 (i - 1) <= 33, give
 * x 2/pi mod 4 to 2^-71 (m times the words before is a multiple of 4).
 * m (w0 w1 w2 w3) in 32-bit limbs, from the last word on, keeping only the
 * limbs l1 to l3 that hold the unit (bit 128 - d) and what follows it: a
 * loop, not unrolled, so that this rare path holds few registers beside
 * the other elements of a vectorized loop (CUDA's holds a local array). */
__host__ __device__ __forceinline__ TrigArgF trig_reduce_big(float x) {
  const uint32_t u = trig_bits(x) & 0x7fffffffu;
  const int e = (int)(u >> 23) - 150;
  const uint64_t m = (u & 0x7fffffu) | 0x800000u;
  const int i = (e + 30) >> 5, d = e + 32 - 32 * i;
  uint64_t t = 0;
  uint32_t l1 = 0, l2 = 0, l3 = 0;
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int k = i + 3; k >= i; k--) {
    t = m * trig_two_over_pi(k) + (t >> 32);
    l1 = l2;
    l2 = l3;
    l3 = (uint32_t)t;
  }
  /* bits 66 - d to 129 - d: the quadrant on top, then the fraction */
  const uint64_t w = (uint64_t)trig_funnel(l2, l3, 34 - d) << 32 | trig_funnel(l1, l2, 34 - d);
  TrigArgF a;
  a.q = (int)((w + (1ull << 61)) >> 62); /* to the nearest quarter turn */
  const int64_t f = (int64_t)(w << 2);    /* what is left, 2^-64 of one */
  const double r = trig_mul((double)f, 8.51530395021638614e-20); /* pi/2 2^-64 */
  a.r = (float)r;
  a.rr = (float)trig_add(r, -(double)a.r);
  if (x < 0.0f) {
    a.r = -a.r;
    a.rr = -a.rr;
    a.q = -a.q;
  }
  return a;
}

/* Cody-Waite below 105615 (CUDA's bound too: for j < 2^16 the three parts,
 * 73 bits of pi/2, are enough for every float, checked).  sin
 * and cos take r from three fmas, as CUDA does, within about an ulp of r.
 * tan, whose -1/tan r keeps the relative error of r, takes r + rr:
 * r = r1 - RN(j C2) and its error.  r - r1 is exact (r1 is a multiple of
 * 2^-24, and so of the ulp of j C2, below 2^-8), so -j C2 - (r - r1) rounds
 * once; -(r - r1), not r1 - r: -0 for x = -0.  NaN stays on this path and
 * comes out NaN; inf is NaN. */
__host__ __device__ __forceinline__ TrigArgF trig_reduce(float x, bool tail) {
  const float t = trig_fma(x, 6.366197467e-01f, 12582912.0f);
  const float j = trig_add(t, -12582912.0f);
  TrigArgF a;
  a.q = (int)trig_bits(t);
  const float r1 = trig_fma(j, -1.570796251e+00f, x);
  if (tail) {
    a.r = trig_add(r1, -trig_mul(j, 7.549789416e-08f));
    a.rr = trig_fma(j, -7.549789416e-08f, -trig_add(a.r, -r1));
    a.rr = trig_fma(j, -5.390302953e-15f, a.rr);
  } else {
    a.r = trig_fma(j, -7.549789416e-08f, r1);
    a.r = trig_fma(j, -5.390302953e-15f, a.r);
    a.rr = 0.0f;
  }
  if (::fabsf(x) >= 105615.0f) {
    if ((trig_bits(x) & 0x7fffffffu) >= 0x7f800000u) {
      a.r = x - x;
      a.rr = 0.0f;
      a.q = 0;
    } else {
      a = trig_reduce_big(x);
    }
  }
  return a;
}

/* sin r for even q, cos r for odd, negated for q mod 4 >= 2: both
 * polynomials, then a select (fewer instructions than picking each
 * coefficient by q): sin r + r^3 (S1 + r^2 (S2 + r^2 S3)), r^3 as an fma
 * with +0 so that sin(-0) is -0, and cos 1 + r^2 (-1/2 + r^2 (C1 + ...)). */
__host__ __device__ __forceinline__ float trig_sincos(TrigArgF a) {
  const float x2 = trig_mul(a.r, a.r);
  float s = trig_fma(-1.950788283e-04f, x2, 8.332106285e-03f);
  s = trig_fma(s, x2, -1.666665375e-01f);
  s = trig_fma(s, trig_fma(x2, a.r, 0.0f), a.r);
  float c = trig_fma(2.446038343e-05f, x2, -1.388760284e-03f);
  c = trig_fma(c, x2, 4.166665301e-02f);
  c = trig_fma(c, x2, -0.5f);
  c = trig_fma(c, x2, 1.0f);
  return trig_float(trig_bits((a.q & 1) ? c : s) ^ ((uint32_t)a.q << 30 & 0x80000000u));
}

/* tan r = r + r^3 T(r^2); -1/tan r for odd q. */
__host__ __device__ __forceinline__ float trig_tan(TrigArgF a) {
  const float x2 = trig_mul(a.r, a.r), x3 = trig_mul(x2, a.r);
  float p = 4.349488299e-03f;
  p = trig_fma(p, x2, 1.657864050e-04f);
  p = trig_fma(p, x2, 1.075356640e-02f);
  p = trig_fma(p, x2, 2.132530697e-02f);
  p = trig_fma(p, x2, 5.404842645e-02f);
  p = trig_fma(p, x2, 1.333280802e-01f);
  p = trig_fma(p, x2, 3.333334327e-01f);
  const float t = trig_fma(x3, p, a.r);
  float tl = trig_fma(x3, p, -trig_add(t, -a.r));
  tl = trig_fma(a.rr, trig_fma(t, t, 1.0f), tl);
  const float th = trig_add(t, tl);
  if (!(a.q & 1)) return th;
  const float q0 = -1.0f / th;
  const float e = trig_fma(q0, trig_add(tl, -trig_add(th, -t)), trig_fma(q0, th, 1.0f));
  return trig_fma(q0, e, q0);
}

__host__ __device__ __forceinline__ float sin(float x) { return trig_sincos(trig_reduce(x, false)); }
__host__ __device__ __forceinline__ float cos(float x) {
  TrigArgF a = trig_reduce(x, false);
  a.q += 1; /* cos x = sin(x + pi/2) */
  return trig_sincos(a);
}
__host__ __device__ __forceinline__ float tan(float x) { return trig_tan(trig_reduce(x, true)); }

/* |x| >= 2^31, x finite: as for f32 with the 53-bit mantissa (ml and mh
 * its 32-bit halves) and 224 bits of 2/pi (x 2/pi mod 4 to 2^-138),
 * keeping 128 bits of the result: a double comes within 2^-61 quarter
 * turn of a multiple of pi/2 (at 6381956970095103 2^797), so r still has
 * 60 bits after that.  The unit of m (w0 ... w6) is bit 224 - d, in l6. */
__host__ __device__ __forceinline__ TrigArgD trig_reduce_big(double x) {
  const uint64_t u = trig_bits(x) & 0x7fffffffffffffffull;
  const int e = (int)(u >> 52) - 1075;
  const uint64_t m = (u & 0xfffffffffffffull) | 0x10000000000000ull;
  const uint64_t ml = m & 0xffffffffu, mh = m >> 32;
  const int i = (e + 30) >> 5, d = e + 32 - 32 * i;
  /* ml (w0 ... w6) into a1 to a6, then mh (w1 ... w6) added a limb up */
  uint64_t t = ml * trig_two_over_pi(i + 6);
  t = ml * trig_two_over_pi(i + 5) + (t >> 32);
  const uint32_t a1 = (uint32_t)t;
  t = ml * trig_two_over_pi(i + 4) + (t >> 32);
  const uint32_t a2 = (uint32_t)t;
  t = ml * trig_two_over_pi(i + 3) + (t >> 32);
  const uint32_t a3 = (uint32_t)t;
  t = ml * trig_two_over_pi(i + 2) + (t >> 32);
  const uint32_t a4 = (uint32_t)t;
  t = ml * trig_two_over_pi(i + 1) + (t >> 32);
  const uint32_t a5 = (uint32_t)t;
  const uint32_t a6 = (uint32_t)ml * (uint32_t)trig_two_over_pi(i) + (uint32_t)(t >> 32);
  t = mh * trig_two_over_pi(i + 6) + a1;
  t = mh * trig_two_over_pi(i + 5) + a2 + (t >> 32);
  const uint32_t l2 = (uint32_t)t;
  t = mh * trig_two_over_pi(i + 4) + a3 + (t >> 32);
  const uint32_t l3 = (uint32_t)t;
  t = mh * trig_two_over_pi(i + 3) + a4 + (t >> 32);
  const uint32_t l4 = (uint32_t)t;
  t = mh * trig_two_over_pi(i + 2) + a5 + (t >> 32);
  const uint32_t l5 = (uint32_t)t;
  const uint32_t l6 = (uint32_t)mh * (uint32_t)trig_two_over_pi(i + 1) + a6 + (uint32_t)(t >> 32);
  /* bits 98 - d to 225 - d: the quadrant on top, then the fraction */
  const int sh = 34 - d;
  const uint64_t hi = (uint64_t)trig_funnel(l5, l6, sh) << 32 | trig_funnel(l4, l5, sh);
  const uint64_t lo = (uint64_t)trig_funnel(l3, l4, sh) << 32 | trig_funnel(l2, l3, sh);
  TrigArgD a;
  a.q = (int)((hi + (1ull << 61)) >> 62);
  /* the fraction, a signed quarter turn in units of 2^-128, as sign and
   * magnitude, normalized: (fh fl) 2^-n */
  uint64_t fh = hi << 2 | lo >> 62, fl = lo << 2;
  const bool neg = (int64_t)fh < 0;
  if (neg) {
    fl = 0 - fl;
    fh = ~fh + (fl == 0);
  }
  int n = 0;
  if (fh == 0) { /* not for a double (above); fl != 0 then */
    fh = fl;
    fl = 0;
    n = 64;
  }
  const int z = trig_clz(fh);
  if (z) {
    fh = fh << z | fl >> (64 - z);
    fl <<= z;
  }
  n += z;
  /* (fh fl) 2^-128 = h + l, h with fh's top 53 bits; times pi/2 */
  const double h = trig_mul((double)(fh >> 11), 1.1102230246251565e-16);          /* 2^-53 */
  const double l = trig_mul((double)(fh << 53 | fl >> 11), 6.018531076210112e-36); /* 2^-117 */
  const double p = trig_mul(h, 1.57079632679489656e+00);
  double pe = trig_fma(h, 1.57079632679489656e+00, -p);
  pe = trig_fma(h, 6.12323399573676604e-17, pe);
  pe = trig_fma(l, 1.57079632679489656e+00, pe);
  const double s = trig_double((uint64_t)(1023 - n) << 52); /* 2^-n */
  const double r = trig_add(p, pe);
  a.r = trig_mul(r, s);
  a.rr = trig_mul(trig_add(pe, -trig_add(r, -p)), s);
  if (neg != (x < 0.0)) {
    a.r = -a.r;
    a.rr = -a.rr;
  }
  if (x < 0.0) a.q = -a.q;
  return a;
}

/* As for f32, below 2^31 (CUDA's bound too; r1 is a multiple of 2^-53,
 * j C2 below 2^-23). */
__host__ __device__ __forceinline__ TrigArgD trig_reduce(double x, bool tail) {
  const double t = trig_fma(x, 6.36619772367581382e-01, 6755399441055744.0);
  const double j = trig_add(t, -6755399441055744.0);
  TrigArgD a;
  a.q = (int)(uint32_t)trig_bits(t);
  const double r1 = trig_fma(j, -1.57079632679489656e+00, x);
  if (tail) {
    a.r = trig_add(r1, -trig_mul(j, 6.12323399573676480e-17));
    a.rr = trig_fma(j, -6.12323399573676480e-17, -trig_add(a.r, -r1));
    a.rr = trig_fma(j, -1.08285667392191403e-32, a.rr);
  } else {
    a.r = trig_fma(j, -6.12323399573676480e-17, r1);
    a.r = trig_fma(j, -1.08285667392191403e-32, a.r);
    a.rr = 0.0;
  }
  if (::fabs(x) >= 2147483648.0) {
    if ((trig_bits(x) & 0x7fffffffffffffffull) >= 0x7ff0000000000000ull) {
      a.r = x - x;
      a.rr = 0.0;
      a.q = 0;
    } else {
      a = trig_reduce_big(x);
    }
  }
  return a;
}

/* As for f32: f + f r^2 z, f = +-1 or +-r, z the chain's end. */
__host__ __device__ __forceinline__ double trig_sincos(TrigArgD a) {
  const bool c = (a.q & 1) != 0;
  const double2 *k = trig_sincos_f64(c);
  const double x2 = trig_mul(a.r, a.r);
  double z = trig_fma(k[0].x, x2, k[0].y);
  z = trig_fma(z, x2, k[1].x);
  z = trig_fma(z, x2, k[1].y);
  z = trig_fma(z, x2, k[2].x);
  z = trig_fma(z, x2, k[2].y);
  z = trig_fma(z, x2, k[3].x);
  const double f = trig_double(trig_bits(c ? 1.0 : a.r) ^ ((uint64_t)a.q << 62 & 0x8000000000000000ull));
  return trig_fma(z, trig_fma(x2, f, 0.0), f);
}

/* tan (r + rr) = t + tl, t = r + r^3 T(r^2) and tl its rounding error plus
 * rr (1 + t^2); -1/(t + tl) for odd q as q0 (1 + e), q0 = -1/t and e the
 * residual 1 + q0 (t + tl). */
__host__ __device__ __forceinline__ double trig_tan(TrigArgD a) {
  const double x2 = trig_mul(a.r, a.r), x3 = trig_mul(x2, a.r);
  double p = 9.58318325139605007e-06;
  p = trig_fma(p, x2, -2.32714610872775048e-05);
  p = trig_fma(p, x2, 4.65371442008072315e-05);
  p = trig_fma(p, x2, -2.30161318206580383e-05);
  p = trig_fma(p, x2, 6.50567817300110816e-05);
  p = trig_fma(p, x2, 8.48099670720408764e-05);
  p = trig_fma(p, x2, 2.43232936622342312e-04);
  p = trig_fma(p, x2, 5.89019869121972395e-04);
  p = trig_fma(p, x2, 1.45601196335945786e-03);
  p = trig_fma(p, x2, 3.59210604969079734e-03);
  p = trig_fma(p, x2, 8.86323737162714176e-03);
  p = trig_fma(p, x2, 2.18694884381097840e-02);
  p = trig_fma(p, x2, 5.39682539712321996e-02);
  p = trig_fma(p, x2, 1.33333333333291615e-01);
  p = trig_fma(p, x2, 3.33333333333333481e-01);
  const double t = trig_fma(x3, p, a.r);
  double tl = trig_fma(x3, p, -trig_add(t, -a.r));
  tl = trig_fma(a.rr, trig_fma(t, t, 1.0), tl);
  const double th = trig_add(t, tl);
  if (!(a.q & 1)) return th;
  const double q0 = -1.0 / th;
  const double e = trig_fma(q0, trig_add(tl, -trig_add(th, -t)), trig_fma(q0, th, 1.0));
  return trig_fma(q0, e, q0);
}

__host__ __device__ __forceinline__ double sin(double x) { return trig_sincos(trig_reduce(x, false)); }
__host__ __device__ __forceinline__ double cos(double x) {
  TrigArgD a = trig_reduce(x, false);
  a.q += 1;
  return trig_sincos(a);
}
__host__ __device__ __forceinline__ double tan(double x) { return trig_tan(trig_reduce(x, true)); }

/* @piece pow atan2 fmod copysign */
__device__ __forceinline__ float pow(float a, float b) { return ::powf(a, b); }
__device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float atan2(float a, float b) { return ::atan2f(a, b); }
__device__ __forceinline__ double atan2(double a, double b) { return ::atan2(a, b); }
__device__ __forceinline__ float fmod(float a, float b) { return ::fmodf(a, b); }
__device__ __forceinline__ double fmod(double a, double b) { return ::fmod(a, b); }
__device__ __forceinline__ float copysign(float a, float b) { return ::copysignf(a, b); }
__device__ __forceinline__ double copysign(double a, double b) { return ::copysign(a, b); }

/* @piece sigmoid silu normcdf gelu gelu_tanh softplus @needs exp erf tanh log1p fabs */
template <typename T> __device__ __forceinline__ T sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}
/* In f32 the reciprocal by the SFU (rcp.approx, within 1 ulp) where the
 * division rounds correctly through a Newton step and a check for its slow
 * path: 1 + e^-x is at least 1 (or inf: 0, or NaN). */
__device__ __forceinline__ float rcp_approx(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
__device__ __forceinline__ float sigmoid(float x) {
  return rcp_approx(1.0f + exp(-x));
}
template <typename T> __device__ __forceinline__ T silu(T x) {
  return x * sigmoid(x);
}
template <typename T> __device__ __forceinline__ T gelu(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)));
}
/* normcdf(x) = (1 + erf(x / sqrt(2))) / 2, the normal distribution's cdf:
 * gelu(x) = x normcdf(x), and gelu's gradient is normcdf(x) + x pdf(x)
 * (lib/grad_rules.c; normcdf is an operation only the grad pass writes). */
template <typename T> __device__ __forceinline__ T normcdf(T x) {
  return T(0.5) * ::erfc(x * T(-0.70710678118654752440));
}
/* In f32 through erfc, which needs no branch and no cancellation: with
 * t = |x| / sqrt(2), 1 + erf(x / sqrt(2)) is erfc(t) for x < 0 and
 * 2 - erfc(t) otherwise, so normcdf(x) = 1 - h or h, h = erfc(t) / 2.
 * erfc(t) = tau e^(P(tau) - t^2) with tau = 1 / (1 + 0.3 t), P a degree-7
 * polynomial fitted to log(erfc(t) / tau) + t^2 over t in [0, 5.6]
 * (relative error 1.4e-7); Q below is (P - ln 2) log2 e, so that one ex2
 * gives h.  CUDA's erff runs two polynomials and an exp in every warp whose
 * x fall on both sides of its branch; this is one rcp, one ex2 and 11 FMAs,
 * and gelu of a bf16 row was bound by the issue rate (bench/NOTES.md,
 * issue 48).  Every float against float64 (tests/runtime/activations.sh):
 * gelu within a 20th of abi.md's f32 tolerance, and in relative terms far
 * closer than 1 + erff below -3, where that sum cancels. */
__device__ __forceinline__ float normcdf(float x) {
  const float tau = rcp_approx(::fmaf(::fabsf(x), 0.21213203436f, 1.0f)); /* 0.3 t */
  float q = 0.7594989538f;
  q = ::fmaf(q, tau, -3.1328520775f);
  q = ::fmaf(q, tau, 4.7101550102f);
  q = ::fmaf(q, tau, -3.5936391354f);
  q = ::fmaf(q, tau, 2.1622292995f);
  q = ::fmaf(q, tau, 0.1386964321f);
  q = ::fmaf(q, tau, 1.5240288973f);
  q = ::fmaf(q, tau, -3.5681171417f);
  const float h = tau * ex2_approx(::fmaf(x * -0.72134752044f, x, q)); /* q - t^2 log2 e */
  return x > 0.0f ? 1.0f - h : h;
}
__device__ __forceinline__ float gelu(float x) {
  return x * normcdf(x);
}
template <typename T> __device__ __forceinline__ T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588); /* sqrt(2/pi) */
  return T(0.5) * x * (T(1) + tanh(k * (x + T(0.044715) * x * x * x)));
}
/* In f32 as x sigmoid(2y), y = k (x + 0.044715 x^3): 1 + tanh(y) is
 * 2 / (1 + e^-2y), so gelu_tanh(x) = x / (1 + 2^(x (c1 + c2 x^2))), four
 * FMAs, an ex2 and an rcp where tanhf branches on |y| and 1 + tanh(y)
 * cancels for y < -3.  tests/runtime/activations.sh: every float. */
__device__ __forceinline__ float gelu_tanh(float x) {
  /* c1 = -2 k log2 e, c2 = 0.044715 c1 */
  return x * rcp_approx(1.0f + ex2_approx(x * ::fmaf(x * x, -0.10294324f, -2.3022082f)));
}
/* log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|). */
template <typename T> __device__ __forceinline__ T softplus(T x) {
  if (x != x) return x;
  return (x > T(0) ? x : T(0)) + log1p(exp(-fabs(x)));
}

/* @piece add sub mul fma */
/* ---- integer arithmetic: wrapping, Python // and %, exact ** ---------- */

#define TECC_WRAP(name, op)                                                 \
  __device__ __forceinline__ int32_t name(int32_t a, int32_t b) {          \
    return (int32_t)((uint32_t)a op (uint32_t)b);                          \
  }                                                                         \
  __device__ __forceinline__ int64_t name(int64_t a, int64_t b) {          \
    return (int64_t)((uint64_t)a op (uint64_t)b);                          \
  }                                                                         \
  __device__ __forceinline__ float name(float a, float b) { return __f##name##_rn(a, b); } \
  __device__ __forceinline__ double name(double a, double b) { return __d##name##_rn(a, b); }
/* Floating +, - and * round to nearest and are never merged into an FMA:
 * nvcc contracts a*b + c where the code's shape allows, and the shape of a
 * packed, a scalar and a tail loop differ, so the same element could round
 * once in one and twice in another (abi.md: the same bits whatever the
 * variant). */
TECC_WRAP(add, +)
TECC_WRAP(sub, -)
TECC_WRAP(mul, *)
#undef TECC_WRAP
/* The one place generated code rounds a*b + c once: a fused row's float
 * sum of a product accumulates with it (lib/emit_stitch.c), written out
 * so every loop shape and variant gets the same instruction. */
__device__ __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return __fma_rn(a, b, c); }

/* @piece neg abs */
__device__ __forceinline__ int32_t neg(int32_t a) { return (int32_t)(0u - (uint32_t)a); }
__device__ __forceinline__ int64_t neg(int64_t a) { return (int64_t)(0ull - (uint64_t)a); }
__device__ __forceinline__ float neg(float a) { return -a; }
__device__ __forceinline__ double neg(double a) { return -a; }

template <typename T> __device__ __forceinline__ T abs(T a) { return a < 0 ? neg(a) : a; }
__device__ __forceinline__ float abs(float a) { return ::fabsf(a); }
__device__ __forceinline__ double abs(double a) { return ::fabs(a); }

/* @piece relu sign */
template <typename T> __device__ __forceinline__ T relu(T a) { return a < T(0) ? T(0) : a; }
template <typename T> __device__ __forceinline__ T sign(T a) {
  if (a != a) return a; /* NaN */
  return a > T(0) ? T(1) : (a < T(0) ? T(-1) : T(0));
}
/* @piece isnan isinf isfinite */
template <typename T> __device__ __forceinline__ bool isnan(T a) { return a != a; }
template <typename T> __device__ __forceinline__ bool isinf(T a) {
  return a == a && (a - a) != (a - a);
}
template <typename T> __device__ __forceinline__ bool isfinite(T a) { return (a - a) == (a - a); }
__device__ __forceinline__ bool isinf(int32_t) { return false; }
__device__ __forceinline__ bool isinf(int64_t) { return false; }
__device__ __forceinline__ bool isfinite(int32_t) { return true; }
__device__ __forceinline__ bool isfinite(int64_t) { return true; }

/* @piece floordiv mod floordiv_int mod_int mod_float @needs floor fmod copysign neg */
/* Python floor division and remainder; by zero gives 0. */
template <typename T> __device__ __forceinline__ T floordiv_int(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return neg(a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q = q - 1;
  return q;
}
template <typename T> __device__ __forceinline__ T mod_int(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r = r + b;
  return r;
}
/* numpy's npy_divmod for floats. */
template <typename T> __device__ __forceinline__ T mod_float(T a, T b, T *floordiv) {
  T m = fmod(a, b);
  if (b == T(0)) {
    *floordiv = a / b;
    return m;
  }
  T div = (a - m) / b;
  if (m != T(0)) {
    if ((b < T(0)) != (m < T(0))) {
      m += b;
      div -= T(1);
    }
  } else {
    m = copysign(T(0), b);
  }
  T fd;
  if (div != T(0)) {
    fd = floor(div);
    if (div - fd > T(0.5)) fd += T(1);
  } else {
    fd = copysign(T(0), a / b);
  }
  *floordiv = fd;
  return m;
}
__device__ __forceinline__ int32_t floordiv(int32_t a, int32_t b) { return floordiv_int(a, b); }
__device__ __forceinline__ int64_t floordiv(int64_t a, int64_t b) { return floordiv_int(a, b); }
__device__ __forceinline__ int32_t mod(int32_t a, int32_t b) { return mod_int(a, b); }
__device__ __forceinline__ int64_t mod(int64_t a, int64_t b) { return mod_int(a, b); }
template <typename T> __device__ __forceinline__ T floordiv(T a, T b) {
  T q;
  mod_float(a, b, &q);
  return q;
}
template <typename T> __device__ __forceinline__ T mod(T a, T b) {
  T q;
  return mod_float(a, b, &q);
}

/* @piece pow_int pow @needs mul */
/* Exact integer power by squaring (wrapping); a negative exponent gives 0
 * unless the base is 1 or -1. */
template <typename T> __device__ __forceinline__ T pow_int(T base, T e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? T(-1) : T(1);
    return 0;
  }
  T r = 1;
  while (e > 0) {
    if (e & 1) r = mul(r, base);
    base = mul(base, base);
    e >>= 1;
  }
  return r;
}
__device__ __forceinline__ int32_t pow(int32_t a, int32_t b) { return pow_int(a, b); }
__device__ __forceinline__ int64_t pow(int64_t a, int64_t b) { return pow_int(a, b); }

/* @piece maximum minimum */
/* maximum/minimum propagate NaN (the first NaN operand; on sm_80 and
 * later in f32, the canonical NaN). */
template <typename T> __device__ __forceinline__ T maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}
template <typename T> __device__ __forceinline__ T minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
}
/* f32 on sm_80 and later: one max.NaN / min.NaN instruction (a NaN
 * operand gives the canonical NaN) for two NaN tests and a compare and
 * select.  Max reductions are one instruction an element: card and
 * logsumexp rows gained 5 to 15 points of copy on an H100 (bench/NOTES.md,
 * issue 12). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <> __device__ __forceinline__ float maximum<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float minimum<float>(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

/* @piece pairs_minmax minmax_pairs */
/* The max (min) of 16-bit floats held two to a 32-bit word, half by half:
 * one max.NaN.bf16x2 (f16x2) for two elements (lib/emit_stitch.c,
 * paired_minmax()).  Exact, as a max is; a NaN gives the canonical one,
 * which the f32 max.NaN after it keeps, so a row's max has the same bits
 * as one element at a time.  pairs_minmax(VEC): a kernel's packs take
 * this path (sm_80 and later, where those instructions and the f32
 * max.NaN are). */
__device__ __forceinline__ constexpr bool pairs_minmax(int vec) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return vec > 1;
#else
  return (void)vec, false; /* the f32 max.NaN is sm_80's too: an element at a time */
#endif
}
/* (Before sm_80 pairs_minmax() is false and this is not reached.) */
template <bool Max, bool BF16> __device__ __forceinline__ uint32_t minmax_pairs(uint32_t a, uint32_t b) {
  uint32_t r = a;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (Max && BF16)
    asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  else if (Max)
    asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  else if (BF16)
    asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  else
    asm("min.NaN.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
#endif
  return r;
}

/* @piece float_to_int */
/* Float to integer: truncate toward zero, saturate, NaN gives 0. */
template <typename I, typename F> __device__ __forceinline__ I float_to_int(F x);
template <> __device__ __forceinline__ int32_t float_to_int<int32_t, float>(float x) {
  if (x != x) return 0;
  if (x <= -2147483648.0f) return INT32_MIN;
  if (x >= 2147483648.0f) return INT32_MAX;
  return (int32_t)x;
}
template <> __device__ __forceinline__ int32_t float_to_int<int32_t, double>(double x) {
  if (x != x) return 0;
  if (x <= -2147483648.0) return INT32_MIN;
  if (x >= 2147483647.0) return INT32_MAX;
  return (int32_t)x;
}
template <> __device__ __forceinline__ int64_t float_to_int<int64_t, float>(float x) {
  if (x != x) return 0;
  if (x <= -9223372036854775808.0f) return INT64_MIN;
  if (x >= 9223372036854775808.0f) return INT64_MAX;
  return (int64_t)x;
}
template <> __device__ __forceinline__ int64_t float_to_int<int64_t, double>(double x) {
  if (x != x) return 0;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)x;
}
/* 8-bit targets: one cvt.rzi, which truncates, clamps to the type's
 * range and, from f32, gives 0 for NaN (PTX ISA: float-to-integer
 * conversions saturate by default): the rule above in one instruction
 * instead of three compares and their selects, an int8 quantization's
 * every element (on an H200 its kernel went from 72-76% of the ceiling to
 * 98-99%, bench/NOTES.md).  From f64 the H200 gives a NaN the type's
 * minimum (tests/runtime/f8.sh): the NaN test stays there. */
#define TECC_TO_INT8(I, F, ptx, reg)                                  \
  template <> __device__ __forceinline__ I float_to_int<I, F>(F x) {  \
    int r;                                                            \
    asm("cvt.rzi." ptx " %0, %1;" : "=r"(r) : reg(x));                \
    return (I)r;                                                      \
  }
TECC_TO_INT8(int8_t, float, "s8.f32", "f")
TECC_TO_INT8(uint8_t, float, "u8.f32", "f")
#undef TECC_TO_INT8
template <> __device__ __forceinline__ int8_t float_to_int<int8_t, double>(double x) {
  int r;
  asm("cvt.rzi.s8.f64 %0, %1;" : "=r"(r) : "d"(x));
  return x != x ? 0 : (int8_t)r;
}
template <> __device__ __forceinline__ uint8_t float_to_int<uint8_t, double>(double x) {
  int r;
  asm("cvt.rzi.u8.f64 %0, %1;" : "=r"(r) : "d"(x));
  return x != x ? 0 : (uint8_t)r;
}

/* @piece inf_f32 nan_f32 inf_f64 nan_f64 */
__device__ __forceinline__ float inf_f32() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float nan_f32() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double inf_f64() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ double nan_f64() { return __longlong_as_double(0x7ff8000000000000ll); }

/* @piece Arg make_arg Sum Prod Max Min Any All ArgBest ArgMax ArgMin @needs add mul maximum minimum */
/* ---- reductions --------------------------------------------------------- */

/* argmax/argmin accumulator: the value and its flat index along the
 * reduced axes.  The combine functions are commutative and associative:
 * the first NaN wins, else the extreme value, ties to the smaller index. */
template <typename T> struct Arg {
  T v;
  int64_t i;
};
template <typename T> __device__ __forceinline__ Arg<T> make_arg(T v, int64_t i) {
  Arg<T> a;
  a.v = v;
  a.i = i;
  return a;
}

struct Sum {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return add(a, b); }
};
struct Prod {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return mul(a, b); }
};
struct Max {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return maximum(a, b); }
};
struct Min {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return minimum(a, b); }
};
struct Any {
  __device__ __forceinline__ bool operator()(bool a, bool b) const { return a || b; }
};
struct All {
  __device__ __forceinline__ bool operator()(bool a, bool b) const { return a && b; }
};
template <bool IsMax> struct ArgBest {
  template <typename T>
  __device__ __forceinline__ Arg<T> operator()(Arg<T> a, Arg<T> b) const {
    bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    if (a.v == b.v) return a.i <= b.i ? a : b;
    bool a_better = IsMax ? (a.v > b.v) : (a.v < b.v);
    return a_better ? a : b;
  }
};
typedef ArgBest<true> ArgMax;
typedef ArgBest<false> ArgMin;

/* @piece shfl_xor warp_allreduce row_allreduce lanes_allreduce column_reduce @needs Arg */
__device__ __forceinline__ float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ double shfl_xor(double v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ int32_t shfl_xor(int32_t v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ int64_t shfl_xor(int64_t v, int m) {
  return (int64_t)__shfl_xor_sync(0xffffffffu, (long long)v, m);
}
__device__ __forceinline__ bool shfl_xor(bool v, int m) {
  return __shfl_xor_sync(0xffffffffu, (int)v, m) != 0;
}
template <typename T> __device__ __forceinline__ Arg<T> shfl_xor(Arg<T> a, int m) {
  return make_arg(shfl_xor(a.v, m), shfl_xor(a.i, m));
}

/* Butterfly all-reduce among aligned groups of `lanes` lanes of a warp
 * (a power of two up to 32; the whole warp by default): every lane of a
 * group gets the same bits. */
template <typename T, typename Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op, int lanes = 32) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1)
    if (m < lanes) v = op(v, shfl_xor(v, m));
  return v;
}

/* The warp stage of lanes_allreduce_n: LANES lanes (0 and -1:
 * blockDim.x's; -1 where they are at most a warp's).
 * Rows of whole warps take the five shuffles unguarded; a test of
 * blockDim.x before each (and the predicates it keeps) cost the block
 * variant's rows 2 to 7% (layernorm bf16's backward, H200,
 * bench/NOTES.md).  The same folds in the same order: the same bits.
 * row_allreduce (one value) keeps the guarded loop: with both loops
 * center_f64's and masked_bf16's row kernels spilled at 64 registers. */
template <int LANES, typename T, typename Op>
__device__ __forceinline__ T lanes_warp_allreduce(T v, Op op) {
  if (LANES > 0)
    return warp_allreduce(v, op, LANES);
  if (LANES == 0 && blockDim.x >= 32)
    return warp_allreduce(v, op);
  return warp_allreduce(v, op, (int)blockDim.x);
}

/* All-reduce along threadIdx.x (blockDim.x a power of two up to 32, or a
 * multiple of 32 up to 1024), one independent row per threadIdx.y; rows
 * of fewer than 32 lanes share a warp and exchange only among their own
 * lanes.  smem holds 32 * blockDim.y values.  Every thread of the block
 * must call it (it synchronizes). */
template <typename T, typename Op>
__device__ __forceinline__ T row_allreduce(T v, Op op, T *smem) {
  v = warp_allreduce(v, op, (int)blockDim.x);
  if (blockDim.x <= 32) return v;
  const int nwarps = blockDim.x >> 5;
  T *row = smem + threadIdx.y * 32;
  __syncthreads(); /* the previous call's readers are done */
  if ((threadIdx.x & 31) == 0) row[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = row[0];
  for (int w = 1; w < nwarps; w++) r = op(r, row[w]);
  return r;
}

/* row_allreduce of rows whose lanes are known when the kernel is compiled
 * (LANES, a power of two up to 32: the warp variant's instances), so its
 * shuffles need no test of blockDim.x: on an H100 the norms' short rows
 * gained 1 to 3 points of copy (bench/NOTES.md).  LANES 0: row_allreduce.
 * LANES -1: blockDim.x's lanes, at most a warp's (the warp variant's rows
 * that are not aligned packs, one instance for every t_tx: with
 * row_allreduce's stage in shared memory it spilled at 64 registers).
 * The same folds in the same order: the same bits. */
template <int LANES, typename T, typename Op>
__device__ __forceinline__ T lanes_allreduce(T v, Op op, T *smem) {
  return LANES > 0 ? warp_allreduce(v, op, LANES)
         : LANES   ? warp_allreduce(v, op, (int)blockDim.x)
                   : row_allreduce(v, op, smem);
}

/* Combines, for each threadIdx.x, the N partials v[0..N-1] of threadIdx.y
 * = 0..blockDim.y-1, each in the order of y; the results are valid in
 * threadIdx.y == 0.  Only that row of threads folds, so the N columns
 * share one pair of barriers and fold as N independent chains: a column
 * at a time left them waiting on shared memory for each add (colsum on an
 * H100: +0.5 to +2.7 points of copy with N = 4; bench/NOTES.md).  smem
 * holds N * blockDim.x * blockDim.y values; every thread must call it. */
template <int N, typename T, typename Op>
__device__ __forceinline__ void column_reduce(T *v, Op op, T *smem) {
  const unsigned threads = blockDim.x * blockDim.y, me = threadIdx.y * blockDim.x + threadIdx.x;
  __syncthreads(); /* the previous call's readers are done */
#pragma unroll
  for (int k = 0; k < N; k++) smem[k * threads + me] = v[k];
  __syncthreads();
  if (threadIdx.y == 0)
    for (unsigned y = 1; y < blockDim.y; y++) {
#pragma unroll
      for (int k = 0; k < N; k++) v[k] = op(v[k], smem[k * threads + y * blockDim.x + threadIdx.x]);
    }
}

/* @piece lanes_allreduce_n @needs warp_allreduce */
/* lanes_allreduce of K values at once (the accumulators of one level of
 * a row stitch, of one type and operation): one pair of barriers for all
 * K where each alone took its own, and the warps' partials of each
 * combined as a butterfly where they are a power of two (log2 of them
 * shuffles, where row_allreduce's fold takes a load and an op each;
 * every lane gets the same bits), else folded in a row.  smem holds
 * K * blockDim.x * blockDim.y / 32 values. */
template <int LANES, int K, typename T, typename Op>
__device__ __forceinline__ void lanes_allreduce_n(T (&v)[K], Op op, T *smem) {
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = lanes_warp_allreduce<LANES>(v[k], op);
  if (LANES || blockDim.x <= 32) return;
  const int nwarps = blockDim.x >> 5;
  T *row = smem + threadIdx.y * nwarps * K;
  __syncthreads(); /* the previous call's readers are done */
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) row[k * nwarps + (threadIdx.x >> 5)] = v[k];
  }
  __syncthreads();
  if ((nwarps & (nwarps - 1)) == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = warp_allreduce(row[k * nwarps + (threadIdx.x & (nwarps - 1))], op, nwarps);
    return;
  }
#pragma unroll
  for (int k = 0; k < K; k++) {
    T r = row[k * nwarps];
    for (int w = 1; w < nwarps; w++) r = op(r, row[k * nwarps + w]);
    v[k] = r;
  }
}

/* @piece FastDiv */
/* ---- index math ----------------------------------------------------------- */

/* Division by a run-time constant: multiply-high for 32-bit indices
 * (Paddle's FastDivMod), plain division for 64-bit ones. */
template <typename IndexT> struct FastDiv;
template <> struct FastDiv<int32_t> {
  uint32_t divisor, multiplier, shift;
  inline FastDiv() : divisor(1), multiplier(1), shift(0) {}
  inline explicit FastDiv(int64_t d) {
    divisor = d > 0 ? (uint32_t)d : 1u;
    shift = 0;
    while (shift < 32 && (1ull << shift) < divisor) shift++;
    multiplier = (uint32_t)(((1ull << 32) * ((1ull << shift) - divisor)) / divisor + 1);
  }
  __device__ __forceinline__ int32_t div(int32_t n) const {
    uint32_t t = __umulhi((uint32_t)n, multiplier);
    return (int32_t)((t + (uint32_t)n) >> shift);
  }
  __device__ __forceinline__ int32_t value() const { return (int32_t)divisor; }
};
template <> struct FastDiv<int64_t> {
  int64_t divisor;
  inline FastDiv() : divisor(1) {}
  inline explicit FastDiv(int64_t d) : divisor(d > 0 ? d : 1) {}
  __device__ __forceinline__ int64_t div(int64_t n) const { return n / divisor; }
  __device__ __forceinline__ int64_t value() const { return divisor; }
};

/* @piece Pack */
/* ---- 16-byte packs ---------------------------------------------------------- */

/* The unsigned word of `Bytes` bytes: what a pack moves as one access
 * (load_stream, store_stream) and what a pack of bytes is overlaid with. */
template <int Bytes> struct StreamWord;
template <> struct StreamWord<1> { typedef unsigned char type; };
template <> struct StreamWord<2> { typedef unsigned short type; };
template <> struct StreamWord<4> { typedef unsigned int type; };
template <> struct StreamWord<8> { typedef uint2 type; };
template <> struct StreamWord<16> { typedef uint4 type; };

template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
/* Bytes overlaid with words: a pack of 8-bit elements is copied (loaded,
 * stored) a 32-bit word at a time.  As bytes alone, nvcc moved an 8-byte
 * pack as four 16-bit halves, each put together from its two bytes: about
 * 14 instructions an 8-byte store in the fp8 quantization kernels; with
 * the words quant_row 8192 x 14336 went from 86.5 to 84.0 us of kernel
 * time on an H200, dequantize + RMSNorm from 96.8 to 94.4 (bench/NOTES.md,
 * issue 49).  Packs of 1 and 2 bytes overlay one byte or half-word. */
template <int N> struct alignas(N) Pack<uint8_t, N> {
  union {
    uint8_t v[N];
    typename StreamWord<(N < 4 ? N : 4)>::type w[N >= 4 ? N / 4 : 1];
  };
};

/* @piece store_head @needs Pack */
/* The first n elements of a pack (all N where n >= N), element by
 * element: a row that is not whole packs.  Unrolled, so the pack stays in
 * registers.  (A branch to unpredicated stores for a whole pack took the
 * spills out of the f32 stream kernels of such rows, but on an H200 made
 * softmax f32 at 1024 x 50257 10.7% slower, at 4096 x 11007 3%, rmsnorm
 * f32 at 32768 x 255 7%: bench/NOTES.md, issue 45.) */
template <typename T, int N, typename IndexT>
__device__ __forceinline__ void store_head(T *p, const Pack<T, N> &s, IndexT n) {
#pragma unroll
  for (int j = 0; j < N; j++)
    if (j < n) p[j] = s.v[j];
}

/* @piece Gathered @needs Pack */
/* A gathered pack (a slice's, a concat part's, an embedding's row) of N
 * elements of T: a whole 16-byte pack is held as four 32-bit words, so
 * that the branches that fill it (one load where the pack is whole, else
 * NaN or element by element) join on the words and the body splits them
 * into elements.  Held as elements, each branch split its load before the
 * join and so waited for it: the next pack's load could not be issued
 * meanwhile (rope from tables, issue 47: 340 to 273 us on an H200).
 * Element k is the bytes [k * sizeof(T), (k + 1) * sizeof(T)). */
template <typename T, int N, bool WORDS = N * sizeof(T) == 16> struct Gathered {
  Pack<T, N> p; /* fewer bytes (the instance of VEC 1): as elements */
  __device__ __forceinline__ T get(int k) const { return p.v[k]; }
  __device__ __forceinline__ void set(int k, T x) { p.v[k] = x; }
  static __device__ __forceinline__ Gathered fill(T x) {
    Gathered g;
#pragma unroll
    for (int k = 0; k < N; k++) g.p.v[k] = x;
    return g;
  }
};
template <typename T, int N> struct Gathered<T, N, true> {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "element size");
  Pack<uint32_t, 4> w;
  __device__ __forceinline__ T get(int k) const {
    union { uint64_t u; T t; } b;
    if (sizeof(T) == 8)
      b.u = (uint64_t)w.v[2 * k] | ((uint64_t)w.v[2 * k + 1] << 32);
    else
      b.u = w.v[k * sizeof(T) / 4] >> (8 * (k * sizeof(T) % 4));
    return b.t;
  }
  __device__ __forceinline__ void set(int k, T x) {
    union { uint64_t u; T t; } b;
    b.u = 0;
    b.t = x;
    if (sizeof(T) == 8) {
      w.v[2 * k] = (uint32_t)b.u;
      w.v[2 * k + 1] = (uint32_t)(b.u >> 32);
    } else {
      const int sh = 8 * (k * sizeof(T) % 4);
      /* T's bytes set, shifted no further than a word's width (an 8-byte T,
       * which takes the branch above, made 1 << 64 here: a warning) */
      const uint32_t m = (0xffffffffu >> (32 - 8 * (sizeof(T) < 4 ? sizeof(T) : 4))) << sh;
      w.v[k * sizeof(T) / 4] = (w.v[k * sizeof(T) / 4] & ~m) | (((uint32_t)b.u << sh) & m);
    }
  }
  static __device__ __forceinline__ Gathered fill(T x) {
    Gathered g;
#pragma unroll
    for (int i = 0; i < 4; i++) g.w.v[i] = 0;
#pragma unroll
    for (int k = 0; k < N; k++) g.set(k, x);
    return g;
  }
};

/* @piece pair_word set_pair_half bf16_pair f16_pair @needs Pack f16_to_f32 */
/* 16-bit rows held in registers two elements to a 32-bit word (half the
 * registers of f32; each use converts): element e is the low half of
 * word e / 2 when e is even, the high half when odd. */
template <int N> __device__ __forceinline__ uint32_t pair_word(const Pack<uint16_t, N> &p, int j) {
  return reinterpret_cast<const uint32_t *>(p.v)[j];
}
__device__ __forceinline__ void set_pair_half(uint32_t *w, int e, uint16_t h) {
  const uint32_t v = w[e >> 1];
  w[e >> 1] = (e & 1) ? (v & 0xffffu) | ((uint32_t)h << 16) : (v & 0xffff0000u) | h;
}
__device__ __forceinline__ float bf16_pair(const uint32_t *w, int e) {
  const uint32_t v = w[e >> 1];
  return __uint_as_float((e & 1) ? v & 0xffff0000u : v << 16);
}
__device__ __forceinline__ float f16_pair(const uint32_t *w, int e) {
  return f16_to_f32((uint16_t)(w[e >> 1] >> (16 * (e & 1))));
}

/* @piece quad_word quad_byte @needs Pack */
/* 8-bit rows held in a register kernel four elements to a 32-bit word
 * (lib/emit_stitch.c, Cached.quads): element e is byte e % 4 of word
 * e / 4; each use converts.  Such a kernel's WHOLE instance is bound
 * to 32 registers a thread (TECC_QUADS_BOUND, __maxnreg__ from CUDA 12.4;
 * before it, the threads' bound alone): left to itself ptxas took 63 and
 * two blocks of 448 threads an SM, bound it runs four (bench/NOTES.md,
 * issue 49). */
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204
#define TECC_QUADS_BOUND(threads, regs) __maxnreg__(regs)
#else
#define TECC_QUADS_BOUND(threads, regs) __launch_bounds__(threads)
#endif
template <typename T, int N> __device__ __forceinline__ uint32_t quad_word(const Pack<T, N> &p, int j) {
  static_assert(sizeof(T) == 1 && N % 4 == 0, "four bytes a word");
  return reinterpret_cast<const uint32_t *>(p.v)[j];
}
__device__ __forceinline__ uint8_t quad_byte(const uint32_t *w, int e) {
  return (uint8_t)(w[e >> 2] >> 8 * (e & 3));
}

/* @piece f8e4m3_quad f8e4m3_quad_arith @needs quad_byte f8e4m3_to_f32 f16_to_f32 */
/* e4m3 element e: the cvt of the two codes of its half word (one cvt for
 * elements 2i and 2i + 1), then its half to f32; _arith as
 * f8e4m3_to_f32_arith (a NaN of either sign). */
__device__ __forceinline__ float f8e4m3_quad_arith(const uint32_t *w, int e) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const uint32_t h = f8_cvt_f16x2_e4m3x2((uint16_t)(w[e >> 2] >> 16 * ((e >> 1) & 1)));
  return f16_to_f32((uint16_t)(h >> 16 * (e & 1)));
#else
  return f8e4m3_to_f32(quad_byte(w, e));
#endif
}
__device__ __forceinline__ float f8e4m3_quad(const uint32_t *w, int e) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return f8_signed(f8e4m3_quad_arith(w, e), quad_byte(w, e));
#else
  return f8e4m3_to_f32(quad_byte(w, e));
#endif
}

/* @piece load_unaligned store_unaligned @needs Pack store_head */
/* The pack of N (8, or 4 for rows of half packs; 2 and 1 for the column
 * kernels' narrow instances, whose columns a thread are VEC) 16-bit elements at
 * t + at, element `at` of a tensor of `total`, which need not be aligned
 * to it (rows of a length that is not whole packs start anywhere), with
 * the elements from the n-th on 0 (past the row's end).  Where the
 * aligned 4-byte words it spans lie inside the tensor, N/2 of them, or
 * N/2 + 1 and a funnel shift where the pack starts 2 bytes past a word; else (the tensor's first and last
 * packs) element by element: a thread takes the same elements as from an
 * aligned pack, so
 * the same sums, bit for bit.  Words, not the two aligned 16-byte chunks
 * the pack spans and a funnel shift across them: those held twice the
 * registers of an aligned pack's loads in flight, and 16-bit rows held
 * in registers spilled (issue 45).  (With the chunks, and the stores
 * below, bf16 rows of 11007 and 50257 went on an H100 from 6-22% of copy
 * element by element to 35-60%: bench/NOTES.md, issue 12.) */
template <int N, typename IndexT>
__device__ __forceinline__ Pack<uint16_t, N> load_unaligned(const uint16_t *t, IndexT at, IndexT n, IndexT total) {
  static_assert(N == 8 || N == 4 || N == 2 || N == 1, "a 16-, 8-, 4- or 2-byte pack of 16-bit elements");
  constexpr int W = N / 2; /* the 4-byte words of a pack */
  Pack<uint16_t, N> r;
  const uint16_t *p = t + at;
  if (N == 1) { /* an element is aligned */
    r.v[0] = n > 0 ? p[0] : (uint16_t)0;
    return r;
  }
  const bool odd = (reinterpret_cast<uintptr_t>(p) & 2) != 0; /* the elements are 2-byte aligned */
  /* the words from the one p is in: from t's on unless p is t, 2 bytes
   * past a word; up to t + total's */
  if ((at > 0 || !odd) && at + N + (odd ? 1 : 0) <= total) {
    const uint32_t *w = reinterpret_cast<const uint32_t *>(p - (odd ? 1 : 0));
    uint32_t u[W + 1];
#pragma unroll
    for (int i = 0; i < W; i++) u[i] = w[i];
    u[W] = odd ? w[W] : 0u;
    uint32_t *o = reinterpret_cast<uint32_t *>(r.v);
#pragma unroll
    for (int i = 0; i < W; i++) o[i] = __funnelshift_r(u[i], u[i + 1], odd ? 16 : 0);
    if (n < N) {
#pragma unroll
      for (int j = 0; j < N; j++)
        if (j >= n) r.v[j] = 0;
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) r.v[j] = j < n ? p[j] : (uint16_t)0;
  }
  return r;
}

/* Stores the first n (> 0) of N (8 or 4) 16-bit elements v at p, which
 * need not be aligned to them: a whole pack in N/2 aligned 4-byte words,
 * or where p is 2 bytes past a word an element, N/2 - 1 words (a funnel
 * shift of the pack) and an element; the end of a row element by element.
 * Each lane writes its own pack: the aligned 16-byte chunk that ends in
 * it, completed by the lane before's tail through a shuffle, took a
 * ballot of the storing lanes every item and the registers of two packs
 * (issue 45). */
template <int N, typename IndexT>
__device__ __forceinline__ void store_unaligned(uint16_t *p, const Pack<uint16_t, N> &v, IndexT n) {
  static_assert(N == 8 || N == 4 || N == 2 || N == 1, "a 16-, 8-, 4- or 2-byte pack of 16-bit elements");
  constexpr int W = N / 2; /* the 4-byte words of a pack */
  if (N == 1 || n < N) {
    store_head(p, v, n);
    return;
  }
  const uint32_t *u = reinterpret_cast<const uint32_t *>(v.v);
  if ((reinterpret_cast<uintptr_t>(p) & 2) == 0) {
    uint32_t *w = reinterpret_cast<uint32_t *>(p);
#pragma unroll
    for (int i = 0; i < W; i++) w[i] = u[i];
  } else {
    uint32_t *w = reinterpret_cast<uint32_t *>(p + 1);
    p[0] = v.v[0];
#pragma unroll
    for (int i = 0; i < W - 1; i++) w[i] = __funnelshift_r(u[i], u[i + 1], 16);
    p[N - 1] = v.v[N - 1];
  }
}

/* @piece load_unaligned_bytes store_unaligned_bytes @needs Pack store_head */
/* load_unaligned and store_unaligned for packs of N = 16 1-byte elements
 * (T: int8_t, uint8_t; i8, u8, f8e4m3, f8e5m2 rows at VEC 16), or of 8
 * (such values in rows at VEC 8 beside 16-bit ones): the pack at t + at
 * spans N / 4 aligned 4-byte words, or one more and a funnel shift by
 * 8 * (its address & 3); the tensor's first and last packs element by
 * element, so a thread takes the same elements as from an aligned pack.
 * The reasoning is the 16-bit one's above: element by element, 16 bound
 * checks a pack, i8/u8/f8 row kernels spilled 60-364 bytes, through the
 * words mostly none (ptxas -v, sm_90; emit_stitch.c, moves_unaligned);
 * not yet timed on a GPU.  Named apart from the 16-bit ones so that a
 * file of 16-bit rows carries only its own piece (runtime.c). */
template <int N, typename T, typename IndexT>
__device__ __forceinline__ Pack<T, N> load_unaligned_bytes(const T *t, IndexT at, IndexT n, IndexT total) {
  static_assert((N == 8 || N == 16) && sizeof(T) == 1, "a 16- or 8-byte pack of 1-byte elements");
  constexpr int W = N / 4; /* its words, where aligned */
  Pack<T, N> r;
  const T *p = t + at;
  const int off = (int)(reinterpret_cast<uintptr_t>(p) & 3); /* bytes past the word p is in */
  /* the words from the one p is in, from t's on, up to t + total's */
  if (at >= off && at + N + (off ? 4 - off : 0) <= total) {
    const uint32_t *w = reinterpret_cast<const uint32_t *>(p - off);
    uint32_t u[W + 1];
#pragma unroll
    for (int i = 0; i < W; i++) u[i] = w[i];
    u[W] = off ? w[W] : 0u;
    uint32_t *o = reinterpret_cast<uint32_t *>(r.v);
#pragma unroll
    for (int i = 0; i < W; i++) o[i] = __funnelshift_r(u[i], u[i + 1], 8 * off);
    if (n < N) {
#pragma unroll
      for (int i = 0; i < W; i++) { /* word i holds elements 4i to 4i + 3; keep those below n */
        const IndexT k = n - 4 * i;
        o[i] &= k >= 4 ? 0xffffffffu : k <= 0 ? 0u : (1u << (8 * (int)k)) - 1u;
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) r.v[j] = j < n ? p[j] : (T)0;
  }
  return r;
}

/* Stores the first n (> 0) of N 1-byte elements v at p, which need not be
 * aligned to them: a whole pack in N / 4 aligned words, or where p is
 * 4 - s bytes past a word, s elements, N / 4 - 1 words (a funnel shift of
 * the pack by 8 * s) and the last 4 - s elements; the end of a row
 * element by element.  Each lane writes its own pack, as the 16-bit
 * store_unaligned does. */
template <int N, typename T, typename IndexT>
__device__ __forceinline__ void store_unaligned_bytes(T *p, const Pack<T, N> &v, IndexT n) {
  static_assert((N == 8 || N == 16) && sizeof(T) == 1, "a 16- or 8-byte pack of 1-byte elements");
  constexpr int W = N / 4;
  if (n < N) {
    store_head(p, v, n);
    return;
  }
  const uint32_t *u = reinterpret_cast<const uint32_t *>(v.v);
  const int off = (int)(reinterpret_cast<uintptr_t>(p) & 3);
  if (off == 0) {
    uint32_t *w = reinterpret_cast<uint32_t *>(p);
#pragma unroll
    for (int i = 0; i < W; i++) w[i] = u[i];
  } else {
    const int s = 4 - off; /* the elements before the first aligned word */
    uint32_t *w = reinterpret_cast<uint32_t *>(p + s);
#pragma unroll
    for (int j = 0; j < 3; j++)
      if (j < s) p[j] = v.v[j];
#pragma unroll
    for (int i = 0; i < W - 1; i++) w[i] = __funnelshift_r(u[i], u[i + 1], 8 * s);
#pragma unroll
    for (int j = N - 3; j < N; j++) /* the last off elements: static indices keep v in registers */
      if (j >= N - off) p[j] = v.v[j];
  }
}

/* @piece load_stream store_stream @needs Pack */
/* A pack read for the last time in this call (the input of a full or
 * column reduction, a streamed row's last pass): ld.global.cs, evict
 * first, so it does not push out of L2 what will be read again.
 * torch.compile's Triton reductions mark such loads the same way; on an
 * H100 it gave colsum bf16 76 -> 82% of copy and fullsum bf16 81 -> 85
 * (bench/NOTES.md).  store_stream writes a pack nothing in the call reads
 * back (st.global.cs): a streamed row's output, which would otherwise
 * push out of L2 the rows the kernel is about to read again. */
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_stream(const Pack<T, N> *p) {
  typedef typename StreamWord<sizeof(Pack<T, N>)>::type Word;
  const Word w = __ldcs(reinterpret_cast<const Word *>(p));
  Pack<T, N> r;
  memcpy(&r, &w, sizeof r);
  return r;
}
template <typename T, int N> __device__ __forceinline__ void store_stream(Pack<T, N> *p, const Pack<T, N> &v) {
  typedef typename StreamWord<sizeof(Pack<T, N>)>::type Word;
  Word w;
  memcpy(&w, &v, sizeof w);
  __stcs(reinterpret_cast<Word *>(p), w);
}

/* @piece PackWord load_word load_stream_word word_pack @needs Pack */
/* A pack loaded as the unsigned word of its bytes (plainly, or past L2
 * as load_stream), and a word made a pack again.  Packs carried across a
 * loop (a plain row reduction's next row, loaded ahead) are kept as
 * words: carried as an array of 16-bit elements, nvcc gave each element
 * a register of its own (rowsum bf16's instance of 8 packs a thread
 * spilled 180 bytes), and a pack loaded plainly, then copied into a word,
 * left mean f32's instance at 32 registers and 16 bytes of spills
 * (ptxas -v, sm_90). */
template <typename T, int N> using PackWord = typename StreamWord<sizeof(Pack<T, N>)>::type;
template <typename T, int N> __device__ __forceinline__ PackWord<T, N> load_word(const Pack<T, N> *p) {
  return *reinterpret_cast<const PackWord<T, N> *>(p);
}
template <typename T, int N> __device__ __forceinline__ PackWord<T, N> load_stream_word(const Pack<T, N> *p) {
  return __ldcs(reinterpret_cast<const PackWord<T, N> *>(p));
}
template <typename T, int N> __device__ __forceinline__ Pack<T, N> word_pack(const PackWord<T, N> &w) {
  Pack<T, N> p;
  memcpy(&p, &w, sizeof p);
  return p;
}

/* @piece load_last @needs Pack */
/* A pack of 16, 8 or 4 bytes read now and again later in the call, from
 * L2: ld.global with an L2::evict_last policy, so that the reads between
 * (other rows, this one's writes) do not push it out first.  The stream
 * kernel's pipe reads the next row's chunks so while the output pass of
 * this row re-reads its own (kernel time against the passes one after
 * the other, bf16, H200): cross-entropy's backward at 4096 x 128256
 * 0.893x -> 0.868x, softmax's 0.942x -> 0.912x, log_softmax's at 4096 x
 * 120000 1.015x -> 0.982x (bench/NOTES.md, issue 47).  Before sm_80, a
 * plain load; so are packs of 2 bytes or 1. */
__device__ __forceinline__ uint64_t evict_last_policy() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ void load_last_word(uint4 &w, const void *p) {
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(p), "l"(evict_last_policy()));
}
__device__ __forceinline__ void load_last_word(uint2 &w, const void *p) {
  asm volatile("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(w.x), "=r"(w.y)
               : "l"(p), "l"(evict_last_policy()));
}
__device__ __forceinline__ void load_last_word(unsigned int &w, const void *p) {
  asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(w) : "l"(p), "l"(evict_last_policy()));
}
/* packs of 2 bytes or 1 (8-bit values at VEC 2 beside f64 ones): plain loads */
__device__ __forceinline__ void load_last_word(unsigned short &w, const void *p) { w = *(const unsigned short *)p; }
__device__ __forceinline__ void load_last_word(unsigned char &w, const void *p) { w = *(const unsigned char *)p; }
template <typename T, int N> __device__ __forceinline__ Pack<T, N> load_last(const Pack<T, N> *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typename StreamWord<sizeof(Pack<T, N>)>::type w;
  load_last_word(w, p);
  Pack<T, N> r;
  memcpy(&r, &w, sizeof r);
  return r;
#else
  return *p;
#endif
}

/* @piece DeviceCache current_device device_attribute sm_count grid_size */
/* ---- host helpers ----------------------------------------------------------- */

/* A value per device, computed once; 0 until then (relaxed atomics: every
 * thread computes the same value). */
struct DeviceCache {
  enum { kMaxDevices = 256 };
  int value[kMaxDevices];
  int get(int dev) const { return dev < kMaxDevices ? __atomic_load_n(&value[dev], __ATOMIC_RELAXED) : 0; }
  void put(int dev, int v) {
    if (dev < kMaxDevices) __atomic_store_n(&value[dev], v, __ATOMIC_RELAXED);
  }
};

/* The current device, or -1 (the error cleared). */
inline int current_device() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) {
    (void)cudaGetLastError();
    return -1;
  }
  return dev;
}

/* Attribute `attr` of the current device, cached per device in `cache`;
 * `fallback` where it cannot be read (the error cleared). */
inline int device_attribute(DeviceCache &cache, cudaDeviceAttr attr, int fallback) {
  const int dev = current_device();
  if (dev < 0) return fallback;
  if (int known = cache.get(dev)) return known;
  int n = 0;
  if (cudaDeviceGetAttribute(&n, attr, dev) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    n = fallback;
  }
  cache.put(dev, n);
  return n;
}

/* Streaming multiprocessors of the current device, cached per device. */
inline int sm_count() {
  static DeviceCache cache;
  return device_attribute(cache, cudaDevAttrMultiProcessorCount, 32);
}

/* Blocks for `work` items of `per_block` each, at most `waves` full waves
 * of `blocks_per_sm` blocks per SM (grid-stride loops do the rest). */
inline unsigned grid_size(int64_t work, int64_t per_block, int blocks_per_sm) {
  int64_t want = (work + per_block - 1) / per_block;
  int64_t cap = (int64_t)sm_count() * blocks_per_sm;
  if (want > cap) want = cap;
  if (want < 1) want = 1;
  return (unsigned)want;
}

/* @piece cover_grid */
/* Blocks of `per_block` items each that cover `work` items, at least one
 * and at most the 2^31 - 1 CUDA allows (a grid-stride loop does the rest).
 * An elementwise kernel gives each thread one pack: on an H100 at
 * 16384 x 4096 that ran at 97-101% of copy where SMs x resident blocks
 * with a grid-stride loop ran at 86-95 (bench/NOTES.md). */
inline unsigned cover_grid(int64_t work, int64_t per_block) {
  int64_t want = (work + per_block - 1) / per_block;
  if (want > INT32_MAX) want = INT32_MAX;
  if (want < 1) want = 1;
  return (unsigned)want;
}

/* @piece steps_grid @needs cover_grid sm_count */
/* Blocks of `threads` for a loop whose threads take `steps` packs each
 * (lib/schedule.c, GATHER_STEPS), `per_block` items a block at a pack a
 * thread: `steps` a thread where a pack a thread would fill more than a
 * wave of 2048 threads an SM, else a pack a thread (the kernel's later
 * steps out of range), so that a small lookup (16 rows of an embedding
 * on an H200: 1.2 us, 1.4 at two steps) keeps every thread it can have. */
inline unsigned steps_grid(int64_t work, int64_t per_block, int threads, int steps) {
  const unsigned one = cover_grid(work, per_block);
  return (int64_t)one * threads > (int64_t)sm_count() * 2048 ? cover_grid(work, per_block * steps) : one;
}

/* @piece workspace_alloc workspace_pool @needs DeviceCache current_device */
/* A call's workspace (abi.md §5) comes from cudaMallocAsync on its stream,
 * from the device's current memory pool -- unless that pool is the
 * device's default one as CUDA leaves it: a release threshold of 0 gives
 * everything freed to it back to the OS at the next synchronization, and
 * the next call maps its workspace again (45 to 70 us a call on an H200,
 * bench/NOTES.md).  Then the workspace comes from a pool of tecc's own for
 * the device, which keeps up to WORKSPACE_KEPT_MB across
 * synchronizations.  Decided at the first workspace on each device that is
 * not taken inside a stream capture; a pool the caller set up
 * (cudaDeviceSetMemPool, or a threshold on the default pool) is used as
 * it is. */
enum { WORKSPACE_KEPT_MB = 64 };

/* tecc's pool for device `dev`, or NULL for the device's current pool.
 * pools[dev] holds the decision: NULL until it is made, then tecc's pool
 * or current_pool's marker. */
inline cudaMemPool_t workspace_pool(int dev, cudaStream_t stream) {
  static char marker;
  const cudaMemPool_t current_pool = reinterpret_cast<cudaMemPool_t>(&marker);
  static cudaMemPool_t pools[DeviceCache::kMaxDevices];
  if (dev < 0 || dev >= DeviceCache::kMaxDevices) return NULL;
  cudaMemPool_t decided = __atomic_load_n(&pools[dev], __ATOMIC_ACQUIRE);
  if (decided) return decided == current_pool ? NULL : decided;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
    (void)cudaGetLastError();
    return NULL; /* no pool made inside a capture: decided at a later call */
  }
  cudaMemPool_t current = NULL, fresh = NULL;
  uint64_t threshold = 1;
  bool own = cudaDeviceGetMemPool(&current, dev) == cudaSuccess &&
             cudaDeviceGetDefaultMemPool(&fresh, dev) == cudaSuccess && current == fresh &&
             cudaMemPoolGetAttribute(current, cudaMemPoolAttrReleaseThreshold, &threshold) == cudaSuccess &&
             threshold == 0;
  cudaMemPool_t mine = NULL;
  if (own) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    uint64_t kept = (uint64_t)WORKSPACE_KEPT_MB << 20;
    own = cudaMemPoolCreate(&mine, &props) == cudaSuccess &&
          cudaMemPoolSetAttribute(mine, cudaMemPoolAttrReleaseThreshold, &kept) == cudaSuccess;
    if (!own && mine) (void)cudaMemPoolDestroy(mine);
  }
  (void)cudaGetLastError(); /* the caller had no error pending (abi.md §3): these are ours */
  decided = own ? mine : current_pool;
  cudaMemPool_t none = NULL;
  if (!__atomic_compare_exchange_n(&pools[dev], &none, decided, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (own) (void)cudaMemPoolDestroy(mine); /* another thread decided first */
    decided = none;
  }
  return decided == current_pool ? NULL : decided;
}

/* `bytes` of workspace for a call on `stream` (cudaFreeAsync gives it back). */
inline cudaError_t workspace_alloc(char **ws, size_t bytes, cudaStream_t stream) {
  cudaMemPool_t pool = workspace_pool(current_device(), stream);
  return pool ? cudaMallocFromPoolAsync((void **)ws, bytes, pool, stream) : cudaMallocAsync((void **)ws, bytes, stream);
}

/* @piece past_l2 @needs DeviceCache current_device device_attribute */
/* Do `rows` rows of `row_bytes` bytes each exceed the current device's
 * L2 cache (50 MB where it cannot be read)?  A warp variant that loads
 * its next rows ahead (lib/schedule.c, Variant.cover_bytes) loops
 * SMs x 1024 threads over rows the cache holds and covers larger ones
 * with its grid, a row group a block: on an H200 the loop took 3.5-13%
 * less time over 16-32 MB of rows, the cover 0-10% less over 64-256 MB
 * (bench/NOTES.md). */
inline bool past_l2(int64_t rows, int64_t row_bytes) {
  static DeviceCache cache;
  const int64_t l2 = device_attribute(cache, cudaDevAttrL2CacheSize, 50 << 20);
  return row_bytes > 0 && rows > l2 / row_bytes;
}

/* @piece built_for_sm90 @needs DeviceCache current_device */
/* `kernel`'s code on this device was compiled for sm_90 or newer (its
 * Hopper code is there).  Cached per device: the kernels of one file are
 * compiled for the same architectures. */
inline bool built_for_sm90(const void *kernel) {
  static DeviceCache cache; /* 1 yes, 2 no */
  const int dev = current_device();
  if (dev < 0) return false;
  if (int known = cache.get(dev)) return known == 1;
  cudaFuncAttributes fa;
  bool ok = cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.ptxVersion >= 90 && fa.binaryVersion >= 90;
  if (!ok) (void)cudaGetLastError();
  cache.put(dev, ok ? 1 : 2);
  return ok;
}

/* @piece launch_with */
/* Launches `kernel` with one launch attribute (cudaLaunchKernelEx) and
 * `smem` bytes of dynamic shared memory; a failure is the launch's error
 * (cudaGetLastError), as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_with(const cudaLaunchAttribute &attr, void (*kernel)(Params...), dim3 grid, dim3 block,
                        size_t smem, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute a = attr;
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  cudaLaunchKernelEx(&cfg, kernel, args...);
}

/* @piece launch_next wait_for_prior_grid let_next_launch @needs built_for_sm90 launch_with */
/* The second stage of a split reduction, and a loop group after a call's
 * first group, launched as a programmatic dependent of the kernel before
 * it (sm_90): the GPU starts launching it while that kernel's blocks
 * finish, and it waits in wait_for_prior_grid until they have all
 * finished and what they wrote is visible.  It spares the gap between the
 * two kernels: on an H100 fullsum bf16 went from 51.6 to 50.4 us, colsum
 * from 57.0 to 56.1 (bench/NOTES.md, issue 11).  Before
 * sm_90, or for code compiled for an older architecture (where the wait
 * is not there), it is an ordinary launch. */
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* In the first stage: the dependent launch may begin now (it waits for
 * this grid's end before it reads anything). */
__device__ __forceinline__ void let_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

/* Launches `kernel` after the work before it on `stream`, as a
 * programmatic dependent where the device and the code allow; a failure
 * is the launch's error (cudaGetLastError), as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_next(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  if (!built_for_sm90((const void *)kernel)) { /* no wait in its code */
    kernel<<<grid, block, 0, stream>>>(args...);
    return;
  }
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  launch_with(attr, kernel, grid, block, 0, stream, args...);
}

/* @piece grid_barrier launch_cooperative cooperative_fits held_steps @needs DeviceCache current_device sm_count launch_with */
/* A full reduction and the loop after it that reads its result, in one
 * cooperative launch (GroupSchedule.one_launch): every block of the grid
 * is resident at once, and grid_barrier() returns in a block once every
 * block has reached it, what each wrote before it visible to all after.
 * Its word is the one the driver zeroes for each cooperative launch,
 * cooperative_groups' grid workspace (32 bits of size, then the
 * barrier's 32, at the address %envreg1 (high half) and %envreg2 (low)
 * hold),
 * the word this_grid().sync() uses: <cooperative_groups.h> itself took
 * 2.4 s of nvcc a file.  Each block adds to it once, block 0 2^31 - (G -
 * 1) and the others 1: its top bit flips when the last of the G blocks
 * has added, in whatever order they come, and each waits for the flip
 * (the low bits are 0 again after it, ready for the next barrier). */
__device__ __forceinline__ unsigned *grid_barrier_word() {
  uint32_t hi, lo;
  asm("mov.u32 %0, %%envreg1;" : "=r"(hi));
  asm("mov.u32 %0, %%envreg2;" : "=r"(lo));
  return reinterpret_cast<unsigned *>(((uint64_t)hi << 32 | lo) + 4);
}
__device__ __forceinline__ void grid_barrier() {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned *word = grid_barrier_word();
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    __threadfence(); /* the block's writes before its arrival */
    const unsigned before = atomicAdd(word, first ? 0x80000000u - (blocks - 1) : 1u);
    while (((before ^ *(volatile unsigned *)word) & 0x80000000u) == 0) {
    }
    __threadfence(); /* the others' writes before what the block reads next */
  }
  __syncthreads();
}

/* `kernel` can be launched cooperatively on the current device with
 * `grid` blocks of `threads` and up to `smem` bytes of dynamic shared
 * memory a block (the same each call): the device launches cooperative
 * kernels and holds the whole grid at once.  `cache` is the kernel's own
 * (1 + the blocks the device holds at once; 1: none). */
inline bool cooperative_fits(DeviceCache &cache, const void *kernel, unsigned grid, int threads, size_t smem = 0) {
  const int dev = current_device();
  if (dev < 0) return false;
  int known = cache.get(dev);
  if (!known) {
    int coop = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess || !coop ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess) {
      (void)cudaGetLastError();
      per_sm = 0;
    }
    known = 1 + per_sm * sm_count();
    cache.put(dev, known);
  }
  return (int64_t)grid < known;
}

/* The steps of each of its `threads` threads, `step_bytes` of packs a
 * step, that a one launch of `kernel` keeps in shared memory from its
 * reduction to its loop (GroupSchedule.one_held) on the current device,
 * with `per_sm` blocks an SM: the shared memory the SM gives each block
 * (less what the device reserves for it and the kernel's own), in whole
 * steps, at most `max_steps`; the kernel is allowed that much
 * (cudaFuncSetAttribute, before any launch or occupancy query of it).
 * `cache` is the kernel's own (1 + the steps; 1: none, where an attribute
 * cannot be read or set). */
inline int held_steps(DeviceCache &cache, const void *kernel, int threads, int per_sm, size_t step_bytes,
                      int max_steps) {
  const int dev = current_device();
  if (dev < 0) return 0;
  if (int known = cache.get(dev)) return known - 1;
  int per_sm_bytes = 0, reserved = 0, optin = 0;
  cudaFuncAttributes fa;
  int64_t steps = 0;
  bool read = cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
              cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) == cudaSuccess &&
              cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
              cudaFuncGetAttributes(&fa, kernel) == cudaSuccess;
  if (read) {
    int64_t bytes = (int64_t)per_sm_bytes / per_sm - reserved, own = (int64_t)fa.sharedSizeBytes;
    if (bytes > optin) bytes = optin;
    steps = bytes > own ? (bytes - own) / ((int64_t)threads * (int64_t)step_bytes) : 0;
    if (steps > max_steps) steps = max_steps;
    if (steps > 0 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)(steps * threads * (int64_t)step_bytes)) != cudaSuccess)
      read = false, steps = 0;
  }
  if (!read) (void)cudaGetLastError();
  cache.put(dev, 1 + (int)steps);
  return (int)steps;
}

/* Launches `kernel` cooperatively (its blocks all resident at once) with
 * `smem` bytes of dynamic shared memory a block; a failure is the
 * launch's error (cudaGetLastError), as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                               Args... args) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  launch_with(attr, kernel, grid, block, smem, stream, args...);
}

/* @piece lag_take lag_done lag_wait lag_set lag_grid lag_rows @needs DeviceCache current_device device_attribute sm_count */
/* A lag kernel (a batch norm's split plan in one persistent launch,
 * lib/emit_cu.c): its blocks take work items in ticket order from word 0
 * of its counters (zeroed before the launch); word 2 + c counts the rows
 * of column c whose partials are written, word 2 + C + c is set once
 * column c's statistics are.  Every item a block waits on was taken
 * earlier by a running block that does not wait on it: no co-residency
 * is needed.  Its kernel is bound to `regs` registers a thread
 * (TECC_LAG_BOUND, __maxnreg__ from CUDA 12.4, which leaves two blocks
 * of up to 448 threads an SM; before it, `threads` a block and `blocks`
 * of them an SM): under the 64 of two blocks of 512 it spilled. */
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204
#define TECC_LAG_BOUND(threads, blocks, regs) __maxnreg__(regs)
#else
#define TECC_LAG_BOUND(threads, blocks, regs) __launch_bounds__(threads, blocks)
#endif
template <typename IndexT>
__device__ __forceinline__ IndexT lag_take(unsigned *word, IndexT *slot) {
  __syncthreads(); /* the slot's last item read by every thread */
  if (threadIdx.x == 0) *slot = (IndexT)atomicAdd(word, 1u);
  __syncthreads();
  return *slot;
}

/* One more of `per` rows of a column done (the block's writes before it
 * visible to any that sees the count): true in every thread of the block
 * that did the last. */
__device__ __forceinline__ bool lag_done(unsigned *count, unsigned per, int *slot) {
  __syncthreads(); /* every thread's writes of the item */
  if (threadIdx.x == 0) {
    __threadfence();
    *slot = atomicAdd(count, 1u) == per - 1;
    __threadfence(); /* the others' partials before what the block reads next */
  }
  __syncthreads();
  return *slot != 0;
}

/* Block until `flag` is set (what was written before it visible after). */
__device__ __forceinline__ void lag_wait(unsigned *flag) {
  if (threadIdx.x == 0) {
    while (*(volatile unsigned *)flag == 0) {
    }
    __threadfence();
  }
  __syncthreads();
}

/* Set `flag` once the block's writes are visible. */
__device__ __forceinline__ void lag_set(unsigned *flag) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicExch(flag, 1u);
  }
}

/* Blocks of `threads` for a lag kernel: as many as the device holds at
 * once, at most `items`.  Asked at each call: the answer depends on the
 * block.  (A cache by device alone kept the first call's two blocks an
 * SM of 416 threads for the 128-thread blocks of shorter rows: after a
 * call at 32 x 64 x 12544, 32 x 256 x 3136 f32 took 1.76x the three
 * launches' time on an H100; not measured since.) */
inline unsigned lag_grid(const void *kernel, int threads, int64_t items) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess || per_sm < 1) {
    (void)cudaGetLastError();
    per_sm = 1;
  }
  const int64_t most = (int64_t)per_sm * sm_count();
  return (unsigned)(items < most ? (items > 0 ? items : 1) : most);
}

/* The distance in rows from a row's statistics to its normalization: a
 * quarter of the device's L2 in rows (50 MB where it cannot be read), at
 * least `per`, the rows a column folds, so that a column's rows all come
 * before its first normalization (bench/NOTES.md, issue 48: 12.5 MB was
 * the best distance at every 12544-element shape on an H100). */
inline int64_t lag_rows(int64_t per, int64_t row_bytes) {
  static DeviceCache cache;
  const int64_t l2 = device_attribute(cache, cudaDevAttrL2CacheSize, 50 << 20);
  const int64_t n = row_bytes > 0 ? l2 / 4 / row_bytes : per;
  return n > per ? n : per;
}

/* @piece mul_size numel overlap */
/* *out = a * b; false on int64 overflow. */
inline bool mul_size(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* Element count of a tensor; false when a size is negative or the product
 * overflows int64. */
inline bool numel(const int64_t *dims, int rank, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0 || !mul_size(n, dims[i], &n)) return false;
  }
  *out = n;
  return true;
}

/* Byte ranges [a, a+na) and [b, b+nb) overlap (empty ranges never do). */
inline bool overlap(const void *a, int64_t na, const void *b, int64_t nb) {
  if (na <= 0 || nb <= 0) return false;
  uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
  return pa < pb + (uintptr_t)nb && pb < pa + (uintptr_t)na;
}

/* @piece sat_mul */
/* int64 product that saturates instead of overflowing (sizes >= 0). */
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* @piece size_floordiv size_min size_max */
/* Derived sizes (a slice's, a concat's: language.md section 9.8), on the
 * host: Python's floor division by a positive literal, min and max. */
inline int64_t size_floordiv(int64_t a, int64_t d) { return a / d - (a % d != 0 && a < 0); }
inline int64_t size_min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t size_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* @piece aligned16 aligned_to */
inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
inline bool aligned_to(const void *p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }

/* @end */
}  // namespace tecc
}  // namespace
#pragma nv_diag_default 177

#endif /* TECC_RUNTIME_CUH */
