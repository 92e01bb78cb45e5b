#!/bin/sh
# outputs.sh — where the .cu and .h go (doc/cli.md): default names, -o, -H,
# --header, -o -, --emit=header, and how the .cu includes its header.
. "$top_srcdir/tests/tap.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-out.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkdir src sub
printf 'x: f32[N, D]\ny = x - max(x, -1)\n' > src/model.te

"$TECC" src/model.te 2> err
rc=$?
if [ $rc -ne 0 ] && grep -q 'code generation is not implemented' err; then
  skip_all "the back end does not generate code yet"
fi
is "$rc" 0 "tecc FILE exits 0"
ok "default: FILE's base name with .cu, in the current directory" test -s model.cu
ok "default: the header beside it" test -s model.h
ok "the header declares the kernel named after the file" grep -q 'tecc_status model(' model.h
ok "default: nothing written beside the input" test ! -e src/model.cu
ok "the .cu includes its header by base name" grep -q '#include "model.h"' model.cu
ok "success prints nothing" test ! -s err
is "$(ls -A | grep -v '^err$' | sort | tr '\n' ' ')" "model.cu model.h src sub " "no temporary file left"

"$TECC" src/model.te -o sub/k.cu
is "$?" 0 "-o sub/k.cu exits 0"
ok "-o: the .cu where asked" test -s sub/k.cu
ok "-o: the header is the output with .cu replaced by .h" test -s sub/k.h
ok "-o: the .cu includes k.h" grep -q '#include "k.h"' sub/k.cu

"$TECC" src/model.te -o sub/noext
ok "-o without .cu: the header is the output with .h added" test -s sub/noext.h

"$TECC" src/model.te -o sub/h1.cu -H sub/other.h
ok "-H FILE: the header there" test -s sub/other.h
ok "-H FILE: no default header" test ! -e sub/h1.h
ok "-H FILE: the .cu includes it" grep -q '#include "other.h"' sub/h1.cu
"$TECC" src/model.te -o sub/h2.cu --header=sub/long.h
ok "--header=FILE" test -s sub/long.h

"$TECC" src/model.te -o - > stdout.cu
is "$?" 0 "-o - exits 0"
ok "-o -: the .cu on stdout" cmp -s stdout.cu model.cu
ok "-o -: no header file" test ! -e stdout.h -a ! -e -.h -a ! -e kernel.h

"$TECC" - -o - < src/model.te > stdin.cu
is "$?" 0 "standard input to standard output"
ok "stdin: a .cu on stdout" test -s stdin.cu
"$TECC" - < src/model.te
ok "stdin: default output kernel.cu" test -s kernel.cu -a -s kernel.h
ok "stdin: the kernel is named 'kernel'" grep -q 'tecc_status kernel(' kernel.h

"$TECC" --emit=header src/model.te -o sub/only.h
ok "--emit=header -o FILE: the header alone" grep -q 'tecc_status model(' sub/only.h
ok "--emit=header: no .cu" test ! -e sub/only.cu
mkdir hdr && (cd hdr && "$TECC" --emit=header ../src/model.te > ../hdr.out)
ok "--emit=header without -o: the header on standard output" grep -q 'tecc_status model(' hdr.out
is "$(ls -A hdr)" "" "--emit=header without -o writes no file"
"$TECC" --emit=header src/model.te -H sub/via-h.h > hdr2.out
ok "--emit=header -H FILE: the header there" grep -q 'tecc_status model(' sub/via-h.h
ok "--emit=header -H FILE: nothing on standard output" test ! -s hdr2.out

# An output that is not a regular file (/dev/null) names no header, as -o -
# does; -H still writes one.
had_null_h=no; [ -e /dev/null.h ] && had_null_h=yes
mkdir devnull && (cd devnull && "$TECC" ../src/model.te -o /dev/null -MD)
is "$?" 0 "-o /dev/null exits 0"
if [ $had_null_h = yes ]; then skip "-o /dev/null: no /dev/null.h" "/dev/null.h was there before"
else ok "-o /dev/null: no /dev/null.h" test ! -e /dev/null.h; fi
is "$(ls -A devnull)" "model.d" "-o /dev/null -MD: only the dependency file, named after the input"
(cd devnull && "$TECC" ../src/model.te -o /dev/null -H null.h)
ok "-o /dev/null -H FILE: the header there" grep -q 'tecc_status model(' devnull/null.h

"$TECC" --name=renamed src/model.te -o sub/renamed.cu
ok "--name renames the kernel" grep -q 'tecc_status renamed(' sub/renamed.h

"$TECC" src/model.te -o sub/same.cu && cp sub/same.cu first.cu && \
  "$TECC" src/model.te -o sub/same.cu
ok "the same input gives the same bytes" cmp -s first.cu sub/same.cu

# A file that already holds what tecc would write is left alone, time stamp
# included, so that make rebuilds nothing that includes it; a file whose
# contents differ is replaced.
"$TECC" src/model.te -o sub/keep.cu -MD -MF sub/keep.d
touch -t 202001010000 sub/keep.cu sub/keep.h sub/keep.d
touch -t 202101010000 stamp
"$TECC" src/model.te -o sub/keep.cu -MD -MF sub/keep.d
is "$?" 0 "the same compilation again exits 0"
is "$(find sub/keep.cu sub/keep.h sub/keep.d -newer stamp)" "" \
  "unchanged .cu, .h and dependency file keep their time stamps"
echo '/* edited */' >> sub/keep.h
touch -t 202001010000 sub/keep.h
"$TECC" src/model.te -o sub/keep.cu -MD -MF sub/keep.d
is "$(find sub/keep.cu sub/keep.h sub/keep.d -newer stamp)" "sub/keep.h" \
  "only the file whose contents differ is written"
ok "and it holds the header again" test "$(tail -n 1 sub/keep.h)" != '/* edited */'
is "$(ls -A sub | grep -c '^\.')" 0 "no temporary file left"

done_testing
