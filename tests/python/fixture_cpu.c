/* fixture_cpu.c: host-memory stand-ins for the entry points of fixture.h,
 * so the Python loader's argument passing is tested without a GPU. */
#include <stdint.h>

typedef void *cudaStream_t;
void *fixture_last_stream;

int scale2(const float *x, float *y, int64_t N, cudaStream_t stream)
{
  fixture_last_stream = stream;
  if (N < 0 || (N > 0 && (!x || !y)))
    return 1;
  for (int64_t i = 0; i < N; i++)
    y[i] = 2 * x[i];
  return 0;
}

int addc(const int32_t *x, int32_t c, int32_t *y, int64_t N, cudaStream_t stream)
{
  fixture_last_stream = stream;
  if (N < 0)
    return 1;
  for (int64_t i = 0; i < N; i++)
    y[i] = x[i] + c;
  return 0;
}

int total(const double *x, double *s, int64_t M, cudaStream_t stream)
{
  fixture_last_stream = stream;
  if (M == 0)
    return 1000 + 700; /* TECC_ERROR_CUDA + cudaErrorIllegalAddress, for the test */
  double acc = 0;
  for (int64_t i = 0; i < M * 3; i++)
    acc += x[i];
  *s = acc;
  return 0;
}

int ln(const uint16_t *x, const float *w, float eps, uint16_t *y, float *m,
       int64_t N, int64_t D, cudaStream_t stream)
{
  (void)x, (void)w, (void)y, (void)m, (void)N, (void)D;
  fixture_last_stream = stream;
  return eps == 0.5f ? 0 : 2; /* checks that eps arrives as a float */
}

int flags(const uint8_t *x, const uint16_t *h, uint8_t *y, int64_t N, cudaStream_t stream)
{
  (void)x, (void)h, (void)y, (void)N, (void)stream;
  return 0;
}
