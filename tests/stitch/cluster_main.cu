// cluster_main.cu — the cluster variant of a stitch row kernel on the GPU
// (TAP): examples/softmax.te's softmax_f32 and softmax_bf16 over rows long
// enough for a thread-block cluster (more than one block's registers, at
// most 8 blocks': 32769 to 262144 elements), with and without 16-byte
// packs, against a float64
// softmax on the host; and whether this device and build take the cluster
// path at all (cudaDevAttrClusterLaunch, the kernels' PTX version), so
// that a run on a GPU without clusters says it tested the fallback.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "softmax.h"

static int n_test = 0, n_failed = 0;

static void ok(bool cond, const char *what, long long rows, long long len) {
  n_test++;
  n_failed += !cond;
  printf("%sok %d - %s, %lld rows of %lld\n", cond ? "" : "not ", n_test, what, rows, len);
}

static float bf16_to_float(tecc_bf16 b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static tecc_bf16 float_to_bf16(float f) { /* the inputs are exact in bf16 */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (tecc_bf16)(u >> 16);
}

/* Inputs exact in bf16: small multiples of 1/16 in [-2, 2]. */
static std::vector<float> inputs(size_t n) {
  std::vector<float> x(n);
  uint32_t s = 12345;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)((int)(s >> 26) - 32) / 16.0f;
  }
  return x;
}

/* Largest error against a float64 softmax, relative to each value. */
static double worst_error(const std::vector<float> &x, const std::vector<float> &y, long long rows, long long len) {
  double worst = 0;
  for (long long r = 0; r < rows; r++) {
    const float *xr = &x[(size_t)(r * len)];
    double m = -INFINITY, sum = 0;
    for (long long i = 0; i < len; i++) m = fmax(m, (double)xr[i]);
    for (long long i = 0; i < len; i++) sum += exp((double)xr[i] - m);
    for (long long i = 0; i < len; i++) {
      double want = exp((double)xr[i] - m) / sum, got = y[(size_t)(r * len + i)];
      worst = fmax(worst, fabs(got - want) / want);
    }
  }
  return worst;
}

static void check_f32(long long rows, long long len) {
  size_t n = (size_t)(rows * len);
  std::vector<float> x = inputs(n), y(n);
  float *dx, *dy;
  cudaMalloc(&dx, n * 4);
  cudaMalloc(&dy, n * 4);
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
  tecc_status st = softmax_f32(dx, dy, rows, len, 0);
  cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost);
  ok(st == TECC_SUCCESS && cudaDeviceSynchronize() == cudaSuccess && worst_error(x, y, rows, len) < 1e-5,
     "softmax_f32 matches a float64 softmax to 1e-5", rows, len);
  cudaFree(dx);
  cudaFree(dy);
}

static void check_bf16(long long rows, long long len) {
  size_t n = (size_t)(rows * len);
  std::vector<float> x = inputs(n), y(n);
  std::vector<tecc_bf16> hx(n), hy(n);
  for (size_t i = 0; i < n; i++) hx[i] = float_to_bf16(x[i]);
  tecc_bf16 *dx, *dy;
  cudaMalloc(&dx, n * 2);
  cudaMalloc(&dy, n * 2);
  cudaMemcpy(dx, hx.data(), n * 2, cudaMemcpyHostToDevice);
  tecc_status st = softmax_bf16(dx, dy, rows, len, 0);
  cudaMemcpy(hy.data(), dy, n * 2, cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < n; i++) y[i] = bf16_to_float(hy[i]);
  ok(st == TECC_SUCCESS && cudaDeviceSynchronize() == cudaSuccess && worst_error(x, y, rows, len) < 1.0 / 128,
     "softmax_bf16 matches a float64 softmax to bf16's rounding", rows, len);
  cudaFree(dx);
  cudaFree(dy);
}

int main(void) {
  int count = 0, clusters = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("1..0 # SKIP no CUDA device\n");
    return 0;
  }
  cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, 0);
  printf("# this device %s clusters: the long rows below take the %s variant\n", clusters ? "launches" : "does not launch",
         clusters ? "cluster" : "stream");
  /* the last one has more rows than one wave of clusters holds: streamed */
  const long long shapes[][2] = {{2, 65536}, {3, 100003}, {4, 262144}, {1, 32769}, {300, 40000}};
  for (const auto &s : shapes) check_f32(s[0], s[1]);
  for (const auto &s : shapes) check_bf16(s[0], s[1]);
  printf("1..%d\n", n_test);
  return n_failed != 0;
}
