/* fixture.h: a header written by hand the way abi.md says tecc writes one,
 * for the CPU-side tests of python/tecc.  Not generated. */
#ifndef TECC_FIXTURE_H
#define TECC_FIXTURE_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TECC_STATUS_DEFINED
#define TECC_STATUS_DEFINED
typedef uint16_t tecc_f16;
typedef uint16_t tecc_bf16;
typedef enum tecc_status {
  TECC_SUCCESS = 0,
  TECC_ERROR_INVALID_VALUE = 1,
  TECC_ERROR_ALIASING = 2,
  TECC_ERROR_EMPTY_REDUCTION = 3,
  TECC_ERROR_OUT_OF_MEMORY = 4,
  TECC_ERROR_CUDA = 1000
} tecc_status;
static inline const char *tecc_status_string(int status) {
  switch (status) {
  case TECC_SUCCESS: return "success";
  default: return "error";
  }
}
#endif

/* kernel scale2(x: f32[N]) -> (y: f32[N]) */
tecc_status scale2(const float *x, float *y, int64_t N, cudaStream_t stream);

/* kernel ln(x: bf16[N, D], w: f32[D], eps: f32) -> (y: bf16[N, D], m: f32[N]) */
tecc_status ln(const tecc_bf16 *x, const float *w, float eps, tecc_bf16 *y,
               float *m, int64_t N, int64_t D, cudaStream_t stream);

/* kernel addc(x: i32[N], c: i32) -> (y: i32[N]) */
tecc_status addc(const int32_t *x, int32_t c, int32_t *y, int64_t N, cudaStream_t stream);

/* kernel total(x: f64[M, 3]) -> s: f64 */
tecc_status total(const double *x, double *s, int64_t M, cudaStream_t stream);

tecc_status flags(const uint8_t *x, const tecc_f16 *h, uint8_t *y, int64_t N, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
