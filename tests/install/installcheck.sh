#!/bin/sh
# installcheck.sh — `make installcheck`: what `make install` put in place
# works for a user who has only the installed files.
#
#   installcheck.sh SRCDIR
#
# Environment (set by Makefile.am's installcheck-local): prefix, bindir,
# libdir, includedir, mandir, DESTDIR (may be empty), NVCC and CUDA_HOME
# (empty without CUDA).
#
# It checks the installed tecc (--version as GNU asks, --help), tecc.h,
# libtecc (shared and static), tecc.pc and the man page.  Then, in a
# directory outside the source and build trees, it builds the examples as a
# user would, with nothing but the installed tecc on PATH and pkg-config:
#   - examples/scripted: a program on libtecc's C API, linked against the
#     shared library (and once against the static one), which it runs;
#   - examples/: tecc -> .cu -> nvcc -> libexamples.a/.so and demo programs,
#     run on a GPU when there is one (they check the kernels on the host).
# Exit status 0 when everything that could run passed.
set -u
srcdir=$1
failed=0
say() { printf 'installcheck: %s\n' "$*"; }
pass() { say "ok - $*"; }
fail() { say "FAILED - $*"; failed=1; }

bin=$DESTDIR$bindir lib=$DESTDIR$libdir inc=$DESTDIR$includedir
man=$DESTDIR$mandir
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-installcheck.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# --- the installed files ---------------------------------------------------
for f in "$bin/tecc" "$inc/tecc.h" "$lib/pkgconfig/tecc.pc" "$man/man1/tecc.1"; do
  if [ -s "$f" ]; then pass "installed: $f"; else fail "not installed: $f"; fi
done
for f in "$lib"/libtecc.so "$lib"/libtecc.a; do
  if [ -e "$f" ]; then pass "installed: $f"; else fail "not installed: $f (libtool, shared and static)"; fi
done

# --version, GNU style: "tecc (tecc) X.Y.Z", then copyright and warranty.
version=$("$bin/tecc" --version 2>&1) || fail "tecc --version exits 0"
first=$(printf '%s\n' "$version" | sed 1q)
case $first in
  "tecc (tecc) "[0-9]*) pass "tecc --version: $first" ;;
  *) fail "tecc --version's first line is '$first', not 'tecc (tecc) VERSION'" ;;
esac
printf '%s\n' "$version" | grep -q '^Copyright' || fail "tecc --version names no copyright"
if "$bin/tecc" --help 2>&1 | grep -q '^Usage: tecc'; then pass "tecc --help"; else fail "tecc --help"; fi

# --- a user's directory: only the installed tecc and pkg-config -----------
PATH=$bin:$PATH
PKG_CONFIG_PATH=$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH PKG_CONFIG_PATH LD_LIBRARY_PATH
unset MAKEFLAGS MFLAGS MAKELEVEL
if ! command -v pkg-config > /dev/null 2>&1; then
  fail "no pkg-config: cannot build against tecc.pc"
  exit 1
fi
# With DESTDIR the files are not yet where tecc.pc says: move its prefix.
pc="pkg-config"
[ -z "$DESTDIR" ] || pc="pkg-config --define-variable=prefix=$DESTDIR$prefix"
cflags=$($pc --cflags tecc) && libs=$($pc --libs tecc) ||
  { fail "pkg-config --cflags --libs tecc"; exit 1; }
pass "pkg-config: cflags '$cflags', libs '$libs'"
[ "$($pc --modversion tecc)" = "$(printf '%s\n' "$first" | sed 's/.* //')" ] ||
  fail "tecc.pc's version is not tecc --version's"

cp -R "$srcdir/examples/scripted" "$work/scripted"
chmod -R u+w "$work/scripted"
rm -rf "$work/scripted/gen"
if make -C "$work/scripted" TECC_CFLAGS="$cflags" TECC_LIBS="$libs" \
     libtecc_demo > "$work/scripted.log" 2>&1 &&
   readelf -d "$work/scripted/libtecc_demo" | grep -q 'NEEDED.*libtecc\.so' &&
   "$work/scripted/libtecc_demo" > "$work/demo.out" 2>&1; then
  pass "examples/scripted: libtecc_demo built with pkg-config (shared libtecc) and ran"
else
  cat "$work/scripted.log" "$work/demo.out" 2> /dev/null | tail -n 20
  fail "examples/scripted: libtecc_demo against the shared libtecc"
fi
if ${CC:-cc} -std=c99 $cflags -o "$work/demo-static" "$work/scripted/libtecc_demo.c" \
     "$lib/libtecc.a" -lm > "$work/static.log" 2>&1 &&
   "$work/demo-static" > "$work/demo-static.out" 2>&1; then
  pass "libtecc_demo linked against the static libtecc.a ran"
else
  cat "$work/static.log" "$work/demo-static.out" | tail -n 20
  fail "libtecc_demo against libtecc.a"
fi
if cmp -s "$work/demo.out" "$work/demo-static.out"; then
  pass "the shared and the static library give the same output"
else
  fail "the shared and the static library give different output"
fi

# --- kernels: installed tecc, then nvcc, then a C program -----------------
if [ -z "$NVCC" ]; then
  say "skipped: examples/ with nvcc (configured without CUDA)"
  exit $failed
fi
mkdir "$work/examples"
if make -j"$(nproc 2> /dev/null || echo 2)" -C "$work/examples" -f "$srcdir/examples/Makefile" srcdir="$srcdir/examples" \
     TECC=tecc NVCC="$NVCC" CUDA_HOME="$CUDA_HOME" > "$work/examples.log" 2>&1; then
  pass "examples/: the installed tecc and nvcc built libexamples.a, libexamples.so and the demos"
else
  tail -n 30 "$work/examples.log"
  fail "examples/ with the installed tecc"
fi
if ! nvidia-smi -L > /dev/null 2>&1; then
  say "skipped: running the demos (no GPU)"
else
  for demo in demo demo-shared; do
    if "$work/examples/$demo" 1000 777 > "$work/$demo.log" 2>&1; then
      pass "$demo ran on the GPU: $(tail -n 1 "$work/$demo.log")"
    else
      cat "$work/$demo.log"
      fail "$demo on the GPU"
    fi
  done
fi
exit $failed
