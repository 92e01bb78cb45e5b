#!/bin/sh
# doc-examples.sh — every .te example in the documentation compiles (TAP).
#
# Extracts each fenced block of doc/*.md and README.md whose info string
# starts with one of:
#   ```te           must compile: exit 0 and nothing on stderr
#   ```te-warning   must compile with a warning, and fail with -Werror
#   ```te-error     must fail with exit 1 and write nothing
#   ```te-values    lines `EXPR  -->  VALUE : DTYPE`: `y = EXPR` must fold
#                   to that constant (`--emit=ir` prints `const VALUE : DTYPE[]`)
# and in both, stderr must contain the TEXT of every `# expect: TEXT`
# comment of the block.
# Further words of the info string:
#   file=PATH       save the block under PATH (default: exLINE.te), relative
#                   to a directory shared by the blocks of one document, so
#                   that later blocks can `import` it
#   lib             an imported file only: saved, not compiled on its own
#   -OPTION         passed to tecc (e.g. -DD=1024, --name=ln)
# While tecc cannot generate code yet, blocks are checked with --emit=ir;
# once `tecc x.te -o x.cu` works they are compiled to .cu and .h, the .cu
# with `$NVCC -c` and the header with `$CC -std=c99 -pedantic` when NVCC is set.
# Also: the man page formats without groff warnings and names every option
# that `tecc --help` lists.
set -u
: "${TECC:?TECC must name the tecc command}"
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
NVCC=${NVCC:-}
CC=${CC:-cc}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-doc.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  [ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err"
  return 0
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# extract DOC DIR: write the blocks of the Markdown file DOC into DIR and
# one line per block, "KIND LINE PATH LIB OPTS...", into DIR/index.
extract() {
  awk -v dir="$2" -v doc="$1" '
    function fail(msg) { printf "%s:%d: %s\n", doc, NR, msg > "/dev/stderr"; bad = 1; exit 1 }
    !inblock && /^```/ {
      inblock = 1; out = ""; start = NR
      kind = $1; sub(/^```/, "", kind)
      istest = kind ~ /^te(-error|-warning|-values)?$/
      path = istest ? "ex" NR ".te" : ""; lib = !istest; opts = ""
      for (i = 2; i <= NF; i++) {
        if ($i ~ /^file=/) path = substr($i, 6)
        else if ($i == "lib") lib = 1
        else if ($i ~ /^-/ && istest) opts = opts " " $i
        else if (istest) fail("unknown word in fence: " $i)
      }
      if (path == "") next   # an illustration: not extracted
      if (path in seen) fail("two blocks named " path)
      seen[path] = 1
      out = dir "/" path
      d = out; sub(/\/[^\/]*$/, "", d)
      system("mkdir -p \"" d "\"")
      printf "" > out
      print kind, start, path, lib, opts >> (dir "/index")
      next
    }
    inblock && /^```[ \t]*$/ { inblock = 0; if (out != "") close(out); next }
    inblock && out != "" { print > out }
    END { if (inblock && !bad) { NR = start; fail("unterminated ``` block") } }
  ' "$1"
}

docs=
for f in "$top_srcdir"/README.md "$top_srcdir"/doc/*.md; do
  [ -f "$f" ] && docs="$docs $f"
done
i=0
for f in $docs; do
  i=$((i + 1)); mkdir -p "$tmp/d$i"; : > "$tmp/d$i/index"
  extract "$f" "$tmp/d$i" || { echo "Bail out! cannot extract the blocks of $f"; exit 1; }
done

# Can tecc generate code yet?
printf 'x: f32[N]\ny = x + 1\n' > "$tmp/probe.te"
mode=ir
if (cd "$tmp" && "$TECC" probe.te -o probe.cu) >/dev/null 2>&1 && [ -s "$tmp/probe.cu" ]; then
  mode=cu
fi

blocks=$(cat "$tmp"/d*/index | awk '$4 == 0' | wc -l)
makefiles=$(cat "$tmp"/d*/index | awk '$3 == "Makefile"' | wc -l)
extra=$((3 + makefiles))
[ "$mode" = cu ] && [ -n "$NVCC" ] && extra=$((extra + 1))
echo "1..$((blocks + extra))"
echo "# checking with: $mode${NVCC:+ and $NVCC}"

nvcc_list=$tmp/cu.list
: > "$nvcc_list"

check_ok() { # DIR PATH LINE DOC OPTS...
  dir=$1 path=$2 what="$4:$3 $2"; shift 4
  if [ "$mode" = cu ]; then
    (cd "$dir" && "$TECC" "$@" "$path" -o "${path%.te}.cu") > "$tmp/out" 2> "$tmp/err"
  else
    (cd "$dir" && "$TECC" "$@" --emit=ir "$path") > "$tmp/out" 2> "$tmp/err"
  fi
  rc=$?
  if [ $rc -ne 0 ]; then not_ok "$what: exit $rc, expected 0"; return; fi
  if [ -s "$tmp/err" ]; then not_ok "$what: unexpected diagnostics"; return; fi
  if [ "$mode" = cu ]; then
    if [ ! -s "$dir/${path%.te}.cu" ] || [ ! -s "$dir/${path%.te}.h" ]; then
      : > "$tmp/err"; not_ok "$what: no .cu or .h written"; return
    fi
    echo "$dir/${path%.te}.cu" >> "$nvcc_list"
  fi
  ok "$what"
}

check_warning() { # DIR PATH LINE DOC OPTS...
  dir=$1 path=$2 what="$4:$3 $2 (warning)"; shift 4
  (cd "$dir" && "$TECC" "$@" --emit=ir "$path") > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q 'warning:' "$tmp/err"; then
    not_ok "$what: exit $rc, expected 0 with a warning"; return
  fi
  missing=$(expectations_missing "$dir/$path")
  if [ -n "$missing" ]; then not_ok "$what: stderr lacks: $missing"; return; fi
  (cd "$dir" && "$TECC" "$@" -Werror --emit=ir "$path") > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 1 ]; then not_ok "$what: exit $rc with -Werror, expected 1"; return; fi
  ok "$what"
}

# expectations_missing FILE: the `# expect: TEXT` lines of FILE whose TEXT
# is not in $tmp/err.
expectations_missing() {
  sed -n 's/^.*# expect: //p' "$1" | while IFS= read -r want; do
    grep -qF -- "$want" "$tmp/err" || printf '%s; ' "$want"
  done
}

check_error() { # DIR PATH LINE DOC OPTS...
  dir=$1 path=$2 what="$4:$3 $2 (error)"; shift 4
  rm -f "$dir/${path%.te}.cu" "$dir/${path%.te}.h"
  if [ "$mode" = cu ]; then
    (cd "$dir" && "$TECC" "$@" "$path" -o "${path%.te}.cu") > "$tmp/out" 2> "$tmp/err"
  else
    (cd "$dir" && "$TECC" "$@" --emit=ir "$path") > "$tmp/out" 2> "$tmp/err"
  fi
  rc=$?
  if [ $rc -ne 1 ]; then not_ok "$what: exit $rc, expected 1"; return; fi
  if [ -e "$dir/${path%.te}.cu" ] || [ -e "$dir/${path%.te}.h" ]; then
    not_ok "$what: output written despite the error"; return
  fi
  missing=$(expectations_missing "$dir/$path")
  if [ -n "$missing" ]; then not_ok "$what: stderr lacks: $missing"; return; fi
  ok "$what"
}

check_values() { # DIR PATH LINE DOC
  dir=$1 path=$2 what="$4:$3 $2 (values)"
  : > "$tmp/err"
  count=0
  while IFS= read -r entry; do
    case $entry in '' | '#'*) continue ;; esac
    expr=${entry%%-->*}
    want=$(printf '%s' "${entry#*-->}" | sed 's/^ *//; s/ *$//')
    count=$((count + 1))
    printf 'y = %s\n' "$expr" > "$dir/value.te"
    # The value of the first constant, with the dtype of the output (a
    # 16-bit constant is an f32 constant, already rounded, and a cast).
    (cd "$dir" && "$TECC" --emit=ir value.te) > "$tmp/out" 2>&1
    value=$(sed -n 's/^ *%[0-9]* = const \(.*\) : .*$/\1/p' "$tmp/out" | head -n 1)
    dtype=$(sed -n 's/^kernel .*-> (y: \([a-z0-9]*\)\[\])$/\1/p' "$tmp/out" | head -n 1)
    got="$value : $dtype"
    [ "$got" = "$want" ] || echo "$expr: got '$got', documented '$want'" >> "$tmp/err"
  done < "$dir/$path"
  if [ -s "$tmp/err" ]; then not_ok "$what"; else ok "$what: $count values"; fi
}

i=0
for f in $docs; do
  i=$((i + 1)); doc=${f#"$top_srcdir"/}
  while read -r kind line path lib opts; do
    [ "$lib" = 1 ] && continue
    # shellcheck disable=SC2086 # opts are words
    case $kind in
      te) check_ok "$tmp/d$i" "$path" "$line" "$doc" $opts ;;
      te-warning) check_warning "$tmp/d$i" "$path" "$line" "$doc" $opts ;;
      te-error) check_error "$tmp/d$i" "$path" "$line" "$doc" $opts ;;
      te-values) check_values "$tmp/d$i" "$path" "$line" "$doc" ;;
    esac
  done < "$tmp/d$i/index"
done

# The generated code of every example builds (one nvcc run per file, two at
# a time: this is the slow part).
if [ "$mode" = cu ] && [ -n "$NVCC" ]; then
  : > "$tmp/err"
  fails=0
  # Whether the code compiles is the question, not how fast it runs: the
  # device code is compiled unoptimized (three times faster), when this
  # nvcc accepts it.
  fast="-Xcicc -O0 -Xptxas -O0"
  # shellcheck disable=SC2086 # $fast holds words
  (cd "$tmp" && "$NVCC" -c -arch=sm_80 $fast -o /dev/null probe.cu) > /dev/null 2>&1 || fast=
  while read -r cu; do
    h=${cu%.cu}.h
    # shellcheck disable=SC2086 # $fast holds words
    if ! (cd "$(dirname "$cu")" && "$NVCC" -c -arch=sm_80 $fast -o /dev/null "$cu") >> "$tmp/err" 2>&1; then
      fails=$((fails + 1)); echo "nvcc failed: $cu" >> "$tmp/err"
    fi
    if ! "$CC" -std=c99 -Wall -Wextra -pedantic -Werror -isystem "$CUDA_HOME/include" \
        -fsyntax-only -x c "$h" >> "$tmp/err" 2>&1; then
      fails=$((fails + 1)); echo "header failed: $h" >> "$tmp/err"
    fi
  done < "$nvcc_list"
  if [ $fails -eq 0 ]; then ok "nvcc -c and C99 headers of $(wc -l < "$nvcc_list") examples"
  else not_ok "nvcc -c and C99 headers: $fails failures"; fi
fi

# A document with a Makefile (the tutorial) builds as printed, and its
# `make check` passes on a machine with a GPU.
gpu=no
nvidia-smi -L >/dev/null 2>&1 && gpu=yes
i=0
for f in $docs; do
  i=$((i + 1)); doc=${f#"$top_srcdir"/}; dir=$tmp/d$i
  [ -f "$dir/Makefile" ] || continue
  what="$doc: its Makefile builds the programs"
  if [ "$mode" != cu ] || [ -z "$NVCC" ]; then
    skip "$what" "no code generation or no nvcc"; continue
  fi
  target=all
  [ $gpu = yes ] && { target=check; what="$doc: its Makefile builds and checks the programs"; }
  # A separate `make clean` first: files that the examples' checks wrote
  # (x.cu, x.h) must not exist when make chooses its rules.
  if make -C "$dir" clean > "$tmp/err" 2>&1 &&
     make -C "$dir" TECC="$TECC" NVCC="$NVCC" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
       CC="$CC" $target >> "$tmp/err" 2>&1; then
    ok "$what"
  else
    not_ok "$what"
  fi
done

# Relative links between the documents lead to files and headings that
# exist (anchors as GitHub makes them: lower case, punctuation dropped,
# spaces to hyphens).
slugs() { sed -n 's/^#\{1,6\} //p' "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }
: > "$tmp/err"
for f in "$top_srcdir"/doc/*.md; do
  grep -o '](\([^)#:]*\)\?\(#[^)]*\)\?)' "$f" | sed 's/^](//; s/)$//' | while read -r link; do
    target=${link%%#*} anchor=
    case $link in *'#'*) anchor=${link#*#} ;; esac
    [ -n "$target" ] && target=$(dirname "$f")/$target || target=$f
    if [ ! -e "$target" ]; then echo "${f#"$top_srcdir"/}: $link: no such file"
    elif [ -n "$anchor" ] && ! slugs "$target" | grep -qxF -- "$anchor"; then
      echo "${f#"$top_srcdir"/}: $link: no such heading"
    fi
  done >> "$tmp/err"
done
if [ -s "$tmp/err" ]; then not_ok "links between the documents resolve"
else ok "links between the documents resolve"; fi

# The man page: formats cleanly and documents every option of --help.
man=$top_srcdir/doc/tecc.1
if ! command -v groff >/dev/null 2>&1; then
  skip "man page formats without warnings" "groff not installed"
else
  groff -man -ww -z "$man" > "$tmp/err" 2>&1
  if [ -s "$tmp/err" ]; then not_ok "man page formats without warnings"
  else ok "man page formats without warnings"; fi
fi
if ! "$TECC" --help > "$tmp/help" 2>/dev/null || [ ! -s "$tmp/help" ]; then
  skip "man page names every option of tecc --help" "tecc --help does not work yet"
else
  sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" > "$tmp/man.txt"
  grep -oE -- '(^|[ ,[])--?[A-Za-z][A-Za-z0-9-]*' "$tmp/help" | sed 's/^[ ,[]//' |
  sort -u | while read -r opt; do
    grep -qF -- "$opt" "$tmp/man.txt" || echo "$opt"
  done > "$tmp/err"
  if [ -s "$tmp/err" ]; then not_ok "man page names every option of tecc --help"
  else ok "man page names every option of tecc --help"; fi
fi
