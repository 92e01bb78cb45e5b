// lag_main.cu — the batch norms of lag.te at shapes whose x is larger than
// the device's L2, where the split plan runs as one persistent launch
// (GroupSchedule.lag), and at one whose rows are not whole packs (its
// three launches).  Each call runs three times on a stream of its own:
// the outputs must be the same bits every time (the launch's counters
// start from zero each call, the folds run in a fixed order), and within
// a tolerance of a float64 reference computed here.  Prints TAP.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "lag.h"

static int failures = 0, point = 0;

static void ok(bool good, const char *what) {
  printf("%sok %d - %s\n", good ? "" : "not ", ++point, what);
  failures += !good;
}

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f32_to_bf16(float f) { // round to nearest even (finite values)
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static float value_at(int64_t i, int c) { // a channel's own offset and spread
  uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  const float u = (float)((h >> 40) & 0xffffff) / 16777216.0f - 0.5f;
  return 3.0f * (float)(c % 7) - 8.0f + u * (1.0f + (float)(c % 5));
}

struct Shape {
  int64_t B, M, N;
  int64_t count() const { return B * M * N; }
};

// y = (x - mean) * rsqrt(var + 1e-5) * w + b, the mean and the (biased)
// variance over axes 0 and 2, in float64; m and v where not NULL.
static void reference(const Shape &s, const std::vector<double> &x, const std::vector<double> &w,
                      const std::vector<double> &b, std::vector<double> &y, std::vector<double> *m,
                      std::vector<double> *v) {
  y.resize(x.size());
  for (int64_t c = 0; c < s.M; c++) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < s.B; i++)
      for (int64_t n = 0; n < s.N; n++)
        sum += x[(i * s.M + c) * s.N + n];
    const double mean = sum / (double)(s.B * s.N);
    for (int64_t i = 0; i < s.B; i++)
      for (int64_t n = 0; n < s.N; n++) {
        const double d = x[(i * s.M + c) * s.N + n] - mean;
        sq += d * d;
      }
    const double var = sq / (double)(s.B * s.N), rs = 1.0 / std::sqrt(var + 1e-5);
    if (m) (*m)[c] = mean;
    if (v) (*v)[c] = var;
    for (int64_t i = 0; i < s.B; i++)
      for (int64_t n = 0; n < s.N; n++) {
        const int64_t e = (i * s.M + c) * s.N + n;
        y[e] = (x[e] - mean) * rs * w[c] + b[c];
      }
  }
}

// The largest |got - want| over max(1, |want|).
template <typename T, typename Conv>
static double worst(const std::vector<T> &got, const std::vector<double> &want, Conv conv) {
  double bad = 0;
  for (size_t i = 0; i < got.size(); i++) {
    const double d = std::fabs((double)conv(got[i]) - want[i]) / std::fmax(1.0, std::fabs(want[i]));
    if (!(d <= bad)) bad = d; // NaN counts as worst
  }
  return bad;
}

template <typename T>
static T *device_copy(const std::vector<T> &h) {
  T *d = nullptr;
  if (cudaMalloc(&d, h.size() * sizeof(T) + 16) != cudaSuccess) return nullptr;
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <typename T>
static std::vector<T> host_copy(const T *d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

// bn_f32, or bn4_f32 over [B, M, H, W] (its N = H * W, H = `h`) where h > 0.
static void check_f32(const Shape &s, const char *label, cudaStream_t stream, int64_t h = 0) {
  std::vector<float> x(s.count()), w(s.M), b(s.M);
  std::vector<double> xd(s.count()), wd(s.M), bd(s.M), want;
  for (int64_t e = 0; e < s.count(); e++) xd[e] = x[e] = value_at(e, (int)(e / s.N % s.M));
  for (int64_t c = 0; c < s.M; c++) wd[c] = w[c] = 0.5f + 0.01f * (float)c, bd[c] = b[c] = 0.25f - 0.02f * (float)c;
  reference(s, xd, wd, bd, want, nullptr, nullptr);
  float *dx = device_copy(x), *dw = device_copy(w), *db = device_copy(b), *dy = nullptr;
  cudaMalloc(&dy, x.size() * sizeof(float));
  bool same = true, status = true;
  std::vector<float> first;
  for (int run = 0; run < 3; run++) {
    cudaMemsetAsync(dy, 0xff, x.size() * sizeof(float), stream);
    status &= (h ? bn4_f32(dx, dw, db, dy, s.B, s.M, h, s.N / h, stream)
                 : bn_f32(dx, dw, db, dy, s.B, s.M, s.N, stream)) == TECC_SUCCESS;
    status &= cudaStreamSynchronize(stream) == cudaSuccess;
    std::vector<float> y = host_copy(dy, x.size());
    if (run == 0) first = y;
    else same &= memcmp(y.data(), first.data(), y.size() * sizeof(float)) == 0;
  }
  // x and y one element past 16-byte alignment: the lag kernel's instance
  // without packs, the same bits (abi.md section 6)
  float *dx1 = nullptr, *dy1 = nullptr;
  cudaMalloc(&dx1, (x.size() + 1) * sizeof(float));
  cudaMalloc(&dy1, (x.size() + 1) * sizeof(float));
  cudaMemcpy(dx1 + 1, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
  status &= (h ? bn4_f32(dx1 + 1, dw, db, dy1 + 1, s.B, s.M, h, s.N / h, stream)
               : bn_f32(dx1 + 1, dw, db, dy1 + 1, s.B, s.M, s.N, stream)) == TECC_SUCCESS;
  status &= cudaStreamSynchronize(stream) == cudaSuccess;
  const bool unaligned_same = host_copy(dy1 + 1, x.size()) == first;
  cudaFree(dx1), cudaFree(dy1);
  const double err = worst(first, want, [](float f) { return f; });
  char what[200];
  const char *name = h ? "bn4_f32" : "bn_f32";
  snprintf(what, sizeof what, "%s %s %lldx%lldx%lld: status and three calls the same bits", name, label,
           (long long)s.B, (long long)s.M, (long long)s.N);
  ok(status && same, what);
  snprintf(what, sizeof what, "%s %s: x and y not aligned to 16 bytes, the same bits", name, label);
  ok(status && unaligned_same, what);
  snprintf(what, sizeof what, "%s %s: within 1e-5 of float64 (%.2e)", name, label, err);
  ok(err <= 1e-5, what);
  cudaFree(dx), cudaFree(dw), cudaFree(db), cudaFree(dy);
}

static void check_bf16(const Shape &s, const char *label, cudaStream_t stream) {
  std::vector<uint16_t> x(s.count()), w(s.M), b(s.M);
  std::vector<double> xd(s.count()), wd(s.M), bd(s.M), want;
  for (int64_t e = 0; e < s.count(); e++) {
    x[e] = f32_to_bf16(value_at(e, (int)(e / s.N % s.M)));
    xd[e] = bf16_to_f32(x[e]);
  }
  for (int64_t c = 0; c < s.M; c++) {
    w[c] = f32_to_bf16(0.5f + 0.01f * (float)c), wd[c] = bf16_to_f32(w[c]);
    b[c] = f32_to_bf16(0.25f - 0.02f * (float)c), bd[c] = bf16_to_f32(b[c]);
  }
  reference(s, xd, wd, bd, want, nullptr, nullptr);
  uint16_t *dx = device_copy(x), *dw = device_copy(w), *db = device_copy(b), *dy = nullptr;
  cudaMalloc(&dy, x.size() * sizeof(uint16_t));
  bool same = true, status = true;
  std::vector<uint16_t> first;
  for (int run = 0; run < 3; run++) {
    cudaMemsetAsync(dy, 0xff, x.size() * sizeof(uint16_t), stream);
    status &= bn_bf16(dx, dw, db, dy, s.B, s.M, s.N, stream) == TECC_SUCCESS;
    status &= cudaStreamSynchronize(stream) == cudaSuccess;
    std::vector<uint16_t> y = host_copy(dy, x.size());
    if (run == 0) first = y;
    else same &= y == first;
  }
  const double err = worst(first, want, bf16_to_f32);
  char what[200];
  snprintf(what, sizeof what, "bn_bf16 %s %lldx%lldx%lld: status and three calls the same bits", label,
           (long long)s.B, (long long)s.M, (long long)s.N);
  ok(status && same, what);
  snprintf(what, sizeof what, "bn_bf16 %s: within 1e-2 of float64 (%.2e; bf16's half ulp is 2^-9)", label, err);
  ok(err <= 1e-2, what);
  cudaFree(dx), cudaFree(dw), cudaFree(db), cudaFree(dy);
}

static void check_stats(const Shape &s, cudaStream_t stream) {
  std::vector<float> x(s.count());
  std::vector<double> xd(s.count()), one(s.M, 1.0), zero(s.M, 0.0), want, m(s.M), v(s.M);
  for (int64_t e = 0; e < s.count(); e++) xd[e] = x[e] = value_at(e, (int)(e / s.N % s.M));
  reference(s, xd, one, zero, want, &m, &v);
  float *dx = device_copy(x), *dy = nullptr, *dm = nullptr, *dv = nullptr;
  cudaMalloc(&dy, x.size() * sizeof(float));
  cudaMalloc(&dm, s.M * sizeof(float));
  cudaMalloc(&dv, s.M * sizeof(float));
  const bool status = bn_stats(dx, dy, dm, dv, s.B, s.M, s.N, stream) == TECC_SUCCESS &&
                      cudaStreamSynchronize(stream) == cudaSuccess;
  const double err = worst(host_copy(dy, x.size()), want, [](float f) { return f; });
  const double em = worst(host_copy(dm, s.M), m, [](float f) { return f; });
  const double ev = worst(host_copy(dv, s.M), v, [](float f) { return f; });
  char what[200];
  snprintf(what, sizeof what, "bn_stats %lldx%lldx%lld: y, m and v within 1e-5 of float64 (%.2e %.2e %.2e)",
           (long long)s.B, (long long)s.M, (long long)s.N, err, em, ev);
  ok(status && err <= 1e-5 && em <= 1e-5 && ev <= 1e-5, what);
  cudaFree(dx), cudaFree(dy), cudaFree(dm), cudaFree(dv);
}

// The smallest batch of at least `least` whose x holds more bytes than L2.
static int64_t batch_past_l2(int64_t least, int64_t M, int64_t N, int bytes) {
  int dev = 0, l2 = 50 << 20;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  int64_t B = least;
  while (B * M * N * bytes <= (int64_t)l2) B++;
  return B;
}

int main() {
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    printf("Bail out! no stream\n");
    return 1;
  }
  printf("1..15\n");
  check_f32({batch_past_l2(16, 64, 12544, 4), 64, 12544}, "past L2", stream);
  check_f32({batch_past_l2(32, 256, 3136, 4), 256, 3136}, "past L2, short rows", stream);
  check_f32({batch_past_l2(16, 64, 12545, 4), 64, 12545}, "rows not whole packs", stream);
  check_bf16({batch_past_l2(32, 64, 12544, 2), 64, 12544}, "past L2", stream);
  check_stats({batch_past_l2(16, 64, 12544, 4), 64, 12544}, stream);
  check_f32({batch_past_l2(16, 64, 112 * 112, 4), 64, 112 * 112}, "[B, C, H, W] past L2", stream, 112);
  cudaStreamDestroy(stream);
  return failures ? 1 : 0;
}
