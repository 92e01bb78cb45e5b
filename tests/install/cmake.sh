#!/bin/sh
# cmake.sh — the CMake package that `make install` puts in LIBDIR/cmake/tecc,
# used as a CMake user would (TAP):
#   - find_package(tecc) with version requests; the imported targets
#     tecc::libtecc (shared) and tecc::libtecc_static link a C program on
#     libtecc's API (examples/scripted/libtecc_demo.c), which runs;
#   - tecc_add_library()'s messages for wrong arguments;
#   - options for one file (the source file property TECC_OPTIONS): a -D
#     for one file of two under -Werror builds, where the same -D in
#     OPTIONS fails (tecc warns about it in the file without that size);
#   - examples/cmake built with the "Unix Makefiles" and the Ninja
#     generators: touching the .te file that bias_swish.te imports
#     regenerates bias_swish.cu (and not row_norm.cu) and relinks the
#     library; a second build with nothing touched does nothing; on a GPU
#     the demo runs and checks its results.
#
# In `make check` it installs the build tree into a temporary DESTDIR first
# (the package finds its prefix from where it lies, so a staged tree works);
# `make installcheck` runs it on the real installation, with TECC_PREFIX set
# to ($DESTDIR)$prefix and TECC_CMAKE_DIR to ($DESTDIR)$libdir/cmake/tecc.  Skipped without cmake 3.20 or nvcc; the Ninja half
# is skipped without ninja.
. "$top_srcdir/tests/tap.sh"

unset MAKEFLAGS MFLAGS MAKELEVEL
[ -n "${NVCC:-}" ] || skip_all "configured without CUDA (no nvcc)"
command -v cmake > /dev/null 2>&1 || skip_all "no cmake (Debian: apt-get install cmake)"
cmake_version=$(cmake --version | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p')
case $cmake_version in
  [012].* | 3.[0-9] | 3.[0-9].* | 3.1[0-9] | 3.1[0-9].*)
    skip_all "cmake $cmake_version is older than 3.20" ;;
esac
nvcc_major=$("$NVCC" --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p' | sed 1q)
nvcc_major=${nvcc_major:-0}
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-cmake.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

# --- the installation ------------------------------------------------------
if [ -n "${TECC_PREFIX:-}" ]; then
  prefix=$TECC_PREFIX
else
  configured=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
  if "${MAKE:-make}" -C "$top_builddir" install DESTDIR="$work/stage" > "$work/install.log" 2>&1; then
    pass "make install DESTDIR=..."
  else
    fail "make install DESTDIR=..."
    diag "$(tail -n 20 "$work/install.log")"
    done_testing
  fi
  prefix=$work/stage$configured
fi
if [ -n "${TECC_CMAKE_DIR:-}" ]; then
  config=$TECC_CMAKE_DIR/teccConfig.cmake
else
  config=$(find "$prefix" -path '*/cmake/tecc/teccConfig.cmake' | sed 1q)
fi
if [ -n "$config" ] && [ -f "$config" ] && [ -f "${config%/*}/teccConfigVersion.cmake" ] &&
   [ -f "${config%/*}/teccAddLibrary.cmake" ]; then
  pass "installed: ${config#"$prefix"/} with its version file and teccAddLibrary.cmake"
else
  fail "LIBDIR/cmake/tecc/teccConfig.cmake, teccConfigVersion.cmake, teccAddLibrary.cmake installed"
  done_testing
fi
version=$("$TECC" --version | sed -n '1s/.* //p')

# configure DIR BUILD [ARGS...]: cmake -S DIR -B BUILD, finding tecc as
# a user does, through CMAKE_PREFIX_PATH; the output in BUILD.log.
configure() {
  cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="${SAN_CFLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${SAN_CFLAGS:-}" \
    "$@" > "$2.log" 2>&1
}

# --- find_package and the libtecc targets ---------------------------------
mkdir "$work/api"
cp "$top_srcdir/examples/scripted/libtecc_demo.c" "$work/api/"
cat > "$work/api/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(api LANGUAGES C)
find_package(tecc ${WANT} CONFIG REQUIRED)
message(STATUS "found tecc ${tecc_VERSION}")
add_executable(demo_static libtecc_demo.c)
target_link_libraries(demo_static PRIVATE tecc::libtecc_static)
if(TARGET tecc::libtecc_shared)
  add_executable(demo_shared libtecc_demo.c)
  target_link_libraries(demo_shared PRIVATE tecc::libtecc)
endif()
EOF
if configure "$work/api" "$work/api-build" -DWANT="$version" &&
   grep -q "found tecc $version" "$work/api-build.log"; then
  pass "find_package(tecc $version CONFIG REQUIRED)"
else
  fail "find_package(tecc $version CONFIG REQUIRED)"
  diag "$(cat "$work/api-build.log")"
fi
next_minor=$(echo "$version" | awk -F. '{ print $1 "." $2 + 1 }')
if configure "$work/api" "$work/api-newer" -DWANT="$next_minor"; then
  fail "find_package(tecc $next_minor) refuses tecc $version"
else
  pass "find_package(tecc $next_minor) refuses tecc $version"
fi
if cmake --build "$work/api-build" > "$work/api-make.log" 2>&1 &&
   "$work/api-build/demo_static" > "$work/api-static.out" 2>&1; then
  pass "tecc::libtecc_static: libtecc_demo built and ran"
else
  fail "tecc::libtecc_static: libtecc_demo built and ran"
  diag "$(tail -n 20 "$work/api-make.log" "$work/api-static.out")"
fi
if [ ! -x "$work/api-build/demo_shared" ]; then
  skip "tecc::libtecc (shared)" "no shared libtecc installed"
elif "$work/api-build/demo_shared" > "$work/api-shared.out" 2>&1 &&
     cmp -s "$work/api-static.out" "$work/api-shared.out"; then
  pass "tecc::libtecc (shared): the same output"
else
  fail "tecc::libtecc (shared): the same output"
fi

# --- tecc_add_library's messages (no compiler needed) ---------------------
mkdir -p "$work/args/sub"
printf 'x: f32[N]\ny = x\n' > "$work/args/a.te"
cp "$work/args/a.te" "$work/args/sub/a.te"
cat > "$work/args/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(args LANGUAGES NONE)
find_package(tecc CONFIG REQUIRED)
if(DEFINED FILE_OPTIONS)
  set_source_files_properties(a.te PROPERTIES TECC_OPTIONS "${FILE_OPTIONS}")
endif()
tecc_add_library(${ARGS})
EOF
# refused ARGS MESSAGE [CMAKE-ARG...]: tecc_add_library(ARGS) stops cmake
# with MESSAGE.
refused() {
  rm -rf "$work/args-build"
  refused_args=$1 refused_message=$2
  shift 2
  if configure "$work/args" "$work/args-build" -DARGS="$refused_args" "$@"; then
    fail "tecc_add_library($refused_args) is refused"
  elif tr '\n' ' ' < "$work/args-build.log" | sed 's/  */ /g' | grep -qF "$refused_message"; then
    pass "tecc_add_library($refused_args): $refused_message"
  else
    fail "tecc_add_library($refused_args): $refused_message"
    diag "$(cat "$work/args-build.log")"
  fi
}
refused "k" "no .te files given"
refused "k;STATIC;SHARED;a.te" "STATIC and SHARED both given"
refused "k;a.cu" "'a.cu' is not a .te file"
refused "k;missing.te" "cannot find 'missing.te'"
refused "k;a.te;sub/a.te" "two .te files named a.te"
refused "k;a.te;OPTIONS;-o;x.cu" "OPTIONS may not contain '-o'"
refused "k;a.te;OPTIONS;-O2;-D" "'-D' at the end of OPTIONS needs a value"
refused "k;a.te" "the CUDA language is not enabled"
refused "k;a.te" "the TECC_OPTIONS of a.te may not contain '-MF'" -DFILE_OPTIONS="-MF;x.d"
refused "k;a.te" "'-D' at the end of the TECC_OPTIONS of a.te needs a value" -DFILE_OPTIONS="-D"

# --- options for one file ---------------------------------------------------
# rows.te has the size variable D and flat.te none: -D D=64 must reach
# rows.te alone, or tecc warns in flat.te, and -Werror makes that an error.
mkdir "$work/perfile"
printf 'x: f32[N, D]\ns = sum(x, -1)\n' > "$work/perfile/rows.te"
printf 'x: f32[N]\ny = x * 2\n' > "$work/perfile/flat.te"
cat > "$work/perfile/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(perfile LANGUAGES CUDA)
find_package(tecc CONFIG REQUIRED)
set_source_files_properties(rows.te PROPERTIES TECC_OPTIONS "${ROWS_OPTIONS}")
tecc_add_library(k STATIC rows.te flat.te OPTIONS -Werror ${ALL_OPTIONS})
if(DEFINED LATE_OPTIONS)
  set_source_files_properties(flat.te PROPERTIES TECC_OPTIONS "${LATE_OPTIONS}")
endif()
EOF
b=$work/perfile-build
if configure "$work/perfile" "$b" -DROWS_OPTIONS="-D;D=64" &&
   cmake --build "$b" > "$b.make.log" 2>&1; then
  pass "TECC_OPTIONS -D D=64 on rows.te, OPTIONS -Werror: built"
else
  fail "TECC_OPTIONS -D D=64 on rows.te, OPTIONS -Werror: built"
  diag "$(tail -n 30 "$b.log" "$b.make.log")"
fi
# The entry points: rows takes N alone (D is bound), flat takes N.
is "$(grep -ho 'int64_t [A-Z]' "$b/k.tecc/rows.h" "$b/k.tecc/flat.h" 2> /dev/null | tr '\n' ' ')" \
  "int64_t N int64_t N " "rows.h: D bound by its TECC_OPTIONS; flat.h: untouched"
b=$work/perfile-all
if configure "$work/perfile" "$b" -DALL_OPTIONS="-D;D=64" &&
   ! cmake --build "$b" > "$b.make.log" 2>&1 &&
   grep -q "no size variable named 'D'" "$b.make.log"; then
  pass "the same -D in OPTIONS: flat.te fails under -Werror"
else
  fail "the same -D in OPTIONS: flat.te fails under -Werror"
  diag "$(tail -n 30 "$b.log" "$b.make.log")"
fi
b=$work/perfile-late
if configure "$work/perfile" "$b" -DLATE_OPTIONS="-O1"; then
  fail "TECC_OPTIONS set after tecc_add_library() are refused"
elif tr '\n' ' ' < "$b.log" | sed 's/  */ /g' |
     grep -qF "the TECC_OPTIONS of flat.te were set after tecc_add_library(k), which read them"; then
  pass "TECC_OPTIONS set after tecc_add_library() are refused"
else
  fail "TECC_OPTIONS set after tecc_add_library() are refused"
  diag "$(cat "$b.log")"
fi

# --- examples/cmake with each generator -----------------------------------
products="kernels.tecc/bias_swish.cu kernels.tecc/bias_swish.h kernels.tecc/row_norm.cu
kernels.tecc/row_norm.h libkernels.a demo"

# newer DIR STAMP FILE...: the FILEs (in DIR) written after STAMP.
newer() {
  dir=$1 stamp=$2; shift 2
  for f in "$@"; do find "$dir/$f" -newer "$stamp"; done | sed "s|^$dir/||" | tr '\n' ' '
}

all_exist() {
  for f in "$@"; do test -s "$f" || return 1; done
}

# example GENERATOR TAG: configure, build, rebuild after touching the
# import, build again with nothing touched, and run the demo on a GPU.
example() {
  g=$1 src=$work/src-$2 b=$work/build-$2
  cp -R "$top_srcdir/examples/cmake" "$src"
  chmod -R u+w "$src"
  if configure "$src" "$b" -G "$g" && cmake --build "$b" > "$b.make.log" 2>&1; then
    pass "$g: examples/cmake configured and built"
  else
    fail "$g: examples/cmake configured and built"
    diag "$(tail -n 30 "$b.log" "$b.make.log")"
    return
  fi
  # shellcheck disable=SC2046,SC2086
  ok "$g: the generated files, the library and the demo exist" \
    all_exist $(for f in $products; do echo "$b/$f"; done)
  # nvcc 12 or newer: the generated .cu files built with --split-compile=0
  # (their kernels optimized on every core); older, the flag nowhere.
  split=$(grep -rl -- '--split-compile=0' "$b/build.ninja" "$b/CMakeFiles" 2>/dev/null | head -n 1)
  if [ "$nvcc_major" -ge 12 ]; then
    ok "$g: nvcc $nvcc_major: the generated files built with --split-compile=0" test -n "$split"
  else
    is "$split" "" "$g: nvcc $nvcc_major: no --split-compile"
  fi

  touch "$b/stamp"
  cmake --build "$b" > "$b.again.log" 2>&1
  # shellcheck disable=SC2086
  is "$(newer "$b" "$b/stamp" $products)" "" "$g: nothing touched: nothing rebuilt"
  if grep -q "tecc \|Building\|Linking" "$b.again.log"; then
    fail "$g: nothing touched: no command ran"; diag "$(cat "$b.again.log")"
  else pass "$g: nothing touched: no command ran"; fi
  if [ "$g" = Ninja ]; then
    is "$(cmake --build "$b" -- -n | sed -n '$p')" "ninja: no work to do." "$g: ninja -n: no work to do"
  fi

  # Touched, the import makes tecc run again, but tecc leaves the .cu and
  # .h alone when their contents do not change (doc/cli.md), so nothing
  # is recompiled or relinked.  Edited, it regenerates what imports it.
  # CMake's Makefile generators touch a custom command's second output
  # (the .h) after running it, so there the .h looks new either way.
  sleep 1 # a later time stamp on any file system
  touch "$src/lib/act.te"
  touch "$b/stamp"
  cmake --build "$b" > "$b.touched.log" 2>&1
  is "$(newer "$b" "$b/stamp" kernels.tecc/bias_swish.cu kernels.tecc/row_norm.cu)" "" \
    "$g: the import touched, not changed: no .cu rewritten"
  h=
  if [ "$g" = Ninja ]; then
    # shellcheck disable=SC2086
    is "$(newer "$b" "$b/stamp" $products)" "" \
      "$g: the import touched, not changed: nothing recompiled or relinked"
  else
    h="kernels.tecc/bias_swish.h "
    skip "$g: the import touched, not changed: nothing recompiled or relinked" \
      "CMake's Makefile generators touch the .h, the custom command's second output"
  fi
  cp "$src/lib/act.te" "$b/act.te.orig"
  sleep 1
  printf 'fn swish(x) = x * sigmoid(2.0 * x)\n' > "$src/lib/act.te"
  touch "$b/stamp"
  cmake --build "$b" > "$b.edited.log" 2>&1
  # shellcheck disable=SC2086
  is "$(newer "$b" "$b/stamp" $products)" \
    "kernels.tecc/bias_swish.cu ${h}libkernels.a demo " \
    "$g: the import edited: bias_swish.cu regenerated (not row_norm.cu), library relinked"
  sleep 1
  cp "$b/act.te.orig" "$src/lib/act.te"
  cmake --build "$b" > "$b.restored.log" 2>&1
  touch "$b/stamp"
  cmake --build "$b" > "$b.after.log" 2>&1
  # shellcheck disable=SC2086
  is "$(newer "$b" "$b/stamp" $products)" "" "$g: then nothing to do"

  if ! nvidia-smi -L > /dev/null 2>&1; then
    skip "$g: the demo on the GPU" "no GPU"
  elif "$b/demo" > "$b.demo.log" 2>&1; then
    pass "$g: $(cat "$b.demo.log")"
  else
    fail "$g: the demo on the GPU"; diag "$(cat "$b.demo.log")"
  fi
}

example "Unix Makefiles" make
if command -v ninja > /dev/null 2>&1; then
  example Ninja ninja
else
  skip "Ninja: examples/cmake" "no ninja (Debian: apt-get install ninja-build)"
fi
done_testing
