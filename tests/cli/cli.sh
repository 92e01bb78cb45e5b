#!/bin/sh
# cli.sh — the tecc command's behaviour (doc/cli.md): options, exit codes,
# standard input and output, where files go, atomic writes.
. "$top_srcdir/tests/tap.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-cli.XXXXXX") || exit 1
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1

printf 'x: f32[N, D]\ny = sum(exp(x - max(x, -1)), -1)\n' > good.te
printf 'x: f32[N]\ny = (x +\nz = x\n' > bad.te
printf 'x: f32[N]\n' > empty_kernel.te

# run ARGS...: runs tecc; $rc, out (stdout) and err (stderr) files.
run() {
  "$TECC" "$@" > out 2> err
  rc=$?
}

# --- --version, --help -----------------------------------------------------
run --version
is "$rc" 0 "--version exits 0"
is "$(head -n 1 out)" "tecc (tecc) 0.1.0" "--version first line"
ok "--version prints a copyright line" grep -q '^Copyright (C) ' out
ok "--version prints nothing on stderr" test ! -s err

run --help
is "$rc" 0 "--help exits 0"
missing=
for opt in -o -H --header= --emit= -O0 -O1 -O2 -I -D --arch= --name= \
  --explain -MD -MF -MT -MP -Werror ' -w ' --fdiagnostics-plain --version --help; do
  grep -q -e "$opt" out || missing="$missing $opt"
done
is "$missing" "" "--help lists every option of doc/cli.md"
ok "--help starts with a usage line" grep -q '^Usage: tecc ' out
run good.te --help --bogus
is "$rc" 0 "--help acts at once, before later arguments"

# --- usage errors ------------------------------------------------------------
run --foo good.te
is "$rc" 2 "unknown option: exit 2"
is "$(cat err)" "tecc: unrecognized option '--foo'
Try 'tecc --help' for more information." "unknown option: message"
ok "unknown option: nothing on stdout" test ! -s out

run
is "$rc" 2 "no input file: exit 2"
is "$(head -n 1 err)" "tecc: no input file" "no input file: message"
run good.te bad.te
is "$rc" 2 "two input files: exit 2"
run good.te -o
is "$(head -n 1 err) $rc" "tecc: option '-o' requires an argument 2" "-o without its argument"
run --emit=bogus good.te
is "$rc" 2 "--emit=bogus: exit 2"
run -O3 good.te
is "$rc" 2 "-O3: exit 2"
run --arch=sm_60 good.te
is "$rc" 2 "--arch=sm_60: exit 2"
run --arch=volta good.te
is "$rc" 2 "--arch=volta: exit 2"
run --name= good.te
is "$rc" 2 "--name= (empty): exit 2"
for bad in N=abc N=-1 =4 N N= 'N=1 ' N=99999999999999999999 1N=2 'N-M=3'; do
  run -D "$bad" --emit=ast good.te
  is "$rc" 2 "-D '$bad' is a usage error"
done
run "-DN=-1" --emit=ast good.te
is "$(head -n 1 err)" "tecc: invalid argument 'N=-1' for '-D': expected NAME=VALUE, VALUE a non-negative integer" "-D message"
ok "no output file after a usage error" test ! -e good.cu

# --- input ---------------------------------------------------------------------
run nonexistent.te
is "$rc" 2 "unreadable input: exit 2"
ok "unreadable input: message starts with tecc: and names the file" \
  grep -q "^tecc: .*nonexistent.te.*No such file or directory" err
mkdir adir
run adir
is "$rc" 2 "directory as input: exit 2"
if [ "$(id -u)" != 0 ]; then
  cp good.te noread.te && chmod 000 noread.te
  run noread.te
  is "$rc" 2 "input without read permission: exit 2"
else
  skip "input without read permission" "running as root"
fi

# --- dumps, standard input and output -------------------------------------
run --emit=ast good.te
is "$rc" 0 "--emit=ast exits 0"
ok "--emit=ast writes to stdout" test -s out
ok "success prints nothing on stderr" test ! -s err
cp out ast.stdout
run good.te --emit=ast
ok "options after the file work" cmp -s out ast.stdout
run --emit=ast good.te -o -
ok "-o - is stdout" cmp -s out ast.stdout
run --emit=ast -o ast.file good.te
ok "-o FILE writes the dump to FILE" cmp -s ast.file ast.stdout
ok "-o FILE: nothing on stdout" test ! -s out
"$TECC" --emit=ast - < good.te > ast.stdin 2> err
is "$?" 0 "'-' reads standard input"
ok "standard input gives a dump" test -s ast.stdin
run --emit=ast -- good.te
ok "'--' ends the options" cmp -s out ast.stdout

run --emit=ir good.te
is "$rc" 0 "--emit=ir exits 0"
ok "--emit=ir writes to stdout" test -s out
cp out ir.O2
run --emit=ir -I. -Iinc -I inc2 good.te
ok "-I DIR and -IDIR are accepted" cmp -s out ir.O2
run --emit=ir -D N=4 good.te
is "$rc" 0 "-D N=4 exits 0"
run --emit=ir -DN=4 good.te
is "$rc" 0 "-DN=4 exits 0"

# --- errors: exit 1, nothing written ------------------------------------------
run bad.te
is "$rc" 1 "a program with errors exits 1"
ok "errors go to stderr, prefixed by the file name" grep -q '^bad.te:[0-9]*:[0-9]*: error: ' err
ok "errors: nothing on stdout" test ! -s out
run --fdiagnostics-plain bad.te
ok "--fdiagnostics-plain: one line per diagnostic" sh -c '! grep -qv "^bad.te:[0-9]*:[0-9]*: [a-z]*: " err'
mkdir outdir
echo old > outdir/keep.ir
run --emit=ir bad.te -o outdir/new.ir
is "$rc" 1 "--emit=ir of a bad program exits 1"
run --emit=ir bad.te -o outdir/keep.ir -MD
is "$(ls -A outdir)" "keep.ir" "after errors: no output, no dependency file, no temporary file"
is "$(cat outdir/keep.ir)" "old" "after errors: an existing output is unchanged"

# --- outputs that cannot be written -----------------------------------------
run --emit=ast good.te -o nodir/x.ast
is "$rc" 2 "output in a missing directory: exit 2"
is "$(cat err)" "tecc: cannot write 'nodir/x.ast': No such file or directory" "unwritable output: message"
ok "missing directory: nothing created" test ! -e nodir
if [ "$(id -u)" != 0 ]; then
  mkdir ro && chmod 555 ro
  run --emit=ast good.te -o ro/x.ast
  is "$rc" 2 "output in a read-only directory: exit 2"
  is "$(ls -A ro)" "" "read-only directory: nothing left there"
else
  skip "output in a read-only directory" "running as root"
  skip "read-only directory: nothing left there" "running as root"
fi

if [ -w /dev/full ]; then
  run --emit=ast good.te -o /dev/full
  is "$(cat err) $rc" "tecc: cannot write '/dev/full': No space left on device 2" "a full device: exit 2"
  "$TECC" --emit=ast good.te > /dev/full 2> err
  is "$?" 2 "standard output on a full device: exit 2"
  ok "standard output on a full device: a message" grep -q '^tecc: cannot write standard output' err
else
  skip "a full device" "no /dev/full"
  skip "standard output on a full device" "no /dev/full"
  skip "standard output on a full device: a message" "no /dev/full"
fi

cp good.te self.te
run --emit=ast self.te -o self.te
is "$rc" 2 "an output that is the input: exit 2"
ok "an output that is the input: the input is unchanged" cmp -s self.te good.te

# --- signals during the write -------------------------------------------------
for sig in INT TERM; do
  mkdir "sig$sig"
  TECC_TEST_WRITE_DELAY_MS=3000 "$TECC" --emit=ast good.te -o "sig$sig/x.ast" -MD 2>/dev/null &
  pid=$!
  i=0 # wait until the temporaries exist (at most 2.5 s), then signal
  while [ -z "$(ls -A "sig$sig")" ] && [ $i -lt 50 ]; do sleep 0.05; i=$((i + 1)); done
  ok "SIG$sig: temporaries exist during the write" test -n "$(ls -A "sig$sig")"
  kill -"$sig" $pid
  wait $pid
  ok "SIG$sig: the process died of the signal" test $? -gt 128
  is "$(ls -A "sig$sig")" "" "SIG$sig during the write leaves nothing"
done

# --- any byte string: exit 0, 1 or 2, never a signal -------------------------
awk 'BEGIN { srand(7); for (i = 0; i < 400; i++) printf "%c", int(rand() * 256) }' > noise1.te
printf 'x: f32[N]\n\000y = x\n' > nul.te
printf '\377\376x: f32[N]\r\ny = x\r\n' > bom.te
printf 'y = ((((((((((((((((((((((((((((((((1' > deep.te
printf 'x: f32[N]\ny = x' > no_newline.te
: > empty.te
for f in noise1.te nul.te bom.te deep.te no_newline.te empty.te empty_kernel.te; do
  for emit in ast ir cu; do
    "$TECC" --emit=$emit "$f" -o /dev/null > /dev/null 2>&1
    rc=$?
    ok "$f --emit=$emit: exit 0, 1 or 2 (got $rc)" test $rc -le 2
  done
done

done_testing
