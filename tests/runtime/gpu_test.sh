# gpu_test.sh — sourced by the runtime's GPU tests (runtime.sh, f8.sh):
# skips the test file without nvcc or without a GPU, else makes $dir, a
# work directory removed on exit.
: "${top_srcdir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "1..0 # SKIP no GPU"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-rt.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
