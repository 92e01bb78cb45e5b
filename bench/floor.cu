/* floor.cu: how much of the copy a kernel of a case's bytes can reach when
 * timed as bench.py times it (CUDA events around each launch, a spin
 * kernel holding the GPU while the runs are queued, the median, rotating
 * buffer sets for L2).  Three figures a case:
 *   copy %     cudaMemcpy of the same bytes, half read and half written
 *              (ab.py's "copy, same bytes");
 *   mover %    the best of kernels that only move the bytes (read R in
 *              16-byte packs, write W, no arithmetic; where W > R each
 *              written pack reads its share of R, as a dequantization
 *              does), over the grid and block shapes below;
 *   ceiling %  the bytes at the 1 GiB copy's rate from the first instant,
 *              after an empty kernel's time between the same events: the
 *              fixed cost every launch pays, so no kernel of those bytes
 *              reaches more (unless it moves them faster than the copy).
 *
 *   nvcc -O3 -arch=sm_90 -o floor bench/floor.cu && ./floor [NAME:READ:WRITTEN ...]
 *
 * With arguments, the cases are those (bytes read and written, as a side
 * bench counts them: `"quant block 8192x112x128:234881024:117702656"`);
 * without, the suite's cases below.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                               \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

__global__ void empty_kernel() {}

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

/* U packs a thread an iteration, all loads issued before any is used;
 * packs below nw are copied to y, the rest folded into a word written
 * only where `never` (0 at run time) says so, so that the loads stay. */
template <int U>
__global__ void move(const uint4 *__restrict__ x, uint4 *__restrict__ y, long long nr,
                     long long nw, int never) {
  long long stride = (long long)gridDim.x * blockDim.x * U;
  unsigned fold = 0;
  for (long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x; base < nr;
       base += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + (long long)u * blockDim.x;
      if (i < nr)
        v[u] = x[i];
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + (long long)u * blockDim.x;
      if (i < nw)
        y[i] = v[u];
      else if (i < nr)
        fold ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (never && fold == 0x9e3779b9u)
    y[0].x = fold;
}

/* Where more is written than read (a dequantization: 1 byte in, 2 out):
 * U packs a thread an iteration over the written packs, pack i reading
 * pack i * nr / nw of x (the same 16 bytes for nw / nr neighbouring
 * lanes, fetched from DRAM once), so reads and writes interleave as a
 * kernel of that ratio moves them.  `ratio` is nr / nw in 0.32 fixed
 * point (below 2^32). */
template <int U>
__global__ void spread(const uint4 *__restrict__ x, uint4 *__restrict__ y, long long nw, unsigned ratio) {
  long long stride = (long long)gridDim.x * blockDim.x * U;
  for (long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x; base < nw; base += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + (long long)u * blockDim.x;
      if (i < nw)
        v[u] = x[__umulhi((unsigned)i, ratio)];
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + (long long)u * blockDim.x;
      if (i < nw) {
        v[u].x ^= (unsigned)i;
        y[i] = v[u];
      }
    }
  }
}

struct Timer {
  int iters = 200;
  template <typename F> double operator()(F fn, int nsets) {
    for (int i = 0; i < 3; i++)
      fn(i % nsets);
    CHECK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> s(iters), e(iters);
    for (int i = 0; i < iters; i++) {
      CHECK(cudaEventCreate(&s[i]));
      CHECK(cudaEventCreate(&e[i]));
    }
    spin<<<1, 1>>>(20000000);
    for (int i = 0; i < iters; i++) {
      CHECK(cudaEventRecord(s[i]));
      fn(i % nsets);
      CHECK(cudaEventRecord(e[i]));
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms(iters);
    for (int i = 0; i < iters; i++) {
      CHECK(cudaEventElapsedTime(&ms[i], s[i], e[i]));
      CHECK(cudaEventDestroy(s[i]));
      CHECK(cudaEventDestroy(e[i]));
    }
    std::sort(ms.begin(), ms.end());
    return ms[iters / 2] * 1e3; /* us */
  }
};

struct Case {
  const char *name;
  long long read, written; /* bytes */
};

/* move<U> for U = 1, 2, 4, 8 packs a thread; spread<U> where more is written */
static void (*const movers[])(const uint4 *, uint4 *, long long, long long, int) = {move<1>, move<2>,
                                                                                   move<4>, move<8>};
static void (*const spreaders[])(const uint4 *, uint4 *, long long, unsigned) = {spread<1>, spread<2>,
                                                                                 spread<4>, spread<8>};

/* NAME:READ:WRITTEN, the numbers in bytes; exits on anything else */
static Case parse_case(char *arg) {
  const char *whole = strdup(arg); /* for the message */
  char *w = strrchr(arg, ':');
  char *r = w ? (*w = 0, strrchr(arg, ':')) : nullptr;
  char *end1 = nullptr, *end2 = nullptr;
  Case c = {arg, r ? strtoll(r + 1, &end1, 10) : 0, w ? strtoll(w + 1, &end2, 10) : 0};
  if (!r || r == arg || *end1 || *end2 || c.read <= 0 || c.written < 0) {
    fprintf(stderr, "floor: a case is NAME:READ:WRITTEN (bytes), not '%s'\n", whole);
    exit(2);
  }
  *r = 0;
  return c;
}

int main(int argc, char **argv) {
  std::vector<Case> given;
  for (int i = 1; i < argc; i++)
    given.push_back(parse_case(argv[i]));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int sms = p.multiProcessorCount;
  long long l2 = p.l2CacheSize;
  Timer timer;
  /* the 1 GiB copy of bench.py, the 100% */
  size_t big = 1ull << 30;
  void *a, *b;
  CHECK(cudaMalloc(&a, big));
  CHECK(cudaMalloc(&b, big));
  CHECK(cudaMemset(a, 1, big));
  double copy_us = timer([&](int) { CHECK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice)); }, 1);
  double copy_gbs = 2.0 * big / copy_us / 1e3;
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  double empty_us = timer([&](int) { empty_kernel<<<1, 32>>>(); }, 1);
  printf("device %s, %d SMs, L2 %lld MB; copy %.0f GB/s; empty kernel %.2f us\n", p.name, sms,
         l2 >> 20, copy_gbs, empty_us);

  const long long M = 32768, N = 256;
  /* the bytes bench.py counts (suite.py: the suite's layernorm writes y alone) */
  const Case suite[] = {
      {"softmax f32 32768x256", 4 * M * N, 4 * M * N},
      {"softmax bf16 32768x256", 2 * M * N, 2 * M * N},
      {"card f32 32768x256", 4 * M * N, 4 * M},
      {"card bf16 32768x256", 2 * M * N, 4 * M},
      {"rowstats f32 32768x256", 4 * M * N, 8 * M},
      {"rowstats bf16 32768x256", 2 * M * N, 8 * M},
      {"layernorm f32 32768x256", 4 * M * N + 8 * N, 4 * M * N},
      {"layernorm bf16 32768x256", 2 * M * N + 4 * N, 2 * M * N},
      {"rmsnorm bf16 32768x256", 2 * M * N + 2 * N, 2 * M * N},
      {"add_rmsnorm bf16 32768x256", 4 * M * N + 2 * N, 4 * M * N},
      {"softmax bf16 32768x1024", 2 * M * 4 * N, 2 * M * 4 * N},
  };
  std::vector<Case> cases(suite, suite + sizeof suite / sizeof suite[0]);
  if (!given.empty())
    cases = given;
  printf("%-28s %9s %9s %9s %9s %9s  %s\n", "case", "MB", "copy %", "mover %", "mover us", "ceiling %",
         "best shape");
  for (const Case &c : cases) {
    long long bytes = c.read + c.written;
    int nsets = (int)std::max(1LL, std::min(8LL, (4 * l2 + bytes - 1) / bytes));
    long long nr = (c.read + 15) / 16, nw = (c.written + 15) / 16;
    /* more written than read: spread<U> over the written packs (indices in 32 bits) */
    const bool spreads = nw > nr;
    if (spreads && nw >= (1LL << 32)) {
      fprintf(stderr, "floor: %s writes more than 64 GB\n", c.name);
      exit(2);
    }
    const unsigned ratio = spreads ? (unsigned)(((unsigned __int128)nr << 32) / nw) : 0;
    const long long n = spreads ? nw : nr; /* the packs the grid walks */
    std::vector<uint4 *> xs(nsets), ys(nsets);
    for (int i = 0; i < nsets; i++) {
      CHECK(cudaMalloc(&xs[i], nr * 16));
      CHECK(cudaMalloc(&ys[i], std::max(nw, 1LL) * 16));
      CHECK(cudaMemset(xs[i], 3, nr * 16));
    }
    /* the copy of the same bytes, half read and half written, as ab.py */
    long long half = bytes / 2 / 16 * 16;
    std::vector<void *> zs(nsets), zd(nsets);
    for (int i = 0; i < nsets; i++) {
      CHECK(cudaMalloc(&zs[i], half));
      CHECK(cudaMalloc(&zd[i], half));
      CHECK(cudaMemset(zs[i], 3, half));
    }
    double half_us = timer([&](int i) {
      CHECK(cudaMemcpyAsync(zd[i], zs[i], half, cudaMemcpyDeviceToDevice));
    }, nsets);
    for (int i = 0; i < nsets; i++) {
      CHECK(cudaFree(zs[i]));
      CHECK(cudaFree(zd[i]));
    }
    double best = 1e30;
    char shape[96] = "";
    const int blocks[] = {128, 256, 512, 1024};
    const int per_sm[] = {1, 2, 4, 8, 16, 32, 0};
    for (int block : blocks)
      for (int k : per_sm)
        for (int j = 0; j < 4; j++) {
          int u = 1 << j;
          long long want = (n + (long long)block * u - 1) / ((long long)block * u);
          int grid = k ? (int)std::min<long long>(want, (long long)sms * k) : (int)want;
          cudaFuncAttributes fa; /* the most threads its registers allow a block */
          CHECK(cudaFuncGetAttributes(&fa, spreads ? (const void *)spreaders[j] : (const void *)movers[j]));
          if ((k && k * block > 2048) || block > fa.maxThreadsPerBlock)
            continue;
          auto run = [&](int i) {
            if (spreads)
              spreaders[j]<<<grid, block>>>(xs[i], ys[i], nw, ratio);
            else
              movers[j]<<<grid, block>>>(xs[i], ys[i], nr, nw, 0);
          };
          double us = timer(run, nsets);
          CHECK(cudaGetLastError());
          if (us < best) {
            best = us;
            snprintf(shape, sizeof shape, "block %d, grid %d (%s), %d packs a thread", block, grid,
                     k ? "SMs x k" : "all packs", u);
          }
        }
    double pct = 100.0 * bytes / best / 1e3 / copy_gbs;
    double copy_pct = 100.0 * bytes / half_us / 1e3 / copy_gbs;
    /* the bytes at the copy's rate from the first instant, after an empty
     * kernel's fixed time: no kernel of these bytes reaches more */
    double at_rate_us = bytes / copy_gbs / 1e3;
    double ceiling = 100.0 * at_rate_us / (at_rate_us + empty_us);
    printf("%-28s %9.1f %9.1f %9.1f %9.2f %9.1f  %s\n", c.name, bytes / 1e6, copy_pct, pct, best,
           ceiling, shape);
    for (int i = 0; i < nsets; i++) {
      CHECK(cudaFree(xs[i]));
      CHECK(cudaFree(ys[i]));
    }
  }
  return 0;
}
