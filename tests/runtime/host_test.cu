// host_test.cu — the runtime's host-side fitting of blocks and clusters
// to the sizes (runtime/tecc_rows.cuh), which the launches of every
// generated kernel call: pure functions of the sizes, checked on the host
// (no GPU needed).  Built and run by host.sh (TAP).
#include "../../runtime/tecc_runtime.cuh"
#include "../../runtime/tecc_rows.cuh"
#include <stdio.h>

static int g_test = 0, g_failed = 0;
static void is(long long got, long long want, const char *what) {
  g_test++;
  if (got != want) g_failed++;
  printf("%s %d - %s\n", got == want ? "ok" : "not ok", g_test, what);
  if (got != want) printf("# got %lld, want %lld\n", got, want);
}

int main() {
  is(tecc::ceil_div(11008, 2048), 6, "ceil_div: 11008 / 2048 -> 6");
  is(tecc::ceil_div(8192, 2048), 4, "ceil_div: exact");
  is(tecc::pow2_at_least(5, 1, 8), 8, "pow2_at_least: 5 -> 8");
  is(tecc::pow2_at_least(100, 32, 64), 64, "pow2_at_least: hi when none is in range");
  is(tecc::pow2_at_least(1, 32, 1024), 32, "pow2_at_least: at least lo");
  // A row's cluster: the blocks the row fills, 1 to 8, not a power of two.
  is(tecc::cluster_blocks(11008, 2048), 6, "cluster_blocks: a row of 11008, 2048 a block -> 6 blocks");
  is(tecc::cluster_blocks(10000, 2048), 5, "cluster_blocks: 10000 -> 5");
  is(tecc::cluster_blocks(8192, 2048), 4, "cluster_blocks: whole blocks -> 4");
  is(tecc::cluster_blocks(70000, 32768), 3, "cluster_blocks: 70000, 32768 a block -> 3");
  is(tecc::cluster_blocks(1, 2048), 1, "cluster_blocks: at least 1");
  is(tecc::cluster_blocks(0, 2048), 1, "cluster_blocks: an empty row -> 1");
  is(tecc::cluster_blocks(40000 * 8, 2048), 8, "cluster_blocks: at most 8 (the portable size)");
  // A cluster per row, up to the clusters the device holds.
  is(tecc::cluster_grid(100, 6, 22), 132, "cluster_grid: 22 resident clusters of 6 -> 132 blocks");
  is(tecc::cluster_grid(4, 6, 22), 24, "cluster_grid: fewer rows than resident clusters -> a cluster a row");
  is(tecc::cluster_grid(0, 3, 10), 3, "cluster_grid: at least one cluster");
  // A block that holds a row: its whole warps where it fills them, else a power of two.
  is(tecc::row_threads(14336, 32, 1024), 448, "row_threads: 14336 at 32 a thread -> 14 warps");
  is(tecc::row_threads(14000, 32, 1024), 512, "row_threads: not whole warps -> the power of two");
  is(tecc::row_threads(65536, 32, 1024), 1024, "row_threads: at most hi");
  // A column split's chunks: the most whose groups x chunks blocks the SMs hold at two an SM, one
  // wave (no last wave of a few blocks), but 2 where the groups leave room for more than one block
  // each; at least 512 rows each, at most 1024; 1 where none helps.
  const long long sms = tecc::sm_count(), blocks = 2 * sms;
  for (long long groups : {8LL, 16LL, 24LL, 32LL, blocks - 1, blocks, blocks + 1}) {
    const long long chunks = tecc::column_chunks(groups * 128, 1 << 22, 4, 32);
    const long long most = blocks / groups, want = most >= 2 ? most : blocks > groups ? 2 : 1;
    char what[160];
    snprintf(what, sizeof what, "column_chunks: %lld groups of 128 columns, %lld SMs -> %lld chunks", groups, sms, want);
    is(chunks, want, what);
    if (most >= 2) {
      snprintf(what, sizeof what, "column_chunks: %lld groups -> one wave at two blocks an SM", groups);
      is(groups * chunks <= blocks && groups * (chunks + 1) > blocks, 1, what);
    }
  }
  is(tecc::column_chunks(1024, 2048, 4, 32), blocks / 8 < 4 ? blocks / 8 : 4, "column_chunks: at least 512 rows a chunk");
  is(tecc::column_chunks(1024, 1000, 4, 32), 1, "column_chunks: under two chunks of 512 rows -> no split");
  printf("1..%d\n", g_test);
  return g_failed ? 1 : 0;
}
