#!/bin/sh
# deps.sh — -MD, -MF, -MT, -MP: make dependency files as gcc writes them.
. "$top_srcdir/tests/tap.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-deps.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkdir lib inc out
printf 'fn sq(a) = a * a\n' > lib/act.te
printf 'fn cube(a) = a * a * a\n' > inc/more.te
printf 'import "lib/act.te"\nimport "more.te"\nx: f32[N]\ny = sq(x) + cube(x)\n' > model.te
printf 'x: f32[N]\ny = (x\n' > bad.te

"$TECC" --emit=ir -I inc model.te -o out/model.ir -MD
is "$?" 0 "-MD exits 0"
is "$(cat out/model.d)" "out/model.ir: model.te lib/act.te inc/more.te" \
  "-MD: the output with .d; target, the .te and every import"

"$TECC" --emit=ir -I inc model.te -o out/model.ir -MD -MP -MF out/deps.mk
is "$(cat out/deps.mk)" "out/model.ir: model.te lib/act.te inc/more.te

lib/act.te:

inc/more.te:" "-MP adds a phony target per import; -MF names the file"

"$TECC" --emit=ir -I inc model.te -o out/model.ir -MD -MT target1 -MT 'target2' -MF out/t.d
is "$(cat out/t.d)" "target1 target2: model.te lib/act.te inc/more.te" "-MT replaces the targets"

"$TECC" --emit=ir -I inc model.te -o out/model.ir -MD -MF out/twice.d
"$TECC" --emit=ir -I inc model.te -o out/model.ir -MD -MF out/twice.d
is "$(cat out/twice.d)" "out/model.ir: model.te lib/act.te inc/more.te" "a second run rewrites it the same"

"$TECC" --emit=ir bad.te -o out/bad.ir -MD
is "$?" 1 "errors: exit 1"
ok "errors: no dependency file" test ! -e out/bad.d

mkdir 'sp ace'
cp model.te 'sp ace/m$.te'
cp -r lib 'sp ace/'
"$TECC" --emit=ir -I inc 'sp ace/m$.te' -o 'sp ace/o.ir' -MD
is "$(cat 'sp ace/o.d')" 'sp\ ace/o.ir: sp\ ace/m$$.te sp\ ace/lib/act.te inc/more.te' \
  "spaces take a backslash, \$ is doubled"

# The .cu and .h are the targets of a normal compilation.
"$TECC" -I inc model.te -o out/m.cu -MD 2> err
if grep -q 'code generation is not implemented' err; then
  skip "-MD with .cu and .h" "the back end does not generate code yet"
else
  is "$(cat out/m.d)" "out/m.cu out/m.h: model.te lib/act.te inc/more.te" "-MD: targets the .cu and the .h"
fi

# Long rules wrap as gcc wraps them.
long=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
mkdir "$long"
cp model.te "$long/m.te" && cp -r lib inc "$long/"
"$TECC" --emit=ir "$long/m.te" -I "$long/inc" -o out/long.ir -MD
is "$(cat out/long.d)" "out/long.ir: \\
 $long/m.te \\
 $long/lib/act.te \\
 $long/inc/more.te" "long lines are continued with a backslash"

done_testing
