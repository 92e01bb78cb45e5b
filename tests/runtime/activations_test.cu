// activations_test.cu — GPU tests of the runtime's f32 activations (TAP):
// every float through tecc::gelu, normcdf (gelu's gradient), sigmoid,
// silu and gelu_tanh against the same function in float64, by abi.md
// section 6's f32 tolerance, |out - ref| <=
// 1e-6 + 1e-5 |ref|.  The test asks for a quarter of that bound, so that a
// worse approximation fails here before a program's check could notice;
// NaN where the reference is NaN, and the sign of a zero kept.  Built by
// activations.sh with nvcc; needs a GPU.
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

struct Gelu {
  static const char *name() { return "gelu"; }
  __device__ static float f32(float x) { return tecc::gelu(x); }
  __device__ static double f64(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
};

struct NormCdf {
  static const char *name() { return "normcdf"; }
  __device__ static float f32(float x) { return tecc::normcdf(x); }
  __device__ static double f64(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
};

struct Sigmoid {
  static const char *name() { return "sigmoid"; }
  __device__ static float f32(float x) { return tecc::sigmoid(x); }
  __device__ static double f64(double x) { return 1.0 / (1.0 + exp(-x)); }
};

struct Silu {
  static const char *name() { return "silu"; }
  __device__ static float f32(float x) { return tecc::silu(x); }
  __device__ static double f64(double x) { return x / (1.0 + exp(-x)); }
};

struct GeluTanh {
  static const char *name() { return "gelu_tanh"; }
  __device__ static float f32(float x) { return tecc::gelu_tanh(x); }
  __device__ static double f64(double x) {
    return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  }
};

// What one pass over the floats found: the worst ratio of error to the
// tolerance (and the float where), floats whose NaN-ness or zero's sign
// differs from the reference.
struct Found {
  float worst;
  uint32_t worst_at;
  unsigned long long nan_wrong, zero_sign_wrong;
};

template <typename F>
__global__ void sweep(uint64_t lo, uint64_t count, Found *per_block) {
  __shared__ float s_worst[256];
  __shared__ uint32_t s_at[256];
  float worst = 0.0f;
  uint32_t at = 0;
  unsigned long long nan_wrong = 0, zero_wrong = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t bits = (uint32_t)(lo + i);
    const float x = __uint_as_float(bits);
    const float got = F::f32(x);
    const double ref = F::f64((double)x);
    if (isnan(ref) || isnan(got)) {
      nan_wrong += isnan(ref) != isnan(got);
      continue;
    }
    if (ref == 0.0 && got == 0.0) {
      zero_wrong += signbit(ref) != signbit(got);
      continue;
    }
    const double err = fabs((double)got - ref);
    const float r = isinf(ref) ? (got == ref ? 0.0f : INFINITY) : (float)(err / (1e-6 + 1e-5 * fabs(ref)));
    if (r > worst) {
      worst = r;
      at = bits;
    }
  }
  s_worst[threadIdx.x] = worst;
  s_at[threadIdx.x] = at;
  atomicAdd(&per_block[blockIdx.x].nan_wrong, nan_wrong);
  atomicAdd(&per_block[blockIdx.x].zero_sign_wrong, zero_wrong);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 0; t < (int)blockDim.x; t++)
      if (s_worst[t] > per_block[blockIdx.x].worst) {
        per_block[blockIdx.x].worst = s_worst[t];
        per_block[blockIdx.x].worst_at = s_at[t];
      }
  }
}

template <typename F>
static void every_float(void) {
  const int blocks = 4096;
  Found *d = nullptr;
  cudaMalloc(&d, blocks * sizeof(Found));
  cudaMemset(d, 0, blocks * sizeof(Found));
  sweep<F><<<blocks, 256>>>(0, (uint64_t)1 << 32, d);
  Found h[4096];
  const cudaError_t e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  char what[200];
  snprintf(what, sizeof what, "%s: every float runs (%s)", F::name(), cudaGetErrorString(e));
  ok(e == cudaSuccess, what);
  if (e != cudaSuccess) return;
  Found all = {0, 0, 0, 0};
  for (int b = 0; b < blocks; b++) {
    if (h[b].worst > all.worst) {
      all.worst = h[b].worst;
      all.worst_at = h[b].worst_at;
    }
    all.nan_wrong += h[b].nan_wrong;
    all.zero_sign_wrong += h[b].zero_sign_wrong;
  }
  float at;
  memcpy(&at, &all.worst_at, sizeof at);
  snprintf(what, sizeof what, "%s: every float within a quarter of the f32 tolerance (worst %.4f of it, at %.9g)",
           F::name(), all.worst, at);
  ok(all.worst <= 0.25f, what);
  snprintf(what, sizeof what, "%s: NaN exactly where float64 gives NaN (%llu floats differ)", F::name(),
           all.nan_wrong);
  ok(all.nan_wrong == 0, what);
  snprintf(what, sizeof what, "%s: the sign of a zero result kept (%llu floats differ)", F::name(),
           all.zero_sign_wrong);
  ok(all.zero_sign_wrong == 0, what);
}

int main(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("1..0 # SKIP no CUDA device\n");
    return 0;
  }
  printf("1..20\n");
  every_float<Gelu>();
  every_float<NormCdf>();
  every_float<Sigmoid>();
  every_float<Silu>();
  every_float<GeluTanh>();
  return g_failed ? 1 : 0;
}
