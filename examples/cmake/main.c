/* main.c — calls the kernels tecc_add_library() built from bias_swish.te and
 * row_norm.te, and checks them against a double-precision evaluation on the
 * host (abi.md §6 bounds for f32).
 *
 *   demo [ROWS]       (default 1000 rows of D = 256, the -D of CMakeLists.txt)
 *
 * Prints one line: "demo: ... OK" and exits 0 when both results are within
 * bounds, 1 when not, 77 (and a line saying so) when there is no CUDA
 * device to run on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "bias_swish.h"
#include "row_norm.h"

enum { D = 256 };

typedef struct Buffers {
  float *x, *b, *y, *norm; /* on the host */
  float *dx, *db, *dy, *dnorm;
} Buffers;

static int cuda_ok(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    fprintf(stderr, "demo: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

static int tecc_ok(tecc_status s, const char *what) {
  if (s != TECC_SUCCESS)
    fprintf(stderr, "demo: %s: %s\n", what, tecc_status_string(s));
  return s == TECC_SUCCESS;
}

static void fill_inputs(Buffers *m, long rows) {
  for (long i = 0; i < rows * D; i++)
    m->x[i] = (float)((i * 37 % 101) - 50) / 16.0f;
  for (int j = 0; j < D; j++)
    m->b[j] = (float)(j % 7) / 8.0f - 0.375f;
}

static int allocate(Buffers *m, long rows) {
  size_t n = (size_t)rows * D;
  m->x = malloc(n * sizeof *m->x);
  m->y = malloc(n * sizeof *m->y);
  m->b = malloc(D * sizeof *m->b);
  m->norm = malloc((size_t)rows * sizeof *m->norm);
  if (!m->x || !m->y || !m->b || !m->norm)
    return 0;
  return cuda_ok(cudaMalloc((void **)&m->dx, n * sizeof(float)), "cudaMalloc") &&
         cuda_ok(cudaMalloc((void **)&m->dy, n * sizeof(float)), "cudaMalloc") &&
         cuda_ok(cudaMalloc((void **)&m->db, D * sizeof(float)), "cudaMalloc") &&
         cuda_ok(cudaMalloc((void **)&m->dnorm, (size_t)rows * sizeof(float)), "cudaMalloc");
}

/* Copies the inputs over, runs both kernels on the default stream and
 * copies the outputs back. */
static int run(Buffers *m, long rows) {
  size_t n = (size_t)rows * D;
  return cuda_ok(cudaMemcpy(m->dx, m->x, n * sizeof(float), cudaMemcpyHostToDevice), "copy x") &&
         cuda_ok(cudaMemcpy(m->db, m->b, D * sizeof(float), cudaMemcpyHostToDevice), "copy b") &&
         tecc_ok(bias_swish(m->dx, m->db, m->dy, rows, 0), "bias_swish") &&
         tecc_ok(row_norm(m->dx, m->dnorm, rows, 0), "row_norm") &&
         cuda_ok(cudaMemcpy(m->y, m->dy, n * sizeof(float), cudaMemcpyDeviceToHost), "copy y") &&
         cuda_ok(cudaMemcpy(m->norm, m->dnorm, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost),
                 "copy norm");
}

/* abi.md §6 for f32: |out - ref| <= atol + rtol * |ref|. */
static int close_enough(float got, double want, double rtol) {
  return fabs((double)got - want) <= 1e-6 + rtol * fabs(want);
}

static long count_bias_swish_errors(const Buffers *m, long rows) {
  long bad = 0;
  for (long i = 0; i < rows * D; i++) {
    double t = (double)m->x[i] + (double)m->b[i % D];
    bad += !close_enough(m->y[i], t / (1.0 + exp(-t)), 1e-5);
  }
  return bad;
}

static long count_row_norm_errors(const Buffers *m, long rows) {
  long bad = 0;
  for (long r = 0; r < rows; r++) {
    double s = 0;
    for (int j = 0; j < D; j++)
      s += (double)m->x[r * D + j] * m->x[r * D + j];
    bad += !close_enough(m->norm[r], sqrt(s), 1e-5 * log2((double)D)); /* a sum of D terms */
  }
  return bad;
}

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 1000;
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    printf("demo: skipped: no CUDA device (%s)\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 77;
  }
  if (rows < 1) {
    fprintf(stderr, "usage: demo [ROWS]   (ROWS >= 1)\n");
    return 2;
  }
  Buffers m = {0};
  if (!allocate(&m, rows))
    return 1;
  fill_inputs(&m, rows);
  if (!run(&m, rows))
    return 1;
  long bad_y = count_bias_swish_errors(&m, rows), bad_norm = count_row_norm_errors(&m, rows);
  printf("demo: bias_swish and row_norm on %ld x %d: %ld and %ld values out of bounds: %s\n",
         rows, D, bad_y, bad_norm, bad_y || bad_norm ? "FAILED" : "OK");
  return bad_y || bad_norm;
}
