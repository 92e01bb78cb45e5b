#!/bin/sh
# gpu-all.sh — every GPU check of the project in one command, sized to run
# in ten minutes on a 16-core machine with one H100:
#
#   sh tests/gpu-all.sh tecc-VERSION.tar.gz    (from `make dist`)
#   make gpu-all                               (in a configured tree: the
#                                               same, on its own `make dist`)
#
# It unpacks and builds the tarball (configure, make, make install into a
# staging directory), then runs these parts side by side, each with a log
# and one summary line:
#   random      GPU_ALL_FILES files of GPU_ALL_KERNELS random programs
#               (tests/gen/gen: 80 x 25 = 2000) at -O2, -O1 and -O0 through
#               tests/conform/tecc-conform: random inputs, size bindings 0,
#               1, odd primes and large ones, every element compared with
#               the reference interpreter (abi.md §6, with its magnitude
#               bound); built with GPU_ALL_RANDOM_FLAGS (below)
#   sanitize    compute-sanitizer memcheck, racecheck and initcheck over
#               GPU_ALL_SANITIZE random programs (100) at -O2, small bindings
#   tree        tecc-conform on every program in the tree (examples,
#               tests/programs, tests/stitch, tests/regress, tests/grad/programs) at -O2, -O1
#               and -O0, nvcc at full optimization (GPU_ALL_TREE_FLAGS)
#   hardening   tests/hardening/hardening.sh (status codes, nothing written
#               on error, threads x streams, graph capture = direct call
#               bitwise, repeated runs bitwise)
#   big         tests/conform/big.sh (tensors of more than 2^31 elements)
#   lag         tests/conform/lag.sh (batch norms larger than L2: the split
#               plan in one persistent launch, GroupSchedule.lag)
#   installcheck `make installcheck`: the installed tecc, libtecc, tecc.pc
#               and CMake package used from outside the tree, the examples'
#               demos run on the GPU
# and ends with one line `N passed, N failed` over their test points (a
# conformance program at one level is one point).  Exit status 0 when
# nothing failed.
#
# The random programs are compiled with `nvcc -O0 -Xcicc -O0 -Xptxas -O0`
# by default (GPU_ALL_RANDOM_FLAGS): they test what tecc's CUDA means, and
# at full optimization 2000 programs x 3 levels are about 40 minutes of
# nvcc on 16 cores; the tree's programs and the sanitizer's run at full
# optimization.  -O1 and -O2 often give the same code: a build cache keyed
# by the .cu, .h, wrapper and flags (tecc-conform --cache) compiles it once.
#
# Knobs: GPU_ALL_FILES (80), GPU_ALL_KERNELS (25), GPU_ALL_SANITIZE (100),
# GPU_ALL_SEED (1), GPU_ALL_JOBS (the CPU count), GPU_ALL_ARCH (native),
# GPU_ALL_RANDOM_FLAGS, GPU_ALL_PARTS (all of them: a subset, by name),
# GPU_ALL_TREE (the tree part's programs, globs relative to the tarball's
# top; default all of them), GPU_ALL_TREE_FLAGS (its nvcc flags, "-O2
# -lineinfo"; the whole tree takes more than ten minutes on an H200's
# 16 cores, and with the random part's "-O0 -Xcicc -O0 -Xptxas -O0"
# examples, tests/programs and tests/regress took 7.5: bench/NOTES.md),
# GPU_ALL_SANITIZE_TE (programs of the tree,
# globs, for the sanitizer instead of random ones) and
# GPU_ALL_SANITIZE_ELEMENTS (its largest binding, 20000),
# GPU_ALL_WORK (a directory to work and keep the logs in; default a new
# one under TMPDIR, removed unless something failed).
set -u
tarball=${1:-}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
  echo "usage: tests/gpu-all.sh tecc-VERSION.tar.gz  (make dist)" >&2
  exit 2
fi
case $tarball in /*) ;; *) tarball=$(pwd)/$tarball ;; esac
files=${GPU_ALL_FILES:-80}
kernels=${GPU_ALL_KERNELS:-25}
nsanitize=${GPU_ALL_SANITIZE:-100}
seed=${GPU_ALL_SEED:-1}
jobs=${GPU_ALL_JOBS:-$(nproc 2> /dev/null || echo 2)}
arch=${GPU_ALL_ARCH:-native}
random_flags=${GPU_ALL_RANDOM_FLAGS:--O0 -Xcicc -O0 -Xptxas -O0}
parts=${GPU_ALL_PARTS:-random sanitize tree hardening big lag installcheck}
nvcc=${NVCC:-nvcc}
if [ -n "${GPU_ALL_WORK:-}" ]; then
  work=$GPU_ALL_WORK
  mkdir -p "$work" || exit 2
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-gpu-all.XXXXXX") || exit 2
fi
start=$(date +%s)
say() { printf 'gpu-all: %s\n' "$*"; }
elapsed() { echo $(($(date +%s) - $1)); }

# ---- build ---------------------------------------------------------------
t=$(date +%s)
say "work directory $work; $jobs jobs; $(nvidia-smi -L 2> /dev/null | head -n 1)"
mkdir -p "$work/src" "$work/stage"
tar xzf "$tarball" -C "$work/src" || { say "cannot unpack $tarball"; exit 2; }
src=$(ls -d "$work"/src/tecc-* | head -n 1)
if ! (cd "$src" && ./configure -q --prefix="$work/prefix" > "$work/build.log" 2>&1 &&
      make -s -j"$jobs" >> "$work/build.log" 2>&1 &&
      make -s -j"$jobs" tests/gen/gen tests/conform/tecc-conform >> "$work/build.log" 2>&1 &&
      make -s install DESTDIR="$work/stage" >> "$work/build.log" 2>&1); then
  tail -n 30 "$work/build.log"
  say "build: FAILED"
  echo "0 passed, 1 failed"
  exit 1
fi
say "build: ok, configure + make + make install ($(elapsed "$t") s)"
cd "$src" || exit 2
conform=$src/tests/conform/tecc-conform
gen=$src/tests/gen/gen
export TECC="$src/src/tecc" NVCC="$nvcc" top_srcdir="$src" top_builddir="$src"
export CONFORM_ARCH="$arch"
tree_flags=${GPU_ALL_TREE_FLAGS:--O2 -lineinfo}
tree_programs=${GPU_ALL_TREE:-"examples/*.te tests/programs/*.te tests/stitch/*.te tests/regress/*.te tests/grad/programs/*.te"}

# Each part writes $work/NAME.out: "pass fail seconds summary...".
result() { # NAME PASS FAIL T0 SUMMARY
  echo "$2 $3 $(elapsed "$4") $5" > "$work/$1.out"
}

# conform NAME ARGS...: tecc-conform at -O2, -O1 and -O0 in one run (one
# reference per binding, compared with each level; -O1 after -O2, whose
# objects it reuses where the code is the same)
conform() {
  name=$1 niceness=$2
  shift 2
  nice -n "$niceness" "$conform" -O2 -O1 -O0 --jobs="$jobs" --nvcc="$nvcc" --arch="$arch" --seed="$seed" \
    --workdir="$work/$name.build" --cache="$work/cache" "$@" > "$work/$name.log" 2>&1
  echo $? > "$work/$name.rc"
}
# conform_counts NAME: "PASS FAIL" of a conform part; a run that stopped
# without reporting a failure (tecc-conform aborted, say) counts one
conform_counts() {
  # shellcheck disable=SC2046
  set -- $(count_tap "$work/$1.log") "$(cat "$work/$1.rc")"
  if [ "$3" != 0 ] && [ "$2" = 0 ]; then echo "$1 1"; else echo "$1 $2"; fi
}
count_tap() { # LOG...: "PASS FAIL"
  p=$(cat "$@" | grep -c '^ok ')
  f=$(cat "$@" | grep -c '^not ok ')
  echo "$p $f"
}
summaries() { # LOG...: the conformance summary lines, joined
  grep -h '^# conformance' "$@" | sed 's/^# conformance //' | tr '\n' ';' | sed 's/;$//'
}

part_random() {
  t0=$(date +%s)
  mkdir -p "$work/random"
  i=0
  while [ $i -lt "$files" ]; do
    i=$((i + 1))
    "$gen" --seed $((seed * 100000 + i)) --kernels "$kernels" --max-elements 100000 \
      > "$work/random/g$i.te"
  done
  # the bulk of the CPU time: it yields to the parts with long serial tails
  conform random 5 --nvcc-flags="$random_flags -DTECC_INDEX64=0" "$work"/random/g*.te
  # shellcheck disable=SC2046
  result random $(conform_counts random) "$t0" "$(summaries "$work/random.log")"
}

part_sanitize() {
  t0=$(date +%s)
  sanitizer=$(command -v compute-sanitizer 2> /dev/null ||
    echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
  # files of at most 25 kernels, so that nvcc builds them side by side
  mkdir -p "$work/sanitize"
  i=0 left=$nsanitize
  while [ "$left" -gt 0 ]; do
    i=$((i + 1)) k=$((left < 25 ? left : 25)) left=$((left - 25))
    "$gen" --seed $((seed * 100000 + 90000 + i)) --kernels $k --max-elements 20000 \
      > "$work/sanitize/s$i.te"
  done
  set -- "$work"/sanitize/s*.te
  if [ -n "${GPU_ALL_SANITIZE_TE:-}" ]; then
    # shellcheck disable=SC2086
    set -- $GPU_ALL_SANITIZE_TE
  fi
  common="--quick --max-elements=${GPU_ALL_SANITIZE_ELEMENTS:-20000} --workdir=$work/sanitize.build --nvcc=$nvcc --arch=$arch"
  flags="--nvcc-flags=-O2 -lineinfo -DTECC_INDEX64=0"
  # shellcheck disable=SC2086
  if ! "$conform" --build-only --jobs="$jobs" $common "$flags" "$@" > "$work/sanitize.build.log" 2>&1; then
    result sanitize 0 1 "$t0" "building $nsanitize random kernels failed"
    return
  fi
  # the three tools side by side: each watches its own process
  # (each in a copy of the objects: a run writes its logs beside them)
  for tool in memcheck racecheck initcheck; do
    cp -R "$work/sanitize.build" "$work/sanitize.$tool"
    # shellcheck disable=SC2086
    ("$sanitizer" --tool "$tool" --error-exitcode 99 --target-processes application-only \
      "$conform" --prebuilt --no-fork $common --workdir="$work/sanitize.$tool" "$flags" "$@" \
      > "$work/sanitize.$tool.log" 2>&1
     echo $? > "$work/sanitize.$tool.rc") &
  done
  wait
  pass=0 fail=0 line=
  for tool in memcheck racecheck initcheck; do
    log=$work/sanitize.$tool.log
    s=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
    k=$(grep -o '[0-9]* kernels, [0-9]* size bindings' "$log" | tail -n 1)
    if [ "$(cat "$work/sanitize.$tool.rc")" = 0 ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
    fi
    line="$line $tool: ${s:-no summary} ($k);"
  done
  result sanitize $pass $fail "$t0" "$line"
}

part_tree() {
  t0=$(date +%s)
  # shellcheck disable=SC2086
  conform tree 0 --nvcc-flags="$tree_flags -DTECC_INDEX64=0" $tree_programs
  # shellcheck disable=SC2046
  result tree $(conform_counts tree) "$t0" "$(summaries "$work/tree.log")"
}

part_tap_script() { # NAME SCRIPT
  t0=$(date +%s)
  sh "$2" > "$work/$1.log" 2>&1
  rc=$?
  set -- "$1" $(count_tap "$work/$1.log")
  [ $rc -ne 0 ] && [ "$3" -eq 0 ] && set -- "$1" "$2" 1
  # a skip here is a check that did not run: this command is for a GPU
  skipped=$(grep -h '^1\.\.0 # SKIP' "$work/$1.log")
  [ -n "$skipped" ] && set -- "$1" "$2" $(($3 + 1))
  result "$1" "$2" "$3" "$t0" "exit $rc${skipped:+, $skipped}"
}

part_installcheck() {
  t0=$(date +%s)
  make installcheck DESTDIR="$work/stage" > "$work/installcheck.log" 2>&1
  rc=$?
  p=$(grep -c 'installcheck: ok -\|^ok ' "$work/installcheck.log")
  f=$(grep -c 'installcheck: FAILED\|^not ok ' "$work/installcheck.log")
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
  result installcheck "$p" "$f" "$t0" \
    "$(grep -o 'demo ran on the GPU: .*' "$work/installcheck.log" | head -n 1), exit $rc"
}

for part in $parts; do
  case $part in
    random) part_random & ;;
    sanitize) part_sanitize & ;;
    tree) part_tree & ;;
    hardening) part_tap_script hardening tests/hardening/hardening.sh & ;;
    big) part_tap_script big tests/conform/big.sh & ;;
    lag) part_tap_script lag tests/conform/lag.sh & ;;
    installcheck) part_installcheck & ;;
    *) say "unknown part $part" ;;
  esac
done
wait

passed=0 failed=0
for part in $parts; do
  if [ ! -f "$work/$part.out" ]; then
    say "$part: FAILED (no result)"
    failed=$((failed + 1))
    continue
  fi
  read -r p f s rest < "$work/$part.out"
  passed=$((passed + p)) failed=$((failed + f))
  if [ "$f" -eq 0 ]; then st=ok; else st=FAILED; fi
  say "$part: $st, $p passed, $f failed ($s s): $rest"
  if [ "$f" -ne 0 ]; then
    grep -h -E '^not ok|FAIL|ERROR|Bail out' "$work/$part"*.log 2> /dev/null | head -n 20 |
      sed 's/^/gpu-all:   /'
  fi
done
say "wall time $(elapsed "$start") s; logs in $work"
echo "$passed passed, $failed failed"
if [ "$failed" -eq 0 ] && [ -z "${GPU_ALL_WORK:-}" ]; then
  rm -rf "$work"
fi
[ "$failed" -eq 0 ]
