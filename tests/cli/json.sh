#!/bin/sh
# json.sh — --emit=json is valid JSON: every program of examples/ and
# tests/programs/ that compiles gives one document that jq reads, with a
# kernel and a schedule for each group; infinite and NaN constants, which
# JSON has no number for, are the strings "inf", "-inf" and "nan".  (What
# the schedules say is tests/stitch/schedule.sh's.)
. "$top_srcdir/tests/tap.sh"
have_jq || skip_all "jq not found by configure (Debian: apt-get install jq): --emit=json is read with it"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-json.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# A document with kernels, each group with its class and variants.
well_formed='.kernels | length > 0 and all(.[].groups[]; has("class") and (.variants | length > 0))'
for te in "$top_srcdir"/examples/*.te "$top_srcdir"/tests/programs/*.te; do
  name=${te#"$top_srcdir"/}
  "$TECC" -w -O2 "$te" --emit=json -o "$work/out.json" 2> /dev/null || continue
  ok "$name: --emit=json is JSON with a schedule per group" "$JQ" -e "$well_formed" "$work/out.json"
done

printf '%s\n' 'x: f32[N]' 'a = x + inf' 'b = x + -inf' 'c = x + nan' > "$work/nonfinite.te"
for o in 0 2; do
  "$TECC" -O$o --emit=json "$work/nonfinite.te" -o "$work/nonfinite.json"
  is "$("$JQ" -c '[.kernels[0].values[] | select(.op == "const") | .value]' "$work/nonfinite.json")" \
    '["inf","-inf","nan"]' "-O$o: infinite and NaN constants as strings"
done
done_testing
