// fixture.cu: the entry points of fixture.h written by hand on the GPU,
// following abi.md, to test the Python loader's PyTorch path on a GPU
// without depending on tecc.  Not generated.
#include <cuda_runtime.h>
#include "fixture.h"

static tecc_status launched(void)
{
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? TECC_SUCCESS : (tecc_status)(TECC_ERROR_CUDA + (int)err);
}

__global__ void scale2_kernel(const float *x, float *y, int64_t n)
{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2 * x[i];
}

extern "C" tecc_status scale2(const float *x, float *y, int64_t N, cudaStream_t stream)
{
  if (N < 0 || (N > 0 && (!x || !y)))
    return TECC_ERROR_INVALID_VALUE;
  if (N == 0)
    return TECC_SUCCESS;
  scale2_kernel<<<(unsigned)((N + 255) / 256), 256, 0, stream>>>(x, y, N);
  return launched();
}

__device__ float bf16_to_float(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }

__device__ uint16_t float_to_bf16(float f)
{
  uint32_t u = __float_as_uint(f);
  return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

// y = x * w + eps; m = row mean of x (one thread per row: a fixture, not fast)
__global__ void ln_kernel(const tecc_bf16 *x, const float *w, float eps, tecc_bf16 *y,
                          float *m, int64_t n, int64_t d)
{
  int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (r >= n)
    return;
  float acc = 0;
  for (int64_t j = 0; j < d; j++) {
    float v = bf16_to_float(x[r * d + j]);
    acc += v;
    y[r * d + j] = float_to_bf16(v * w[j] + eps);
  }
  m[r] = d ? acc / d : __int_as_float(0x7fc00000);
}

extern "C" tecc_status ln(const tecc_bf16 *x, const float *w, float eps, tecc_bf16 *y,
                          float *m, int64_t N, int64_t D, cudaStream_t stream)
{
  if (N < 0 || D < 0)
    return TECC_ERROR_INVALID_VALUE;
  if (N == 0)
    return TECC_SUCCESS;
  ln_kernel<<<(unsigned)((N + 127) / 128), 128, 0, stream>>>(x, w, eps, y, m, N, D);
  return launched();
}

__global__ void addc_kernel(const int32_t *x, int32_t c, int32_t *y, int64_t n)
{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] + c;
}

extern "C" tecc_status addc(const int32_t *x, int32_t c, int32_t *y, int64_t N,
                            cudaStream_t stream)
{
  if (N < 0)
    return TECC_ERROR_INVALID_VALUE;
  if (x != y && x < y + N && y < x + N)
    return TECC_ERROR_ALIASING;
  if (N == 0)
    return TECC_SUCCESS;
  addc_kernel<<<(unsigned)((N + 255) / 256), 256, 0, stream>>>(x, c, y, N);
  return launched();
}

__global__ void total_kernel(const double *x, double *s, int64_t n)
{
  double acc = 0;
  for (int64_t i = 0; i < n; i++)
    acc += x[i];
  *s = acc;
}

extern "C" tecc_status total(const double *x, double *s, int64_t M, cudaStream_t stream)
{
  if (M < 0)
    return TECC_ERROR_INVALID_VALUE;
  total_kernel<<<1, 1, 0, stream>>>(x, s, M * 3);
  return launched();
}

extern "C" tecc_status flags(const uint8_t *x, const tecc_f16 *h, uint8_t *y, int64_t N,
                             cudaStream_t stream)
{
  (void)x, (void)h, (void)y, (void)N, (void)stream;
  return TECC_SUCCESS;
}
