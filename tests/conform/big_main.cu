// big_main.cu — runs the kernels of big.te on more than 2^31 elements and
// checks every element on the device (the host has no room for a float64
// reference of that size).  Prints TAP.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include "big.h"

static __device__ uint8_t bit_at(int64_t i) {
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return (uint8_t)((h >> 17) & 1);
}

static __global__ void fill(uint8_t *x, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    x[i] = bit_at(i);
}

static __global__ void check_not(const uint8_t *y, int64_t n, unsigned long long *bad,
                                 unsigned long long *ones) {
  unsigned long long b = 0, o = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    b += y[i] != (uint8_t)!bit_at(i);
    o += bit_at(i);
  }
  atomicAdd(bad, b);
  atomicAdd(ones, o);
}

// One block per row: the row's count, and column counts by atomics.
static __global__ void count_rows(int64_t R, int64_t C, unsigned long long *rows,
                                  unsigned long long *cols) {
  for (int64_t r = blockIdx.x; r < R; r += gridDim.x) {
    unsigned long long o = 0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      uint8_t b = bit_at(r * C + c);
      o += b;
      if (b)
        atomicAdd(&cols[c], 1ull);
    }
    atomicAdd(&rows[r], o);
  }
}

static __global__ void compare(const int64_t *got, const unsigned long long *want, int64_t n,
                               unsigned long long *bad) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if ((unsigned long long)got[i] != want[i])
      atomicAdd(bad, 1ull);
}

#define CK(call) do { cudaError_t e_ = (call); if (e_) { printf("Bail out! %s: %s\n", #call, cudaGetErrorString(e_)); return 1; } } while (0)

int main(void) {
  const int64_t N = (1ll << 31) + 77, R = 65537, C = 32769;
  uint8_t *x, *y;
  int64_t *c, *s, *t;
  unsigned long long *cnt, *rows, *cols;
  printf("1..4\n");
  CK(cudaMalloc(&x, (size_t)R * C + 64));
  CK(cudaMalloc(&y, (size_t)N + 64));
  CK(cudaMalloc(&c, 64));
  CK(cudaMalloc(&s, R * 8 + 64));
  CK(cudaMalloc(&t, C * 8 + 64));
  CK(cudaMalloc(&cnt, 4 * sizeof *cnt));
  CK(cudaMalloc(&rows, R * sizeof *rows));
  CK(cudaMalloc(&cols, C * sizeof *cols));
  CK(cudaMemset(cnt, 0, 4 * sizeof *cnt));
  CK(cudaMemset(rows, 0, R * sizeof *rows));
  CK(cudaMemset(cols, 0, C * sizeof *cols));
  fill<<<4096, 256>>>(x + 1, N);  // misaligned by one element
  CK(cudaMemset(y, 0xFF, (size_t)N + 64));
  int st = big(x + 1, y + 1, c, N, 0);
  CK(cudaDeviceSynchronize());
  printf("%sok 1 - big() on %lld elements returns %d\n", st ? "not " : "", (long long)N, st);
  check_not<<<4096, 256>>>(y + 1, N, &cnt[0], &cnt[1]);
  unsigned long long h[4];
  int64_t hc = -1;
  CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hc, c, 8, cudaMemcpyDeviceToHost));
  printf("%sok 2 - y = not x: %llu wrong elements of %lld\n", h[0] ? "not " : "", h[0], (long long)N);
  printf("%sok 3 - c = sum(x): %lld, expected %llu\n", (unsigned long long)hc != h[1] ? "not " : "",
         (long long)hc, h[1]);

  fill<<<4096, 256>>>(x, R * C);
  st = big_rows(x, s, t, R, C, 0);
  CK(cudaDeviceSynchronize());
  count_rows<<<2048, 256>>>(R, C, rows, cols);
  CK(cudaMemset(cnt, 0, 4 * sizeof *cnt));
  compare<<<256, 256>>>(s, rows, R, &cnt[2]);
  compare<<<256, 256>>>(t, cols, C, &cnt[3]);
  CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
  printf("%sok 4 - big_rows() on %lld x %lld: status %d, %llu wrong row sums, %llu wrong column sums\n",
         st || h[2] || h[3] ? "not " : "", (long long)R, (long long)C, st, h[2], h[3]);
  return 0;
}
