/* demo.c — calls two kernels of libexamples.a (softmax_f32 and
 * layernorm_f32) from plain C, and checks every element against a host
 * computation in double precision (abi.md §6 tolerances for f32).
 *
 *   make -C examples && ./examples/demo [ROWS COLS]
 *
 * Exit status 0 when every check passes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "layernorm.h"
#include "softmax.h"

#define CHECK_CUDA(call)                                                  \
  do {                                                                    \
    cudaError_t err_ = (call);                                            \
    if (err_ != cudaSuccess) {                                            \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
              cudaGetErrorString(err_));                                  \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static float *device_copy(const float *host, size_t n) {
  float *d = NULL;
  CHECK_CUDA(cudaMalloc((void **)&d, n * sizeof(float) + 1));
  if (host)
    CHECK_CUDA(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

static void to_host(float *host, const float *dev, size_t n) {
  CHECK_CUDA(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
}

static int close_enough(double got, double want, double rtol) {
  return fabs(got - want) <= 1e-6 + rtol * fabs(want);
}

static double urand(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (*state >> 8) / 16777216.0 * 4.0 - 2.0; /* [-2, 2) */
}

/* Softmax of each row; returns the number of mismatches. */
static long check_softmax(const float *x, const float *y, int64_t rows, int64_t cols) {
  long bad = 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    for (int64_t c = 0; c < cols; c++)
      s += exp(xr[c] - m);
    double rtol = 1e-5 * (cols > 1 ? log2((double)cols) : 1);
    for (int64_t c = 0; c < cols; c++)
      bad += !close_enough(y[r * cols + c], exp(xr[c] - m) / s, rtol);
  }
  return bad;
}

/* LayerNorm of each row with its mean and rstd outputs. */
static long check_layernorm(const float *x, const float *w, const float *b, const float *y,
                            const float *mu, const float *rstd, int64_t rows, int64_t cols) {
  long bad = 0;
  double rtol = 1e-5 * (cols > 1 ? 2 * log2((double)cols) : 1);
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; c++)
      m += xr[c];
    m /= (double)cols;
    for (int64_t c = 0; c < cols; c++)
      v += (xr[c] - m) * (xr[c] - m);
    v /= (double)cols;
    double rs = 1 / sqrt(v + (double)1e-5f);
    bad += !close_enough(mu[r], m, rtol) + !close_enough(rstd[r], rs, rtol);
    for (int64_t c = 0; c < cols; c++)
      bad += !close_enough(y[r * cols + c], (xr[c] - m) * rs * w[c] + b[c], rtol);
  }
  return bad;
}

int main(int argc, char **argv) {
  int64_t rows = argc > 2 ? atoll(argv[1]) : 1000;
  int64_t cols = argc > 2 ? atoll(argv[2]) : 777;
  size_t n = (size_t)(rows * cols);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  float *w = malloc(cols * sizeof *w), *b = malloc(cols * sizeof *b);
  float *mu = malloc(rows * sizeof *mu), *rstd = malloc(rows * sizeof *rstd);
  unsigned seed = 7;
  for (size_t i = 0; i < n; i++)
    x[i] = (float)urand(&seed);
  for (int64_t c = 0; c < cols; c++) {
    w[c] = (float)urand(&seed);
    b[c] = (float)urand(&seed);
  }
  float *dx = device_copy(x, n), *dy = device_copy(NULL, n);
  float *dw = device_copy(w, cols), *db = device_copy(b, cols);
  float *dmu = device_copy(NULL, rows), *drstd = device_copy(NULL, rows);

  tecc_status st = softmax_f32(dx, dy, rows, cols, 0);
  CHECK_CUDA(cudaDeviceSynchronize());
  to_host(y, dy, n);
  long bad_softmax = st == TECC_SUCCESS ? check_softmax(x, y, rows, cols) : -1;
  printf("softmax_f32   %lld x %lld: status %s, %ld mismatches, y[0][0] = %.7f\n",
         (long long)rows, (long long)cols, tecc_status_string(st), bad_softmax, y[0]);

  st = layernorm_f32(dx, dw, db, dy, dmu, drstd, rows, cols, 0);
  CHECK_CUDA(cudaDeviceSynchronize());
  to_host(y, dy, n);
  to_host(mu, dmu, rows);
  to_host(rstd, drstd, rows);
  long bad_ln = st == TECC_SUCCESS ? check_layernorm(x, w, b, y, mu, rstd, rows, cols) : -1;
  printf("layernorm_f32 %lld x %lld: status %s, %ld mismatches, mean[0] = %.7f, rstd[0] = %.7f\n",
         (long long)rows, (long long)cols, tecc_status_string(st), bad_ln, mu[0], rstd[0]);

  /* An argument error: a negative size writes nothing and says so. */
  st = softmax_f32(dx, dy, -1, cols, 0);
  printf("softmax_f32 with a negative size: %s\n", tecc_status_string(st));
  int ok = bad_softmax == 0 && bad_ln == 0 && st == TECC_ERROR_INVALID_VALUE;

  cudaFree(dx), cudaFree(dy), cudaFree(dw), cudaFree(db), cudaFree(dmu), cudaFree(drstd);
  free(x), free(y), free(w), free(b), free(mu), free(rstd);
  printf("%s\n", ok ? "all checks passed" : "CHECKS FAILED");
  return ok ? 0 : 1;
}
