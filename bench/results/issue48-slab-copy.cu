/* issue 48, 2026-12-04: a measurement, not part of tecc; bench/NOTES.md. */
// The access pattern's own limit: copy x[M, N] bf16 to y slab by slab, a
// block taking CHUNK rows x W columns (W*2 bytes of each row), as the column
// kernels read and write; and the plain contiguous copy beside it.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
template <int W, int T, int ITEMS>
__global__ void __launch_bounds__(T) slab(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M, int N) {
  constexpr int LX = W / 8, LY = T / LX, CHUNK = LY * ITEMS;
  const int NP = N / 8, chunks = M / CHUNK, tasks = chunks * (N / W);
  const int tx = threadIdx.x % LX, ty = threadIdx.x / LX;
  for (int task = blockIdx.x; task < tasks; task += gridDim.x) {
    const int s = task / chunks, c = task % chunks;   // consecutive blocks: the same slab, next chunks
    const size_t off = (size_t)(c * CHUNK + ty) * NP + s * LX + tx;
    uint4 v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) v[i] = __ldcs(x + off + (size_t)i * LY * NP);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) __stcs(y + off + (size_t)i * LY * NP, v[i]);
  }
}
template <int W, int T, int ITEMS>
__global__ void __launch_bounds__(T) slab_rowmajor(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M, int N) {
  // the same tasks, but consecutive blocks take the next slab of the same rows
  constexpr int LX = W / 8, LY = T / LX, CHUNK = LY * ITEMS;
  const int NP = N / 8, slabs = N / W, tasks = (M / CHUNK) * slabs;
  const int tx = threadIdx.x % LX, ty = threadIdx.x / LX;
  for (int task = blockIdx.x; task < tasks; task += gridDim.x) {
    const int s = task % slabs, c = task / slabs;
    const size_t off = (size_t)(c * CHUNK + ty) * NP + s * LX + tx;
    uint4 v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) v[i] = __ldcs(x + off + (size_t)i * LY * NP);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) __stcs(y + off + (size_t)i * LY * NP, v[i]);
  }
}
template <typename F> float timeit(F f) {
  for (int k = 0; k < 3; k++) f();
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int k = 0; k < 20; k++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1e3f); }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
int main() {
  const int M = 16384, N = 4096; const size_t n = (size_t)M * N;
  uint4 *x, *y; CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&y, n * 2)); CK(cudaMemset(x, 1, n * 2));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("16384x4096 bf16 copy, 256 MB moved; us (TB/s)\n");
  float t = timeit([&] { cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice); });
  printf("%-34s %7.1f (%.2f)\n", "cudaMemcpy", t, 2 * n * 2 / t / 1e6);
#define RUN(K, W, T, IT) { const int g = sms * (2048 / T); \
    t = timeit([&] { K<W, T, IT><<<g, T>>>(x, y, M, N); }); \
    printf("%-34s %7.1f (%.2f)\n", #K " W=" #W " T=" #T " ITEMS=" #IT, t, 2 * n * 2 / t / 1e6); }
  RUN(slab, 64, 256, 8) RUN(slab, 128, 256, 8) RUN(slab, 256, 256, 8) RUN(slab, 512, 256, 8) RUN(slab, 1024, 512, 8) RUN(slab, 2048, 1024, 8) RUN(slab, 4096, 1024, 4)
  RUN(slab_rowmajor, 64, 256, 8) RUN(slab_rowmajor, 128, 256, 8) RUN(slab_rowmajor, 256, 256, 8) RUN(slab_rowmajor, 512, 256, 8)
  RUN(slab, 64, 256, 2) RUN(slab, 128, 256, 2) RUN(slab, 128, 512, 4)
  return 0;
}
