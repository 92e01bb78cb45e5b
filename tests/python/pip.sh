#!/bin/sh
# pip.sh — `pip install .` of the source tree's pyproject.toml (TAP): on a
# copy of the files it names (pyproject.toml, README.md, python/tecc/), so
# the source tree stays clean, into a --target directory, offline
# (--no-index --no-build-isolation): the package's files, no _config.py
# (a pip installation finds tecc through $TECC and PATH), the version of
# configure.ac, and `import tecc` from there.
#
# The Python that runs pip: $TECC_PIP_PYTHON, else the first of python3 and
# /usr/bin/python3 that can build a wheel offline (setuptools 70.1 or
# newer, or setuptools and wheel); skipped when none can.
. "$top_srcdir/tests/tap.sh"

# can_build PYTHON: pip, and setuptools that can build a wheel without
# downloading anything.
can_build() {
  "$1" -c '
import sys, setuptools, pip
v = tuple(int(x) for x in setuptools.__version__.split(".")[:2])
if v < (70, 1):
    import wheel
' > /dev/null 2>&1
}
py=
for candidate in ${TECC_PIP_PYTHON:-python3 /usr/bin/python3}; do
  if can_build "$candidate"; then py=$candidate; break; fi
done
[ -n "$py" ] || skip_all "no python3 with pip and setuptools that can build a wheel offline (setuptools >= 70.1, or setuptools and wheel)"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-pip.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$work/src/python/tecc"
(cd "$top_srcdir" && cp pyproject.toml README.md "$work/src/")
cp "$top_srcdir"/python/tecc/*.py "$work/src/python/tecc/"
chmod -R u+w "$work/src"
if (cd "$work" && PIP_CONFIG_FILE=/dev/null "$py" -m pip install --no-index --no-build-isolation \
      --no-deps --disable-pip-version-check --target "$work/site" "$work/src") > "$work/pip.log" 2>&1; then
  pass "$py -m pip install --no-index --no-build-isolation --target DIR ."
else
  fail "$py -m pip install --no-index --no-build-isolation --target DIR ."
  diag "$(tail -n 30 "$work/pip.log")"
  done_testing
fi

missing=
for m in __init__ __main__ build checks header loader ops; do
  [ -f "$work/site/tecc/$m.py" ] || missing="$missing $m.py"
done
is "$missing" "" "installed: every module of python/tecc"
ok "no _config.py: pip knows no bindir" test ! -e "$work/site/tecc/_config.py"

version=$("$TECC" --version | sed -n '1s/^tecc (tecc) //p')
ok "tecc-$version.dist-info: configure.ac's version" test -d "$work/site/tecc-$version.dist-info"
out=$(cd "$work" && PYTHONPATH="$work/site" "$py" -s -c 'import os, tecc
print(os.path.realpath(tecc.__file__)); print(tecc.__version__); print(tecc.find_tecc())' 2>&1)
is "$out" "$(cd "$work/site/tecc" && pwd -P)/__init__.py
$version
$TECC" "import tecc from the pip installation: its version, and \$TECC for tecc"
done_testing
