#!/bin/sh
# python.sh — the Python module that `make install` puts in PKGPYTHONDIR
# (site-packages/tecc under the prefix), imported as a user would (TAP):
#   - the module's files are there, byte-compiled, with _config.py;
#   - `python3 -c "import tecc"` with PYTHONPATH set to PYTHONDIR imports
#     the installed copy (tecc.__file__ in PKGPYTHONDIR), whose version is
#     the installed tecc's;
#   - with $TECC unset and no tecc on PATH, tecc.find_tecc() is the
#     installed tecc, which runs; the source tree's copy (no _config.py)
#     finds none there.
#
# In `make check` it installs the command and the module into a temporary
# DESTDIR first (the module finds tecc from its own location, so a staged
# tree works); `make installcheck` runs it on the real installation, with
# TECC_PYTHONDIR set to ($DESTDIR)$pythondir, TECC_PKGPYTHONDIR to
# ($DESTDIR)$pkgpythondir and TECC_BINDIR to ($DESTDIR)$bindir.  PYTHON is
# configure's; skipped when configure found no Python.
. "$top_srcdir/tests/tap.sh"

unset MAKEFLAGS MFLAGS MAKELEVEL
if [ -z "${PYTHON:-}" ] || [ "$PYTHON" = : ]; then
  skip_all "configured without python3: the module is not installed"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-python-install.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
# The interpreter itself, not a wrapper that needs PATH (pyenv's shims).
python=$("$PYTHON" -c 'import sys; print(sys.executable)') || skip_all "$PYTHON does not run"

# --- the installation ------------------------------------------------------
if [ -n "${TECC_PKGPYTHONDIR:-}" ]; then
  pythondir=$TECC_PYTHONDIR pkg=$TECC_PKGPYTHONDIR bin=$TECC_BINDIR
else
  if "${MAKE:-make}" -C "$top_builddir" install-binPROGRAMS install-pkgpythonPYTHON \
       install-nodist_pkgpythonPYTHON DESTDIR="$work/stage" > "$work/install.log" 2>&1; then
    pass "make install-binPROGRAMS install-pkgpythonPYTHON DESTDIR=..."
  else
    fail "make install-binPROGRAMS install-pkgpythonPYTHON DESTDIR=..."
    diag "$(tail -n 20 "$work/install.log")"
    done_testing
  fi
  init=$(find "$work/stage" -path '*/tecc/__init__.py' | sed 1q)
  pkg=${init%/__init__.py} pythondir=${pkg%/tecc}
  bin=$(find "$work/stage" -path '*/bin/tecc' | sed 1q)
  bin=${bin%/tecc}
fi

missing=
for m in __init__ __main__ build checks header loader ops _config; do
  [ -f "$pkg/$m.py" ] || missing="$missing $m.py"
  ls "$pkg/__pycache__/$m".*.pyc > /dev/null 2>&1 || missing="$missing __pycache__/$m.*.pyc"
done
is "$missing" "" "installed in ${pkg#"$work/stage"}: every module and its byte code"

# --- a user's python: PYTHONPATH, no $TECC, no tecc on PATH ---------------
mkdir "$work/empty" "$work/cwd"
# user_python ARGS...: python3 ARGS in an empty directory, with only the
# installed module on PYTHONPATH and nothing on PATH.
user_python() {
  (cd "$work/cwd" && env -u TECC PATH="$work/empty" PYTHONPATH="$pythondir" "$python" -s "$@")
}
out=$(user_python -c 'import os, tecc
print(os.path.realpath(tecc.__file__))
print(tecc.__version__)
print(tecc.find_tecc())' 2>&1)
is "$(printf '%s\n' "$out" | sed -n 1p)" "$(cd "$pkg" && pwd -P)/__init__.py" \
  "import tecc with PYTHONPATH=${pythondir#"$work/stage"}: the installed copy"
installed=$(printf '%s\n' "$out" | sed -n 3p)
is "$installed" "$bin/tecc" "tecc.find_tecc() without \$TECC or PATH: the installed tecc"
version=$("$bin/tecc" --version 2> /dev/null | sed -n '1s/^tecc (tecc) //p')
is "$(printf '%s\n' "$out" | sed -n 2p)" "$version" "tecc.__version__ is the installed tecc's version"
if [ -n "$installed" ] && first=$("$installed" --version 2>&1 | sed 1q) &&
   [ "$first" = "tecc (tecc) $version" ]; then
  pass "the tecc it found runs: $first"
else
  fail "the tecc it found runs"; diag "$out"
fi

# Without _config.py (a source tree), the same lookup finds nothing: the
# installed copy above found tecc through what make install wrote.
if [ -d "$top_srcdir/python/tecc" ]; then
  out=$(cd "$work/cwd" && env -u TECC PATH="$work/empty" PYTHONPATH="$top_srcdir/python" \
    "$python" -s -c 'import tecc; tecc.find_tecc()' 2>&1)
  case $out in
    *"cannot find tecc (set \$TECC)"*) pass "the source tree's copy: no tecc without \$TECC or PATH" ;;
    *) fail "the source tree's copy: no tecc without \$TECC or PATH"; diag "$out" ;;
  esac
fi
done_testing
