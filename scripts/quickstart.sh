#!/bin/sh
# quickstart.sh — from a fresh Debian machine to a built tecc and a first
# generated kernel.  Installs what is missing (flex bison autoconf automake
# libtool pkg-config make gcc, cmake and ninja-build, which the test of
# the CMake package uses, and jq, which the tests read --emit=json with;
# with sudo unless run as root), generates the
# build system, configures and builds in the source tree, then compiles
# examples/softmax.te into quickstart/softmax.cu and quickstart/softmax.h
# (and, when nvcc is there, checks that the .cu compiles).
#
# Extra arguments go to configure; so do CFLAGS and the like from the
# environment.  Then run `make check`.
set -eu
cd "$(dirname "$0")/.."

say() { printf 'quickstart: %s\n' "$*"; }

# command:package pairs for what the build and the tests need.
tools="flex:flex bison:bison autoconf:autoconf automake:automake
libtoolize:libtool pkg-config:pkg-config make:make gcc:gcc
cmake:cmake ninja:ninja-build jq:jq"

missing=
for pair in $tools; do
  command -v "${pair%%:*}" > /dev/null 2>&1 || missing="$missing ${pair#*:}"
done
if [ -n "$missing" ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  say "installing:$missing"
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

say "autoreconf -fi"
autoreconf -fi
say "./configure $*"
./configure -q "$@"
jobs=$(getconf _NPROCESSORS_ONLN 2> /dev/null || echo 2)
say "make -j$jobs"
make -s -j"$jobs"

example=examples/softmax.te
mkdir -p quickstart
say "src/tecc $example -o quickstart/softmax.cu"
./src/tecc "$example" -o quickstart/softmax.cu
ls -l quickstart/softmax.cu quickstart/softmax.h

nvcc=$(sed -n 's/^NVCC = //p' Makefile)
if [ -n "$nvcc" ]; then
  say "$nvcc -c quickstart/softmax.cu"
  "$nvcc" -c quickstart/softmax.cu -o quickstart/softmax.o
else
  say "no nvcc found: the .cu was not compiled (configure --with-cuda=DIR)"
fi
say "done; run 'make check' for the test suite"
