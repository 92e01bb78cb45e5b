// f8_test.cu — GPU tests of the runtime's 8-bit conversions (TAP): every
// float through f32_to_f8e4m3 and f32_to_f8e5m2 (the device's path, the
// software path and the packed forms), every code back to f32, and
// float_to_int to int8 / uint8.  Built by f8.sh with nvcc; needs a GPU.
//
// The reference is built here from the formats' values, not from the
// runtime's arithmetic: the magnitude of each code in double, the midpoint
// of each two neighbours, and which of the two a tie goes to (the even
// code).  That gives, for each code k, the least |x| whose bits round to k
// or above; |x| rounds to the number of these at or below its bits.
#include "../../runtime/tecc_runtime.cuh"
#include <math.h>
#include <stdio.h>
#include <string.h>

static int g_test = 0, g_failed = 0;
static void ok(bool cond, const char *what) {
  g_test++;
  if (!cond) g_failed++;
  printf("%s %d - %s\n", cond ? "ok" : "not ok", g_test, what);
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// ---- the reference ---------------------------------------------------------
// Codes 0 to top: top is the first code past the largest finite value, the
// one rounding overflows to (e4m3fn 0x7f at 480, a NaN; e5m2 0x7c at 2^16,
// inf).  thr[k], k >= 1: the least |x| bits that round to k or above.
struct Format {
  const char *name;
  int mbits, bias, top;
  double value[128];
  uint32_t thr[128];
};

static double code_value(const Format &f, int k) {
  const int e = k >> f.mbits, m = k & ((1 << f.mbits) - 1);
  if (e == 0) return ldexp((double)m, 1 - f.bias - f.mbits);
  return ldexp((double)((1 << f.mbits) + m), e - f.bias - f.mbits);
}

static Format make_format(const char *name, int mbits, int bias, int top) {
  Format f;
  memset(&f, 0, sizeof f);
  f.name = name;
  f.mbits = mbits;
  f.bias = bias;
  f.top = top;
  for (int k = 0; k <= top; k++) f.value[k] = code_value(f, k);
  for (int k = 1; k <= top; k++) {
    const double mid = (f.value[k - 1] + f.value[k]) / 2; /* exact, and a float */
    f.thr[k] = bits_of((float)mid) + (k & 1); /* a tie goes to the even code */
  }
  return f;
}

static const Format E4M3 = make_format("f8e4m3", 3, 7, 0x7f);
static const Format E5M2 = make_format("f8e5m2", 2, 15, 0x7c);

// The code of the float with bits p: NaN is 0x7f, the sign always kept.
__host__ __device__ uint32_t ref_code(const uint32_t *thr, int top, uint32_t p) {
  const uint32_t a = p & 0x7fffffffu, s = p >> 24 & 0x80u;
  if (a > 0x7f800000u) return s | 0x7fu;
  int lo = 0, hi = top; /* the largest k with k == 0 or thr[k] <= a */
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (thr[mid] <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  return s | (uint32_t)lo;
}
static uint32_t ref_of(const Format &f, float x) { return ref_code(f.thr, f.top, bits_of(x)); }

// Known codes, to show that the reference is the formats' rounding.
static void test_reference(void) {
  const float inf = INFINITY, nan = NAN;
  struct { const Format *f; float x; uint32_t code; const char *what; } c[] = {
      {&E4M3, 1.0f, 0x38, "1"},
      {&E4M3, -2.0f, 0xc0, "-2"},
      {&E4M3, -0.0f, 0x80, "-0 keeps its sign"},
      {&E4M3, 448.0f, 0x7e, "448, the largest"},
      {&E4M3, 464.0f, 0x7e, "464, the tie above 448, goes to 448 (even)"},
      {&E4M3, nextafterf(464.0f, inf), 0x7f, "just above 464 is NaN"},
      {&E4M3, -479.9f, 0xff, "-479.9 is -NaN"},
      {&E4M3, 480.0f, 0x7f, "480 is NaN"},
      {&E4M3, inf, 0x7f, "inf is NaN"},
      {&E4M3, -inf, 0xff, "-inf is -NaN"},
      {&E4M3, -nan, 0xff, "-NaN keeps its sign"},
      {&E4M3, 0x1p-9f, 0x01, "2^-9, the smallest subnormal"},
      {&E4M3, 0x1p-10f, 0x00, "2^-10, a tie, goes to 0"},
      {&E4M3, -nextafterf(0x1p-10f, 1.0f), 0x81, "just past -2^-10 is -2^-9"},
      {&E4M3, 0x3p-10f, 0x02, "3 2^-10, a tie, goes to 2 2^-9"},
      {&E4M3, 0x1.ep-7f, 0x08, "15 2^-10, between 7 2^-9 and 2^-6, goes to 2^-6 (even)"},
      {&E4M3, 1.0625f, 0x38, "1 + 1/16, a tie, goes to 1"},
      {&E4M3, 1.1875f, 0x3a, "1 + 3/16, a tie, goes to 1.25"},
      {&E4M3, 0x1p-149f, 0x00, "the smallest f32 subnormal is 0"},
      {&E5M2, 1.0f, 0x3c, "1"},
      {&E5M2, 57344.0f, 0x7b, "57344, the largest"},
      {&E5M2, nextafterf(61440.0f, 0.0f), 0x7b, "just below 61440 is 57344"},
      {&E5M2, 61440.0f, 0x7c, "61440, the tie above 57344, goes to inf (even)"},
      {&E5M2, -inf, 0xfc, "-inf"},
      {&E5M2, nan, 0x7f, "NaN"},
      {&E5M2, -nan, 0xff, "-NaN keeps its sign"},
      {&E5M2, 0x1p-16f, 0x01, "2^-16, the smallest subnormal"},
      {&E5M2, 0x1p-17f, 0x00, "2^-17, a tie, goes to 0"},
      {&E5M2, -0x1p-14f, 0x84, "-2^-14, the smallest normal"},
      {&E5M2, 1.125f, 0x3c, "1 + 1/8, a tie, goes to 1"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char what[160];
    const uint32_t got = ref_of(*c[i].f, c[i].x);
    snprintf(what, sizeof what, "reference %s: %s -> 0x%02x (got 0x%02x)", c[i].f->name, c[i].what, c[i].code, got);
    ok(got == c[i].code, what);
  }
}

// ---- every float, on the device ---------------------------------------------
enum { E4_DEV, E4_SOFT, E4_PACK, E4_PAIR, E5_DEV, E5_SOFT, E5_PACK, E5_PAIR, NCHECKS, MAX_MISSES = 16 };
static const char *const check_name[NCHECKS] = {
    "f32_to_f8e4m3", "f32_to_f8e4m3_soft", "f32_to_f8e4m3_pack<4>", "f32_to_f8e4m3_pack<2>",
    "f32_to_f8e5m2", "f32_to_f8e5m2_soft", "f32_to_f8e5m2_pack<4>", "f32_to_f8e5m2_pack<2>"};
struct Miss { uint32_t check, x, got, want; };

__constant__ uint32_t c_thr[2][128];
__constant__ int c_top[2];
__device__ unsigned long long d_bad[NCHECKS];
__device__ unsigned int d_nmiss;
__device__ Miss d_miss[MAX_MISSES];

// Counts a difference (a warp's at once) and keeps the first few.
__device__ void note(int check, uint32_t x, uint32_t got, uint32_t want) {
  const bool bad = got != want;
  const unsigned m = __ballot_sync(0xffffffffu, bad);
  if ((threadIdx.x & 31) == 0 && m) atomicAdd(&d_bad[check], (unsigned long long)__popc(m));
  if (bad && *(volatile unsigned *)&d_nmiss < MAX_MISSES) {
    const unsigned i = atomicAdd(&d_nmiss, 1u);
    if (i < MAX_MISSES) d_miss[i] = Miss{(uint32_t)check, x, got, want};
  }
}

// The four codes of a pack of the floats of bits p, q, r and t, as a word,
// low byte first.  (The bits, not -x: a negation may not keep a NaN's
// sign, and the reference takes it from the bits.)
template <typename F> __device__ uint32_t word_of(F pack, uint32_t p, uint32_t q, uint32_t r, uint32_t t) {
  const float f[4] = {__uint_as_float(p), __uint_as_float(q), __uint_as_float(r), __uint_as_float(t)};
  uint8_t b[4];
  pack(f, b);
  return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

// Floats base to base + the grid's threads - 1; the packs take each in
// every byte (x and -x in the low two, the neighbour's, its last bit
// flipped, in the high two),
// beside values of other sizes, so a word with one code to fix and three
// that need none is checked at every position.
__global__ void encode_kernel(uint32_t base) {
  const uint32_t p = base + blockIdx.x * blockDim.x + threadIdx.x, q = p ^ 0x80000000u, r = p ^ 1u, t = r ^ 0x80000000u;
  const float x = __uint_as_float(p);
  const uint32_t w4 = ref_code(c_thr[0], c_top[0], p), w5 = ref_code(c_thr[1], c_top[1], p);
  const uint32_t want4 = w4 | ref_code(c_thr[0], c_top[0], q) << 8 | ref_code(c_thr[0], c_top[0], r) << 16 |
                         ref_code(c_thr[0], c_top[0], t) << 24;
  const uint32_t want5 = w5 | ref_code(c_thr[1], c_top[1], q) << 8 | ref_code(c_thr[1], c_top[1], r) << 16 |
                         ref_code(c_thr[1], c_top[1], t) << 24;
  note(E4_DEV, p, tecc::f32_to_f8e4m3(x), w4);
  note(E4_SOFT, p, tecc::f32_to_f8e4m3_soft(x), w4);
  note(E4_PACK, p, word_of([](const float *f, uint8_t *b) { tecc::f32_to_f8e4m3_pack<4>(f, b); }, p, q, r, t), want4);
  note(E4_PAIR, p, word_of([](const float *f, uint8_t *b) { tecc::f32_to_f8e4m3_pack<2>(f, b); b[2] = b[3] = 0; }, p, q, r, t),
       want4 & 0xffffu);
  note(E5_DEV, p, tecc::f32_to_f8e5m2(x), w5);
  note(E5_SOFT, p, tecc::f32_to_f8e5m2_soft(x), w5);
  note(E5_PACK, p, word_of([](const float *f, uint8_t *b) { tecc::f32_to_f8e5m2_pack<4>(f, b); }, p, q, r, t), want5);
  note(E5_PAIR, p, word_of([](const float *f, uint8_t *b) { tecc::f32_to_f8e5m2_pack<2>(f, b); b[2] = b[3] = 0; }, p, q, r, t),
       want5 & 0xffffu);
}

__global__ void arch_kernel(int *arch) {
#ifdef __CUDA_ARCH__
  *arch = __CUDA_ARCH__;
#endif
}

// A kernel runs; which architecture's code it is.
static bool test_device(void) {
  int *arch = NULL;
  bool ran = cudaMallocManaged(&arch, sizeof *arch) == cudaSuccess;
  if (ran) {
    *arch = 0;
    arch_kernel<<<1, 1>>>(arch);
    ran = cudaDeviceSynchronize() == cudaSuccess;
  }
  ok(ran, "a kernel runs");
  if (ran)
    printf("# device code for sm_%d: %s\n", *arch / 10,
           *arch >= 890 ? "the hardware path (cvt.rn.satfinite e4m3x2/e5m2x2) and the _soft one"
                        : "the software path only");
  cudaFree(arch);
  return ran;
}

static void test_every_float(void) {
  uint32_t thr[2][128];
  memcpy(thr[0], E4M3.thr, sizeof thr[0]);
  memcpy(thr[1], E5M2.thr, sizeof thr[1]);
  const int top[2] = {E4M3.top, E5M2.top};
  cudaMemcpyToSymbol(c_thr, thr, sizeof thr);
  cudaMemcpyToSymbol(c_top, top, sizeof top);
  const unsigned threads = 256, blocks = 1u << 18; /* 2^26 floats a launch */
  bool good = true;
  for (uint64_t base = 0; base < (1ull << 32) && good; base += (uint64_t)threads * blocks) {
    encode_kernel<<<blocks, threads>>>((uint32_t)base);
    good = cudaDeviceSynchronize() == cudaSuccess;
  }
  ok(good, "the kernels over every float ran");
  unsigned long long bad[NCHECKS];
  unsigned nmiss = 0;
  Miss miss[MAX_MISSES];
  cudaMemcpyFromSymbol(bad, d_bad, sizeof bad);
  cudaMemcpyFromSymbol(&nmiss, d_nmiss, sizeof nmiss);
  cudaMemcpyFromSymbol(miss, d_miss, sizeof miss);
  for (int c = 0; c < NCHECKS; c++) {
    char what[128];
    snprintf(what, sizeof what, "%s: all 2^32 floats give the reference's bits (%llu differ)", check_name[c], bad[c]);
    ok(good && bad[c] == 0, what);
  }
  for (unsigned i = 0; i < nmiss && i < MAX_MISSES; i++)
    printf("# %s(%.9g, bits 0x%08x%s): got 0x%02x, want 0x%02x\n", check_name[miss[i].check],
           (double)float_of(miss[i].x), miss[i].x, miss[i].check == E4_PACK || miss[i].check == E5_PACK ? ", -x and the neighbour's" : miss[i].check == E4_PAIR || miss[i].check == E5_PAIR ? " and -x" : "",
           miss[i].got, miss[i].want);
}

// ---- every code to f32 -------------------------------------------------------
// Code k in the low byte, 255 - k in the high one for the packed forms.
__global__ void decode_kernel(float *out) {
  const int k = threadIdx.x;
  const uint16_t w = (uint16_t)(k | (255 - k) << 8);
  const float2 p4 = tecc::f8e4m3x2_to_f32x2(w), p5 = tecc::f8e5m2x2_to_f32x2(w);
  float *o = out + 8 * k;
  o[0] = tecc::f8e4m3_to_f32((uint8_t)k);
  o[1] = tecc::f8e4m3_to_f32_soft((uint8_t)k);
  o[2] = p4.x;
  o[3] = p4.y;
  o[4] = tecc::f8e5m2_to_f32((uint8_t)k);
  o[5] = p5.x;
  o[6] = p5.y;
}

// The value of code k: NaN as a NaN of the code's sign (PyTorch's decode
// keeps it), else the same bits (-0 included).
static bool decodes(const Format &f, int k, float got) {
  const int mag = k & 0x7f;
  const bool e4 = f.top == 0x7f;
  if (e4 ? mag == 0x7f : mag > 0x7c) return isnan(got) && (signbit(got) != 0) == ((k & 0x80) != 0);
  const float v = !e4 && mag == 0x7c ? INFINITY : (float)f.value[mag];
  return bits_of(got) == bits_of(k & 0x80 ? -v : v);
}

static void test_every_code(void) {
  float *out;
  cudaMallocManaged(&out, 256 * 8 * sizeof(float));
  decode_kernel<<<1, 256>>>(out);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  const char *what[] = {"f8e4m3_to_f32", "f8e4m3_to_f32_soft", "f8e4m3x2_to_f32x2 (.x)", "f8e4m3x2_to_f32x2 (.y)",
                        "f8e5m2_to_f32", "f8e5m2x2_to_f32x2 (.x)", "f8e5m2x2_to_f32x2 (.y)"};
  for (int c = 0; c < 7; c++) {
    int bad = 0;
    for (int k = 0; k < 256 && ran; k++) {
      const int code = c == 3 || c == 6 ? 255 - k : k;
      if (!decodes(c < 4 ? E4M3 : E5M2, code, out[8 * k + c])) {
        if (bad++ < 4) printf("# %s(0x%02x): got %.9g\n", what[c], code, (double)out[8 * k + c]);
      }
    }
    char line[128];
    snprintf(line, sizeof line, "%s: all 256 codes (%d differ)", what[c], bad);
    ok(ran && bad == 0, line);
  }
  cudaFree(out);
}

// ---- f64 and explicit casts ----------------------------------------------------
__global__ void cast_kernel(uint8_t *b, float *f) {
  b[0] = tecc::f64_to_f8e4m3(1.0625 + 0x1p-30); /* to float: 1.0625, a tie: 1 */
  b[1] = tecc::f64_to_f8e5m2(1.125 + 0x1p-30);  /* to float: 1.125, a tie: 1 */
  b[2] = tecc::f64_to_f8e4m3(-1e300);           /* -inf as a float: -NaN */
  b[3] = tecc::f64_to_f8e5m2(1e300);            /* inf */
  b[4] = tecc::f64_to_f8e4m3(-1e-300);          /* -0 */
  b[5] = tecc::f64_to_f8e5m2(0.3);
  f[0] = tecc::round_f8e4m3(0.3f);              /* 0.3125 */
  f[1] = tecc::round_f8e4m3(470.0f);            /* NaN */
  f[2] = tecc::round_f8e5m2(-1e6f);             /* -inf */
  f[3] = tecc::round_f8e5m2(0x1p-17f);          /* 0 */
}

static void test_casts(void) {
  uint8_t *b;
  float *f;
  cudaMallocManaged(&b, 8);
  cudaMallocManaged(&f, 4 * sizeof(float));
  cast_kernel<<<1, 1>>>(b, f);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  char what[128];
  snprintf(what, sizeof what, "f64 -> f8 rounds to float first, as PyTorch (0x%02x 0x%02x, want 0x38 0x3c)", b[0], b[1]);
  ok(ran && b[0] == 0x38 && b[1] == 0x3c, what);
  ok(ran && b[2] == 0xff && b[3] == 0x7c && b[4] == 0x80 && b[5] == 0x35, "f64 -> f8: overflow, underflow, 0.3");
  ok(ran && f[0] == 0.3125f && isnan(f[1]) && f[2] == -INFINITY && f[3] == 0.0f && !signbit(f[3]),
     "round_f8e4m3 / round_f8e5m2");
  cudaFree(b);
  cudaFree(f);
}

// ---- float_to_int to int8 and uint8 ---------------------------------------------
static const float k_in[] = {NAN, INFINITY, -INFINITY, -128.5f, -129.0f, -128.0f, -127.9f, 127.9f, 127.0f, 128.0f,
                             255.5f, 256.0f, 255.0f, 254.9f, -0.5f, -1.0f, 0.5f, 1e10f, -1e10f, -0.0f};
enum { NIN = sizeof k_in / sizeof k_in[0] };
static const int8_t k_i8[NIN] = {0, 127, -128, -128, -128, -128, -127, 127, 127, 127,
                                 127, 127, 127, 127, 0, -1, 0, 127, -128, 0};
static const uint8_t k_u8[NIN] = {0, 255, 0, 0, 0, 0, 0, 127, 127, 128, 255, 255, 255, 254, 0, 0, 0, 255, 0, 0};

__global__ void int8_kernel(const float *in, int8_t *i8, uint8_t *u8) {
  const int i = threadIdx.x;
  i8[i] = tecc::float_to_int<int8_t>(in[i]);
  i8[NIN + i] = tecc::float_to_int<int8_t>((double)in[i]);
  u8[i] = tecc::float_to_int<uint8_t>(in[i]);
  u8[NIN + i] = tecc::float_to_int<uint8_t>((double)in[i]);
}

static void test_float_to_int8(void) {
  float *in;
  int8_t *i8;
  uint8_t *u8;
  cudaMallocManaged(&in, sizeof k_in);
  cudaMallocManaged(&i8, 2 * NIN);
  cudaMallocManaged(&u8, 2 * NIN);
  memcpy(in, k_in, sizeof k_in);
  int8_kernel<<<1, NIN>>>(in, i8, u8);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < NIN && ran; i++) {
      char what[128];
      const char *from = d ? "double" : "float";
      snprintf(what, sizeof what, "float_to_int<int8_t, %s>(%g) = %d (got %d)", from, (double)k_in[i], k_i8[i],
               i8[d * NIN + i]);
      ok(i8[d * NIN + i] == k_i8[i], what);
      snprintf(what, sizeof what, "float_to_int<uint8_t, %s>(%g) = %d (got %d)", from, (double)k_in[i], k_u8[i],
               u8[d * NIN + i]);
      ok(u8[d * NIN + i] == k_u8[i], what);
    }
  ok(ran, "the float_to_int kernel ran");
  cudaFree(in);
  cudaFree(i8);
  cudaFree(u8);
}

int main(void) {
  test_reference();
  if (test_device()) {
    test_every_float();
    test_every_code();
    test_casts();
    test_float_to_int8();
  }
  printf("1..%d\n", g_test);
  return g_failed ? 1 : 0;
}
