# tap.sh — TAP helpers for the shell tests (sourced; POSIX sh).
#
#   . "$top_srcdir/tests/tap.sh"
#   plan 3                        # or nothing, and done_testing prints it
#   ok "tecc exits 0" "$TECC" --version
#   is "$(cat out)" "expected" "output"
#   diff_ok "golden ir" expected.ir actual.ir
#   done_testing                  # exit status: 0 when all passed
#
# Other helpers: skip_all REASON, skip NAME REASON, diag TEXT, fail NAME,
# pass NAME, is_exit WANT NAME CMD... (checks the exit status exactly),
# have_jq (for the tests that read --emit=json).

tap_n=0
tap_failed=0
tap_planned=

plan() { tap_planned=$1; echo "1..$1"; }

skip_all() { echo "1..0 # SKIP $*"; exit 0; }

diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

pass() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }

fail() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $1"; }

skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }

# ok NAME CMD...: passes when CMD exits 0.
ok() {
  tap_name=$1; shift
  if "$@"; then pass "$tap_name"; else fail "$tap_name"; fi
}

# is_exit WANT NAME CMD...: passes when CMD exits with status WANT.
is_exit() {
  tap_want=$1 tap_name=$2; shift 2
  "$@"
  tap_got=$?
  if [ "$tap_got" = "$tap_want" ]; then pass "$tap_name"; else
    fail "$tap_name"; diag "exit status $tap_got, want $tap_want"; fi
}

# is GOT WANT NAME
is() {
  if [ "$1" = "$2" ]; then pass "$3"; else
    fail "$3"; diag "got:"; diag "$1"; diag "want:"; diag "$2"; fi
}

# diff_ok NAME EXPECTED ACTUAL: files equal; the diff is shown otherwise.
diff_ok() {
  if tap_diff=$(diff -u "$2" "$3" 2>&1); then pass "$1"; else
    fail "$1"; diag "$tap_diff"; fi
}

# have_jq: true when $JQ runs (configure's JQ, exported by make check;
# unset, as when a script runs by hand: jq from PATH); false when configure
# found no jq (the caller skips, saying so).  A jq that was named but does
# not run is no reason to skip: the test bails out, saying which.
have_jq() {
  : "${JQ=jq}"
  [ -n "$JQ" ] || return 1
  "$JQ" -n 1 > /dev/null 2>&1 && return 0
  echo "Bail out! jq ($JQ) does not run: install jq (Debian: apt-get install jq) and configure again"
  exit 1
}

done_testing() {
  [ -n "$tap_planned" ] || echo "1..$tap_n"
  if [ -n "$tap_planned" ] && [ "$tap_planned" != "$tap_n" ]; then
    diag "planned $tap_planned tests, ran $tap_n"
    exit 1
  fi
  [ "$tap_failed" -eq 0 ]
  exit $?
}
