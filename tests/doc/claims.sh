#!/bin/sh
# claims.sh — statements the documents once got wrong stay right (TAP;
# issue 50): no page promises builds for sm_70 (CUDA 13's oldest target is
# sm_75), and the README and doc/language.md §14 say what tecc does not do
# and what to pair it with.
. "$top_srcdir/tests/tap.sh"
cd "$top_srcdir" || exit 1

claims=$(grep -n -i -E 'sm_70`? or newer|from `?sm_70`? on|any `?sm_70' \
  README.md doc/*.md doc/tecc.1 examples/README cmake/*.cmake 2>/dev/null)
is "$claims" "" "no document promises that the .cu builds for sm_70"
ok "doc/abi.md names CUDA 13's oldest target, sm_75" grep -q 'sm_75` and newer with CUDA 13' doc/abi.md

section=$(sed -n '/^## What it does not do/,/^## /p' README.md)
ok "README has a section on what tecc does not do" test -n "$section"
for word in 'matrix product' reshape transpose 'top-k' 'in-place' cuBLAS CUTLASS PyTorch 'doc/language.md` §14'; do
  case $section in
    *"$word"*) pass "README's section names $word" ;;
    *) fail "README's section names $word" ;;
  esac
done
ok "doc/language.md has §14, what tecc does not do" grep -q '^## 14\. What tecc does not do' doc/language.md
done_testing
