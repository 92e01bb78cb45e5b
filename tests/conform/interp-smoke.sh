#!/bin/sh
# interp-smoke.sh — no GPU needed: every test program and example goes
# through libtecc's front end and the reference interpreter (lib/interp.c,
# in the noinst library lib/libteccinterp.la: not installed) for the small
# size bindings of the conformance runner (tecc-conform --no-device --quick).
: "${top_srcdir:=.}" "${top_builddir:=.}"
exec "$top_builddir/tests/conform/tecc-conform" --tap --no-device --quick \
  "$top_srcdir"/tests/programs/*.te "$top_srcdir"/examples/*.te
