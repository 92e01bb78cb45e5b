// The latency floor: an empty kernel launched through the same ctypes path
// as the tecc entry points (doc/performance.md: latency cases vs an empty kernel).
#include <cuda_runtime.h>

__global__ void bench_empty_kernel() {}

extern "C" int bench_empty(cudaStream_t stream)
{
  bench_empty_kernel<<<1, 32, 0, stream>>>();
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : 1000 + (int)err;
}
