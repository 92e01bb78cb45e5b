// trig_test.cu — tecc's own sin, cos and tan (runtime/tecc_runtime.cuh),
// run on the host (they are __host__ __device__ and round the same on
// both) against glibc: double sin/cos/tan for the f32 functions, long
// double sinl/cosl/tanl for f64.  TAP; built and run by trig.sh.
//
// The error of a result is |y - ref| in units in the last place of ref's
// binade (the subnormal ulp below it); each function's largest error over
// dense ranges, random bit patterns of every exponent, multiples of pi/2
// and hard cases must stay within BOUND ulp.  Special values are exact.
// By hand: an argument scales the random counts; "all" checks every float
// (both signs; minutes).
#include "../../runtime/tecc_runtime.cuh"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double BOUND = 2.0;

static int g_test = 0, g_failed = 0;
static void ok(bool cond, const char *what) {
  g_test++;
  if (!cond) g_failed++;
  printf("%s %d - %s\n", cond ? "ok" : "not ok", g_test, what);
}

// xorshift64*: the same numbers on every machine.
static uint64_t g_seed = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) {
  g_seed ^= g_seed >> 12;
  g_seed ^= g_seed << 25;
  g_seed ^= g_seed >> 27;
  return g_seed * 0x2545f4914f6cdd1dull;
}

static float f32_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bits_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double f64_of(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t bits_f64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

enum { SIN, COS, TAN, NFN };
static const char *const NAMES[NFN] = {"sin", "cos", "tan"};

// The worst error seen per function, and where.
struct Worst { double ulp; double x; };
static Worst g_f32[NFN], g_f64[NFN];
static long g_bad_f32[NFN], g_bad_f64[NFN]; // NaN where ref is not, or the reverse

static double ulp_f32(double ref) {
  int e;
  frexp(ref, &e); // |ref| in [2^(e-1), 2^e)
  return ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
}
static long double ulp_f64(long double ref) {
  int e;
  frexpl(ref, &e);
  return ldexpl(1.0L, (e - 1 < -1022 ? -1022 : e - 1) - 52);
}

static void check_f32(float x) {
  const float y[NFN] = {tecc::sin(x), tecc::cos(x), tecc::tan(x)};
  const double ref[NFN] = {sin((double)x), cos((double)x), tan((double)x)};
  for (int f = 0; f < NFN; f++) {
    if (isnan(ref[f]) || isnan(y[f])) {
      if (isnan(ref[f]) != isnan(y[f])) g_bad_f32[f]++;
      continue;
    }
    const double err = fabs((double)y[f] - ref[f]) / ulp_f32(ref[f]);
    if (err > g_f32[f].ulp) g_f32[f] = Worst{err, (double)x};
  }
}

static void check_f64(double x) {
  const double y[NFN] = {tecc::sin(x), tecc::cos(x), tecc::tan(x)};
  const long double lx = x;
  const long double ref[NFN] = {sinl(lx), cosl(lx), tanl(lx)};
  for (int f = 0; f < NFN; f++) {
    if (isnan(ref[f]) || isnan(y[f])) {
      if (isnan(ref[f]) != isnan(y[f])) g_bad_f64[f]++;
      continue;
    }
    const double err = (double)(fabsl((long double)y[f] - ref[f]) / ulp_f64(ref[f]));
    if (err > g_f64[f].ulp) g_f64[f] = Worst{err, x};
  }
}

// Every float from lo up to hi (same sign), both signs.
static long dense_f32(float lo, float hi) {
  long n = 0;
  for (uint32_t u = bits_f32(lo); u <= bits_f32(hi); u++, n++) {
    check_f32(f32_of(u));
    check_f32(-f32_of(u));
  }
  return n;
}

static void specials(void) {
  const float nanf_ = f32_of(0x7fc00000u), inff = f32_of(0x7f800000u);
  const double nan_ = f64_of(0x7ff8000000000000ull), inf = f64_of(0x7ff0000000000000ull);
  bool good = true;
  // signed zeros: sin and tan keep the sign, cos is 1
  good &= bits_f32(tecc::sin(-0.0f)) == 0x80000000u && bits_f32(tecc::sin(0.0f)) == 0;
  good &= bits_f32(tecc::tan(-0.0f)) == 0x80000000u && bits_f32(tecc::tan(0.0f)) == 0;
  good &= tecc::cos(-0.0f) == 1.0f && tecc::cos(0.0f) == 1.0f;
  ok(good, "f32: sin(+-0) and tan(+-0) are +-0, cos(+-0) is 1");
  good = bits_f64(tecc::sin(-0.0)) == 0x8000000000000000ull && bits_f64(tecc::sin(0.0)) == 0;
  good &= bits_f64(tecc::tan(-0.0)) == 0x8000000000000000ull && bits_f64(tecc::tan(0.0)) == 0;
  good &= tecc::cos(-0.0) == 1.0 && tecc::cos(0.0) == 1.0;
  ok(good, "f64: sin(+-0) and tan(+-0) are +-0, cos(+-0) is 1");
  // NaN and infinities give NaN
  good = true;
  const float fbad[] = {nanf_, -nanf_, f32_of(0x7f800001u), inff, -inff};
  for (float x : fbad)
    good &= isnan(tecc::sin(x)) && isnan(tecc::cos(x)) && isnan(tecc::tan(x));
  ok(good, "f32: NaN, +inf and -inf give NaN");
  good = true;
  const double dbad[] = {nan_, -nan_, f64_of(0x7ff0000000000001ull), inf, -inf};
  for (double x : dbad)
    good &= isnan(tecc::sin(x)) && isnan(tecc::cos(x)) && isnan(tecc::tan(x));
  ok(good, "f64: NaN, +inf and -inf give NaN");
  // tiny and subnormal: sin x = tan x = x, cos x = 1, exactly
  good = true;
  const float ftiny[] = {f32_of(1), f32_of(0x80000001u), f32_of(0x007fffffu), 1e-30f, -1e-20f, 0x1p-13f};
  for (float x : ftiny)
    good &= tecc::sin(x) == x && tecc::tan(x) == x && tecc::cos(x) == 1.0f;
  ok(good, "f32: sin x = tan x = x and cos x = 1 for subnormal and tiny x");
  good = true;
  const double dtiny[] = {f64_of(1), f64_of(0x8000000000000001ull), f64_of(0x000fffffffffffffull), 1e-300, -1e-200, 0x1p-27};
  for (double x : dtiny)
    good &= tecc::sin(x) == x && tecc::tan(x) == x && tecc::cos(x) == 1.0;
  ok(good, "f64: sin x = tan x = x and cos x = 1 for subnormal and tiny x");
}

// Hard and huge arguments, both signs, into the error maxima.
static void hard_cases(void) {
  const float f[] = {
      1.0e22f, 0x1.fffffep+127f, 0x1p+127f, 1.0e38f, 3.0e37f, 105614.99f, 105615.0f, 105615.01f,
      0x1.921fb6p+0f, 0x1.921fb6p+1f, 0x1.921fb6p+2f, 3.14159274f, 1.57079637f, 0x1.921fb6p+24f,
      16367173.0f * 0x1p+72f, 0x1.99bc5cp+27f, 0x1.fe1f5cp+127f, 8.0e9f, 2.0e12f, 3.3e29f,
  };
  for (float x : f) {
    check_f32(x);
    check_f32(-x);
  }
  const double d[] = {
      1.0e22, 0x1.fffffffffffffp+1023, 0x1p+1023, 1.0e300, 6381956970095103.0 * 0x1p+797,
      0x1.6ac5b262ca1fep+849, 2147483647.5, 2147483648.0, 2147483648.0000005, 0x1.921fb54442d18p+0,
      0x1.921fb54442d18p+1, 3.14159265358979311600, 1.5707963267948966, 0x1.921fb54442d18p+52,
      1.0e15, 4.0e9, 1.0e100, 0x1.8p+1000, 1.5e-300, 2.5e5,
  };
  for (double x : d) {
    check_f64(x);
    check_f64(-x);
  }
  // nearest floats and doubles to k pi/2, for k spread over the exponents
  const long double pio2 = 1.5707963267948966192313216916397514L;
  for (int i = 0; i < 200000; i++) {
    const uint64_t k = i < 100000 ? (uint64_t)i : next64() >> (next64() % 64);
    const long double v = (long double)k * pio2;
    check_f32((float)v);
    check_f64((double)v);
    check_f32(nextafterf((float)v, 0.0f));
    check_f64(nextafter((double)v, 0.0));
  }
  for (int i = 0; i < 20000; i++) { // huge k: scaled bit patterns near multiples
    const long double v = ldexpl((long double)(next64() >> 11) * pio2, (int)(next64() % 900));
    if (isfinite((double)v)) check_f64((double)v);
  }
}

int main(int argc, char **argv) {
  const bool all = argc > 1 && strcmp(argv[1], "all") == 0;
  const long scale = argc > 1 && !all ? atol(argv[1]) : 1;
  specials();

  // f32: dense ranges (around pi/4, pi/2, pi, 2pi, 100 pi/2, and the
  // switch to the long reduction at 105615)
  long dense = 0;
  dense += dense_f32(0.78f, 0.79f);
  dense += dense_f32(1.5f, 1.65f);
  dense += dense_f32(3.1f, 3.2f);
  dense += dense_f32(6.2f, 6.35f);
  dense += dense_f32(157.0f, 157.2f);
  dense += dense_f32(105600.0f, 105700.0f);
  dense += dense_f32(0x1p-14f, 0x1.2p-14f);
  if (all) dense = dense_f32(f32_of(1), f32_of(0x7f7fffffu));
  for (long i = 0; i < 1000000 * scale; i++) check_f32(f32_of((uint32_t)next64()));
  for (long i = 0; i < 300000 * scale; i++) // the usual range of a kernel's values
    check_f32((float)((double)(int64_t)next64() * 0x1p-58));
  // f64: random bit patterns (every exponent), and |x| < 32, < 2^31, < 2^40
  for (long i = 0; i < 1000000 * scale; i++) check_f64(f64_of(next64()));
  for (long i = 0; i < 300000 * scale; i++) {
    check_f64((double)(int64_t)next64() * 0x1p-58);
    check_f64((double)(int64_t)next64() * 0x1p-32);
    check_f64((double)(int64_t)next64() * 0x1p-23);
  }
  hard_cases();

  char what[200];
  for (int f = 0; f < NFN; f++) {
    snprintf(what, sizeof what, "f32 %s: max error %.4g ulp (at %a) <= %.1f, no stray NaN (%ld dense floats)",
             NAMES[f], g_f32[f].ulp, g_f32[f].x, BOUND, dense);
    ok(g_f32[f].ulp <= BOUND && g_bad_f32[f] == 0, what);
  }
  for (int f = 0; f < NFN; f++) {
    snprintf(what, sizeof what, "f64 %s: max error %.4g ulp (at %a) <= %.1f, no stray NaN",
             NAMES[f], g_f64[f].ulp, g_f64[f].x, BOUND);
    ok(g_f64[f].ulp <= BOUND && g_bad_f64[f] == 0, what);
  }
  printf("1..%d\n", g_test);
  return g_failed != 0;
}
