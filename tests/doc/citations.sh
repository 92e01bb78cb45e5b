#!/bin/sh
# citations.sh — every Markdown document that the tree cites is in the tree
# (TAP; issue 45: the project's documents are self-contained).
#
# Every tracked text file (git ls-files: sources, scripts, tests, documents)
# is searched for names ending in ".md".  A name resolves when it is a
# tracked file relative to the top of the tree (doc/abi.md, bench/NOTES.md,
# README.md), to the citing file's own directory (a link in doc/ to
# fusion.md, ../README.md), or, for a bare name, to doc/ (abi.md in a
# comment of lib/ means doc/abi.md).  Names inside URLs are not ours and
# are skipped.  A citation of a section by number (abi.md §6,
# [language.md](language.md) §4.2, abi.md section 3, §3-§5) must name a
# heading of the cited document ("## 6. ...", "### 4.2 ...").
#
# One TAP line per file that cites any document; the failures name the
# line and the citation.  Skipped outside a git checkout of the tree (a
# `make dist` tarball has no list of tracked files).
. "$top_srcdir/tests/tap.sh"
LC_ALL=C
export LC_ALL

top=$(cd "$top_srcdir" && pwd -P) || exit 1
command -v git > /dev/null 2>&1 || skip_all "git is not installed"
git_top=$(git -C "$top" rev-parse --show-toplevel 2> /dev/null) || git_top=
[ -n "$git_top" ] && [ "$(cd "$git_top" && pwd -P)" = "$top" ] ||
  skip_all "not a git checkout of the tree: which files are tracked is unknown"
cd "$top" || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-citations.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

git ls-files > "$work/tracked" || exit 1

# A document's name: path characters ending in a word character and ".md",
# not followed by a word character.  A section citation continues with an
# optional link target and "§N" or "section N", then more "-§M", ", §M".
name='[A-Za-z0-9_./-]*[A-Za-z0-9_-][.]md'
num='[0-9]+([.][0-9]+)?'
sec="$name(\\]\\([^)]*\\))?,? ?(§ ?|section )$num(( ?(-|–|,|and) ?)§ ?$num)*"
self=tests/doc/citations.sh

git grep -n -I -o -E "$name([^A-Za-z0-9_]|\$)" -- . ":!$self" > "$work/names"
git grep -n -I -o -E "$sec" -- . ":!$self" > "$work/sections"
# Headings of the tracked Markdown files: "FILE<TAB>NUMBER" for each
# numbered heading ("## 6. Numerical contract", "### 4.2 The implicit kernel").
grep '[.]md$' "$work/tracked" | while read -r f; do
  sed -n 's/^##* \([0-9][0-9.]*[0-9]\)[. ].*/\1/p; s/^##* \([0-9]\)[. ].*/\1/p' "$f" |
    sed "s|^|$f	|"
done > "$work/headings"

# resolve.awk: reads the tracked list, the headings, then "FILE:LINE:TEXT"
# lines of one kind (names or sections); prints "FILE<TAB>ok" or
# "FILE<TAB>bad<TAB>LINE: TEXT (why)" for each citation.
cat > "$work/resolve.awk" << 'EOF'
function norm(p,    n, i, k, out, part) {
  n = split(p, part, "/")
  k = 0
  for (i = 1; i <= n; i++) {
    if (part[i] == "" || part[i] == ".") continue
    if (part[i] == "..") { if (k > 0) k--; continue }
    out[++k] = part[i]
  }
  p = ""
  for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
  return p
}
# The tracked path that `cite` in `file` names, or "".
function resolve(file, cite,    dir, p) {
  dir = file
  if (!sub(/\/[^\/]*$/, "", dir)) dir = ""
  p = norm(cite)
  if (p in tracked) return p
  if (dir != "" && norm(dir "/" cite) in tracked) return norm(dir "/" cite)
  if (cite !~ /\// && ("doc/" cite) in tracked) return "doc/" cite
  return ""
}
FILENAME == ARGV[1] { tracked[$0] = 1; next }
FILENAME == ARGV[2] { split($0, h, "\t"); heading[h[1], h[2]] = 1; next }
{
  file = $1; line = $2
  text = substr($0, length($1) + length($2) + 3)
  if (match(text, /[A-Za-z0-9_.\/-]*[A-Za-z0-9_-][.]md/) == 0) next
  cite = substr(text, RSTART, RLENGTH)
  rest = substr(text, RSTART + RLENGTH)
  sub(/^\]\([^)]*\)/, "", rest)              # [abi.md](abi.md) §6: the link
  if (cite ~ /^\/\//) next                    # in a URL: ...//host/path.md
  doc = resolve(file, cite)
  if (doc == "") {
    printf "%s\tbad\t%s: %s (no such document)\n", file, line, cite
    next
  }
  if (kind == "sections") {
    while (match(rest, /[0-9]+(\.[0-9]+)?/)) {
      n = substr(rest, RSTART, RLENGTH)
      rest = substr(rest, RSTART + RLENGTH)
      if (!((doc, n) in heading)) {
        printf "%s\tbad\t%s: %s (%s has no section %s)\n", file, line, text, doc, n
        next
      }
    }
  }
  printf "%s\tok\n", file
}
EOF
{
  awk -F : -v kind=names -f "$work/resolve.awk" "$work/tracked" "$work/headings" "$work/names"
  awk -F : -v kind=sections -f "$work/resolve.awk" "$work/tracked" "$work/headings" "$work/sections"
} | sort -u | sort -s -t '	' -k1,1 -k3,3n > "$work/results"

# A search that finds nothing (a git without -o, a broken pattern) must
# not pass for a clean tree.
count=$(wc -l < "$work/names")
nsec=$(wc -l < "$work/sections")
ok "the search finds the tree's citations ($count names, $nsec sections)" \
  test "$count" -gt 100 -a "$nsec" -gt 50

for f in $(cut -f1 "$work/results" | uniq); do
  bad=$(awk -F '\t' -v f="$f" '$1 == f && $2 == "bad" { print $3 }' "$work/results")
  if [ -z "$bad" ]; then
    pass "$f: every cited document and section exists"
  else
    fail "$f: every cited document and section exists"
    diag "$bad"
  fi
done
done_testing
