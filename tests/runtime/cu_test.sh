# cu_test.sh — sourced by the runtime's tests that build a .cu of their
# own with nvcc (host.sh and trig.sh on the host; runtime.sh and f8.sh on
# a GPU): skips the test file without nvcc (and, after need_gpu, without
# a GPU), makes $dir, a work directory removed on exit, and gives
# native_arch (below) and `run_cu NAME [NVCC FLAGS]`, which builds
# tests/runtime/NAME.cu and runs it (its TAP), or says in TAP that it
# does not compile.
: "${top_srcdir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
need_gpu() {
  if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "1..0 # SKIP no GPU"
    exit 0
  fi
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-rt.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# native_arch: prints -arch=native where this nvcc takes it (a probe, so
# that an error in the test itself is not retried for the default
# architecture), else nothing
native_arch() {
  printf '__global__ void k(void) {}\n' > "$dir/probe.cu"
  if "$NVCC" -arch=native -c -o "$dir/probe.o" "$dir/probe.cu" > /dev/null 2>&1; then
    echo -arch=native
  fi
}
run_cu() {
  name=$1
  shift
  if ! "$NVCC" -O2 -Werror all-warnings "$@" -o "$dir/$name" "$top_srcdir/tests/runtime/$name.cu" > "$dir/log" 2>&1; then
    echo "1..1"
    echo "not ok 1 - $name.cu compiles${*:+ ($*)}"
    sed 's/^/# /' "$dir/log"
    exit 0
  fi
  "$dir/$name"
}
