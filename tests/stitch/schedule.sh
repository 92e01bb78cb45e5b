#!/bin/sh
# schedule.sh — the schedule rules that bench/NOTES.md measured (issues 11
# and 12), read back from --emit=json (the records of lib/schedule.h, not
# generated text): a column reduction's block spans 64 columns (8 lanes
# of bf16 packs, 16 of f32, 32 of f64); an elementwise loop with a
# software math function for every 4 bytes or fewer gives each thread two
# packs, others one, or, where that math is of positions alone, 16
# positions along the innermost outer axis it does not vary along, and a
# loop whose index splits into axes adds half packs for rows that are not
# whole packs; 16-bit rows, held in pairs, have twice f32's
# register budget, f32 rows past 2048 take the whole budget, and 16-bit
# rows with no operand along them that one warp holds at the whole budget
# take a warp a row before the block variant (warp-long); a full
# reduction's partials are combined by a block of 512; a stream kernel
# that reads each row once (a variance sharing its mean's pass, logsumexp,
# cross-entropy) takes blocks of 256 when the rows fill six an SM, 512
# when they fill two, and holds rows in registers to 512 threads (16-bit
# ones to 256), where a layernorm, which reads
# its rows again for y, keeps 1024, keeps the row's first packs in shared
# memory and, of 4-byte elements, takes twice the packs a chunk where
# 32-bit indices do; clusters loop over rows for one level that the
# stream kernel would read twice (else one each, as many as the device
# holds at once); rows that write nothing along them take, before the
# long variant, blocks of the warps they need (narrow), rows that write
# along them do not; whole row groups of whole rows run the warp and
# block variants without guards, rows of whole chunks the stream variant,
# but not 16-bit rows read again; a column softmax streams in packs of 4
# columns, then splits its rows, then a column a thread, as does a column
# max kept as an output, a layernorm over columns does not split; short rows of a norm (an operand along the row)
# are held two a thread and, with one held input, loaded ahead (a wave
# looping over rows the L2 cache holds, a grid covering larger ones, at
# run time whether their length is a literal or not); the block
# variant of a norm loads w and b early; rows whose operand is indexed by
# the last kept axes only are visited batch-fastest where the sizes ask;
# values worth their registers are kept across passes; literal sizes
# leave only the variant that runs; a row stitch takes the sums over its
# rows (a gradient's dw) as column partials, in blocks of 512, but not a
# column sum that reads another (a column variance's mean); outputs along
# the row that need no reduction are written in the stream kernel's
# first pass, which then reads the domain once.
#
# How the emitters write these schedules into CUDA (instances, loads,
# guards, launches, arithmetic) is tests/stitch/kernels.sh's.
. "$top_srcdir/tests/tap.sh"
have_jq || skip_all "jq not found by configure (Debian: apt-get install jq): the schedules are read from --emit=json with it"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-schedule.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

te="$top_srcdir/tests/stitch/schedule/programs.te"
"$TECC" -O2 --emit=json "$te" -o "$work/s.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/s.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }

# group KERNEL FILTER: jq's FILTER of kernel KERNEL's group (each has one);
# strings raw, anything else as compact JSON.
group() { "$JQ" -rc --arg k "$1" ".kernels[] | select(.name == \$k) | .groups[0] | $2" "$work/s.json"; }
# variant KERNEL NAME FILTER: FILTER of that group's variant NAME.
variant() {
  "$JQ" -rc --arg k "$1" --arg v "$2" \
    ".kernels[] | select(.name == \$k) | .groups[0].variants[] | select(.name == \$v) | $3" "$work/s.json"
}
# variants KERNEL: its variants' names, in the order the host tries them.
variants() { group "$1" '[.variants[].name] | join(" ")'; }
# The elements a chunk of a stream variant takes (schedule.c, stream_chunk()).
chunk='(([.items, .wide_items] | max) * .vec)'

plan 119
ok "--emit=json is one JSON document, every kernel in it" \
  "$JQ" -e --argjson n "$(grep -c '^kernel ' "$te")" '.kernels | length == $n' "$work/s.json"
# The condition's words are the plan's (schedule.c, variant_condition_text()).
is "$("$JQ" -r '.kernels[] | "kernel \(.name):", ((.groups[], (.apart.groups // [])[]).variants[] | "\(.name) (\(.condition))")' "$work/s.json")" \
  "$(sed -n -e 's/^\(kernel [^:]*:\).*/\1/p' \
       -e 's/^    variant \([^ ]*\) (\(.*\)): \(none\|registers\|cluster\|stream\), VEC .*/\1 (\2)/p' "$work/s.plan")" \
  "every variant's condition in the words of --emit=plan"

# Column reductions, elementwise loops, full reductions.
is "$(variant colsum_bf16 columns '{when, storage, vec, items, threads_x, threads_y}')" \
  '{"when":"always","storage":"registers","vec":8,"items":4,"threads_x":8,"threads_y":32}' "colsum bf16: block 8 x 32"
is "$(variant colsum_f32 columns '[.vec, .items, .threads_x, .threads_y]')" '[4,4,16,16]' "colsum f32: block 16 x 16"
is "$(variant colsum_f64 columns '[.vec, .items, .threads_x, .threads_y]')" '[2,4,32,8]' "colsum f64: block 32 x 8"
is "$(variant gelu_bf16 packed '{when, vec, items, threads_x}')" '{"when":"aligned","vec":8,"items":2,"threads_x":256}' \
  "gelu(x + b) bf16: 2 packs per thread"
is "$(variant gelu_f32 packed .items)" 1 "gelu(x + b) f32 (an erf per 8 bytes): a pack per thread"
is "$(variant sin5_bf16 packed .items)" 1 "a sin per 12 bytes: a pack per thread"
is "$(variant swiglu_bf16 packed .items)" 1 "silu (no software math function): a pack per thread"
is "$(group gelu_bf16 '[.variants[] | [.name, .when, .vec]]')" '[["packed","aligned",8],["half","aligned",4],["scalar","always",1]]' \
  "gelu(x + b) bf16: b read by N alone, so a pack must not straddle a row: half packs for rows of 4k + 4"
is "$(group gelu_f32 '[.variants[] | .vec]')" '[4,2,1]' "gelu(x + b) f32: packs of 4, 2, then one"
is "$(group swiglu_bf16 '[.variants[] | .name]')" '["packed","scalar"]' "silu(a) * b: every tensor at the element's index, no half packs"
is "$(variant gelu_bf16 packed '.threads_x * .vec * .items')" 4096 \
  "gelu bf16's packed launch covers 2 packs a thread (256 threads x 2 packs of 8)"
is "$(group rope_pos_bf16 '[.reuse_axis, .reuse, .variants[0].items]')" '[2,16,1]' \
  "rope from positions: its sin and cos computed once for 16 heads (axis 2), a pack a thread"
is "$(group rope_heads_first_f32 '[.reuse_axis, .reuse]')" '[1,16]' \
  "angles of S and D under [B, H, S, D]: reused along H, two axes before the innermost"
is "$(group sin_of_x_bf16 '[.reuse_axis, .reuse, .variants[0].items]')" '[-1,1,2]' \
  "sin of a value read from memory: no reuse, 2 packs a thread"
is "$(group gelu_bf16 '.reuse_axis')" -1 "gelu(x + b): no reuse"
is "$(group lookup_bf16 '[.steps, [.variants[] | .items]]')" '[2,[2,2,2]]' \
  "an embedding's row waits on the load of its id: a thread loads 2 packs before it computes (every variant)"
is "$(group half_bf16 '[.steps, .variants[0].items]')" '[1,1]' "a slice's offset is a position: a pack at a time"
is "$(grep -c 'steps: a thread loads 2 packs' "$work/s.plan")" 1 "--emit=plan says so, once (the lookup)"
is "$(group fullsum_bf16 '{class, final_threads, split: .variants[0].split}')" \
  '{"class":"full","final_threads":512,"split":-1}' "full reduction: a partial per block, combined by a block of 512"

# Rows: the register budget and the variants' lengths.
is "$(group softmax_bf16 '{held, budget}')" '{"held":1,"budget":64}' "softmax bf16: 64 elements per thread and value"
is "$(variant softmax_bf16 block '{when, limit}')" '{"when":"row_at_most","limit":4096}' "softmax bf16: a block to 4096"
is "$(variant softmax_bf16 long '{limit, items}')" '{"limit":65536,"items":8}' "softmax bf16: the whole budget to 65536"
is "$(variants softmax_bf16)" "warp warp-long block long cluster stream" \
  "softmax bf16: one warp a row at the whole budget (warp-long) before the block variant"
is "$(variant softmax_bf16 warp-long '{when, limit, items, vec}')" '{"when":"row_at_most","limit":2048,"items":8,"vec":8}' \
  "softmax bf16: warp-long to 2048 (32 lanes x ITEMS 8 x VEC 8)"
is "$(group softmax_f32 '[.variants[] | select(.name == "warp-long")]')" '[]' "softmax f32: no warp-long (not measured)"
is "$(group masked_bf16 '[.variants[] | select(.name == "warp-long")]')" '[]' \
  "masked bf16 (an operand along the row): no warp-long"
is "$(variant softmax_f32 block '{when, limit}')" '{"when":"row_at_most","limit":2048}' "softmax f32: a block to 2048"
is "$(variant softmax_f32 long '{limit, items}')" '{"limit":32768,"items":8}' "softmax f32: the whole budget to 32768"
is "$(variant layernorm_f32 long .limit)" 32768 "layernorm f32: the whole budget to 32768"

# Stream kernels: rows read once take 512 threads, rows read again 1024,
# and keep their first packs in shared memory; 4-byte rows read again take
# 8 packs a chunk with 32-bit indices; rows of whole chunks run without
# item guards, but 16-bit rows read again.
is "$(variant rowstats_f32 stream '{one_read, keeps}')" '{"one_read":true,"keeps":false}' \
  "rowstats f32 stream: 512 threads a row when the rows fill two blocks an SM"
is "$(variant rowstats_f32 long .limit)" 16384 "rowstats f32: rows in registers to 512 threads"
is "$(variant layernorm_f32 stream .one_read)" false "layernorm f32 stream: 1024 threads a row"
is "$(variant layernorm_f32 stream .keeps)" true "layernorm f32: its stream keeps packs in shared memory"
is "$(group rowstats_f32 '[.variants[] | select(.keeps) | .name]')" '[]' "rowstats f32 (one read): nothing keeps packs"
is "$(variant xent_f32 stream '{one_read, keeps}')" '{"one_read":true,"keeps":false}' \
  "cross-entropy f32 stream (one read): no keep"
is "$(variant layernorm_f32 stream "{whole, chunk: $chunk}")" '{"whole":true,"chunk":32}' \
  "layernorm f32 stream: rows of whole chunks (of 8 packs of 4) without item guards"
is "$(variant softmax_bf16 stream .whole)" false "softmax bf16 stream (16-bit, read again): no WHOLE instance"
is "$(variant rowstats_f32 stream "{whole, chunk: $chunk}")" '{"whole":true,"chunk":16}' \
  "rowstats f32 stream: rows of whole chunks (R % (T*16) == 0) without item guards"
is "$(variant softmax_f32 stream '{items, wide_items, items64}')" '{"items":4,"wide_items":8,"items64":2}' \
  "softmax f32 stream (reads a row twice): 8 packs a chunk with 32-bit indices, 2 with 64-bit"
is "$(variant softmax_bf16 stream '{items, wide_items, items64}')" '{"items":4,"wide_items":0,"items64":2}' \
  "softmax bf16 stream: 4 packs a chunk (8 spilled), 2 with 64-bit indices (4 spilled)"
is "$(variant rowstats_f32 stream '{items, wide_items}')" '{"items":4,"wide_items":0}' \
  "rowstats f32 stream (reads a row once): 4 packs a chunk"
is "$(variant softmax_f32 stream '{when, condition, storage, vec, items, wide_items}')" \
  '{"when":"always","condition":"otherwise","storage":"stream","vec":4,"items":4,"wide_items":8}' \
  "softmax f32: the stream, otherwise, with its two ITEMS"
is "$(variant logsumexp_f32 stream .one_read)" true \
  "logsumexp f32 stream: 512 threads a row when the rows fill two blocks an SM"
is "$(variant card_bf16 long .limit)" 16384 "card bf16 (16-bit, read once): rows in registers to 256 threads"
is "$(variant card_bf16 stream .one_read)" true "card bf16 stream: 256 threads a row, six blocks an SM, where the rows fill them"
grep -q 'T = pow2 in \[32, 256 when rows >= 6\*SMs, 512 when rows >= 2\*SMs' "$work/s.plan"
is "$?" 0 "--emit=plan: a one-read stream's 256 and 512 threads"

# Narrow: rows that write nothing along them, in the warps they need.
is "$(variant rowstats_f32 narrow '{when, limit, fit, items}')" \
  '{"when":"row_narrower","limit":12288,"fit":"row","items":8}' \
  "rowstats f32 (writes nothing along the row): narrow rows to 12288"
is "$(variant rowstats_f32 narrow '32 * .items * .vec')" 1024 \
  "rowstats f32: the narrow block is the warps the row needs (1024 elements a warp)"
is "$(variant card_bf16 narrow .condition)" \
  'when R <= 24576, 32*ceil(R/2048) < pow2 >= R/64 (a power of two would leave warps idle) and 32-bit indices do' \
  "card bf16: narrow rows to 24576"
is "$(variants rowstats_f32)" "warp block narrow long cluster stream" \
  "rowstats f32: narrow only where a power of two would leave warps idle, before long"
is "$(variants softmax_f32)" "warp block long cluster stream" "softmax f32 (writes y along the row): no narrow variant"

# Clusters.
is "$(variant rmsw_bf16 cluster '{when, limit, loops}')" '{"when":"clusters","limit":524288,"loops":true}' \
  "rmsw bf16 (one level, streamed rows read twice): clusters for any number of rows, looping over them"
is "$(variant softmax_f32 cluster '{when, limit, loops, pair_loops}')" '{"when":"clusters","limit":262144,"loops":false,"pair_loops":false}' \
  "softmax f32 (two levels, online sums): clusters only when the device holds one for every row"
is "$(variant layernorm_f32 cluster '{loops, pair_loops}')" '{"loops":false,"pair_loops":true}' \
  "layernorm f32 (a mean and a variance): clusters of two blocks for any number of rows too"

# Columns.
is "$(group softmax_col_bf16 '{class, vec: .variants[0].vec}')" '{"class":"stitch-column","vec":8}' \
  "softmax bf16 columns: packs of 8 columns a thread"
is "$(variant softmax_col_bf16 stream-packed '{when, condition, vec}')" \
  '{"when":"column_groups","condition":"when ceil(rows/(8*4)) >= 3/4 of the SMs","vec":4}' \
  "softmax bf16 columns: streamed in packs of 4 when the groups fill the SMs"
is "$(variant softmax_col_bf16 stream '{when, vec, index_bits}')" '{"when":"always","vec":1,"index_bits":0}' \
  "softmax bf16 columns: else streamed a column a thread, 32-bit indices where the sizes allow"
is "$(variants softmax_col_bf16)" "short reg stream-packed split stream" \
  "softmax bf16 columns: split before the column a thread"
is "$(variant softmax_col_bf16 split '{when, fit, vec, items, block}')" \
  '{"when":"column_split","fit":"column_split","vec":4,"items":4,"block":512}' \
  "softmax bf16 columns: the split in blocks of 512, VEC 4, ITEMS 4"
is "$(variants colshift_f32)" "short reg stream-packed split stream" "a column max kept as an output splits too"
is "$(variants layernorm_col_f32)" "short reg stream-packed stream" "layernorm f32 columns (second moments): no split"

# Rows a thread: short rows that read w share each pack of it between two
# rows (rmsw); rows without such an operand keep one a thread (softmax).
is "$(variant rmsw_bf16 warp '{limit, items, rows}')" '{"limit":512,"items":2,"rows":2}' \
  "rmsw bf16: the warp variant holds 2 rows a thread at ITEMS 2"
is "$(group softmax_bf16 '[.variants[].rows] | max')" 1 "softmax bf16: one row a thread (no operand along the rows)"
is "$(variant rmsw_bf16 warp '{rows, prefetch, sm_threads}')" '{"rows":2,"prefetch":true,"sm_threads":1024}' \
  "rmsw bf16: the warp launch takes ROWS 2, TY*2 rows a block at a time, a wave of blocks (1024 threads an SM)"
is "$(variant rmsw_bf16 block .rows)" 1 "rmsw bf16: the block variant keeps ROWS 1"
is "$(variant rmsw_bf16 warp .prefetch)" true "rmsw bf16: the warp variant loads the next rows ahead"
is "$(variant rms128_bf16 warp '{rows, prefetch, sm_threads, cover_bytes, threads_x}')" '{"rows":2,"prefetch":true,"sm_threads":1024,"cover_bytes":2,"threads_x":8}' \
  "rms128 bf16 (a literal row of 128): the warp launch loops a wave over rows the L2 cache holds, covers larger ones (2 bytes an element)"
is "$(variant addrms_bf16 warp '{rows, prefetch}')" '{"rows":2,"prefetch":false}' \
  "addrms bf16: two held inputs hold 2 rows a thread but load none ahead"

# EARLY (schedule.c, early_operands()): the block variant of a norm loads
# w's packs with the row, bound at its 128 threads; no other variant, and
# no kernel without such an operand.
is "$(variant rmsw_bf16 block '{whole, early}')" '{"whole":true,"early":true}' \
  "rmsw bf16: the block variant's WHOLE instance loads w early (EARLY)"
is "$(group rmsw_bf16 '[.variants[] | select(.early) | .name]')" '["block"]' "rmsw bf16: no other variant loads early"
is "$(group rmsw_bf16 '{early_threads, max_threads}')" '{"early_threads":128,"max_threads":1024}' \
  "rmsw bf16: EARLY instances bound at 128 threads, the others at 1024"
is "$(group rmsw_bf16 '[.early_threads, (.variants[] | select(.early) | .limit / (.items * .vec))]')" '[128,128]' \
  "rmsw bf16: the early loads in blocks bound at the block variant's largest, 128 threads"
is "$(group softmax_f32 '{early_threads, early: [.variants[] | select(.early)]}')" '{"early_threads":0,"early":[]}' \
  "softmax f32 (no row operand): no EARLY instance"

# Whole row groups of whole rows: the warp variant of one row a thread
# and the block variant run without row or item guards (WHOLE); two rows
# a thread and the long variant do not (they spilled).
is "$(group softmax_f32 '[.variants[] | select(.storage == "registers" and .whole) | .name]')" '["warp","block"]' \
  "softmax f32: the warp and block variants run whole row groups without guards"
is "$(group rmsw_bf16 '[.variants[] | select(.storage == "registers" and .whole) | .name]')" '["block"]' \
  "rmsw bf16: only the block variant (the warp variant holds 2 rows a thread)"
is "$(variant softmax_f32 long .whole)" false "softmax f32: not the long variant"
is "$(variant softmax_f32 warp '{rows, sm_threads}')" '{"rows":1,"sm_threads":0}' \
  "softmax f32 warp: a row a thread, a block per row group (no SM cap)"
is "$(variant softmax_f32 warp '{fit, block}')" '{"fit":"short_rows","block":128}' \
  "softmax f32 warp: blocks of 128 threads of short rows (or one warp, by the device's occupancy at launch)"
is "$(group masked_bf16 '[.variants[] | select(.whole)]')" '[]' "masked bf16 (rows over two kept axes): no WHOLE instance"

# Rows batch-fastest (schedule.c, batch_axes()).
is "$(group masked_bf16 '{batch, batch_bytes, batch_limit}')" '{"batch":[0],"batch_bytes":6,"batch_limit":26214400}' \
  "masked bf16: rows visited batch-fastest (B) where S*R*6 bytes exceed half the L2"
is "$(group mask_and_row_f32 .batch)" '[]' "a mask [S, D] and a row [B, 1, D] (both kept axes): rows in order"
is "$(group batch_row_f32 .batch)" '[]' "a row [B, 1, D] only (the first kept axis): rows in order"
is "$(group rmsw_bf16 .batch)" '[]' "rmsnorm's w (no kept axis): rows in order"

# Values kept across passes (footprint.c): a math function every pass
# would recompute (tanh) is kept; exp and adds are recomputed.
is "$(group tanh_softmax_f32 .kept)" "$("$JQ" -c '[.kernels[] | select(.name == "tanh_softmax_f32") | .values[] | select(.op == "tanh") | .id]' "$work/s.json")" \
  "softmax(tanh(x)): tanh kept across passes"
is "$(group softmax_f32 .kept)" '[]' "softmax f32: nothing kept (exp is recomputed)"

# Literal sizes: the conditions are decided, only the variant that runs remains.
is "$(group softmax_64x1024 '{decided, variants: [.variants[] | {name, fit, threads_x, threads_y}]}')" \
  '{"decided":true,"variants":[{"name":"block","fit":"none","threads_x":64,"threads_y":2}]}' \
  "softmax of 64 x 1024: decided at compile time, the block variant alone, its block fixed"
is "$(group softmax_f32 '{decided, n: (.variants | length)}')" '{"decided":false,"n":5}' \
  "softmax of M x N: every variant, chosen at run time"
# The stitch plan (stitch_plan.c): each kernel's passes and what they read.
passes() { group "$1" "[.plan.$2[] | .kind + \"\(.level)\"] | join(\" \")"; }
is "$(passes softmax_f32 register_passes)" "level1 level2 output0" "softmax f32: the register kernel folds a level a pass, then writes"
is "$(passes softmax_f32 stream_passes)" "online1 output0" "softmax f32: the stream kernel folds the max and the sum of exp in one read"
is "$(passes layernorm_f32 stream_passes)" "moments1 output0" "layernorm f32: the mean and the variance in one read of the stream"
is "$(passes rowstats_f32 stream_passes)" "moments1 output0" "rowstats f32: one moments pass"
is "$(group rowstats_f32 .plan.stream_reads)" 1 "rowstats f32: the stream reads each row once (it writes nothing along it)"
is "$(group softmax_f32 '.plan.stream_reads')" 2 "softmax f32: the stream reads each row twice"
is "$(group lnwb_f32 '{held: (.plan.held | length), along: (.plan.along | length), early: (.plan.early | length)}')" \
  '{"held":1,"along":2,"early":2}' "layernorm with w and b: x held, w and b read along the row, loaded early"
is "$(group softmax_f32 '[.plan.params[].kind] | join(" ")')" "input output size size" \
  "softmax f32: the kernels take x, y, M and N"
# Column sums (stitch.c, take_columns()): rmsnorm's dw joins the row
# stitch of its backward as column partials; every variant adds them,
# in blocks of 512, a wave of two an SM, the stream one row a block.
is "$(group rmsw_f32_bwd '.plan.columns | length')" 1 "rmsnorm f32 backward: dw a column sum of the row stitch"
is "$("$JQ" -r '.kernels[] | select(.name == "rmsw_f32_bwd") | .groups | length' "$work/s.json")" 1 \
  "rmsnorm f32 backward: one group (dx and dw), x and dy read once"
is "$(group rmsw_f32_bwd '[.variants[] | "\(.name):\(.partials):\(.block):\(.sm_threads)"] | join(" ")')" \
  "warp:true:512:1024 block:true:512:1024 solo:true:1:512 solo-long:true:1:512 cluster:true:512:1024 stream:true:1:1024" \
  "rmsnorm f32 backward: partials in every variant, blocks of 512 (the solo ones and the stream: one row), two an SM (the solo ones: one)"
is "$(group rmsw_f32_bwd '.max_threads')" 512 "rmsnorm f32 backward: bound to its blocks of 512"
# Outputs along the row that need no reduction of the group (bias and
# gelu's backward: dx beside db, its column sum; a row's copy beside its
# sum): the stream kernel writes them in its first pass and reads the
# domain once.
printf '%s\n' 'kernel bg_bwd(x: f32[M, N], dy: f32[M, N]) -> (dx: f32[M, N], db: f32[N]) { dx = dy * gelu(x); db = sum(dx, 0) }' \
  'kernel twice_sum(x: bf16[M, N]) -> (y: bf16[M, N], s: f32[M]) { y = x * 2; s = sum(x, -1) }' \
  'kernel scaled(x: f32[M, N]) -> (y: f32[M, N]) { y = x / sum(x, -1) }' > "$work/early.te"
"$TECC" -O2 --emit=json "$work/early.te" -o "$work/early.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
writes() { "$JQ" -rc --arg k "$1" '.kernels[] | select(.name == $k) | .groups[0].plan | [.stream_passes[] | "\(.kind)\(.level):\(.writes | length):\(.reads | length)"] + [.stream_reads] | join(" ")' "$work/early.json"; }
is "$(writes bg_bwd)" "level1:1:2 output0:0:0 1" "dy * gelu(x) and its column sum: dx written in the level pass, one read"
is "$(writes twice_sum)" "level1:1:1 output0:0:0 1" "x * 2 and sum(x, -1): y written in the level pass, one read"
is "$(writes scaled)" "level1:0:1 output0:1:1 2" "x / sum(x, -1): y written in the output pass, two reads"
# Rows longer than the row stitch keeps its column sums for (its register
# variants, the cluster where one level) run the plan with the sums apart
# (fuse.c, plan_apart(); schedule.c, rows_apart()): a row group without
# the short rows' variants, then a column group; literal sizes leave the
# plan that runs.
printf '%s\n' 'kernel ln(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> (y: bf16[M, N]) { y = (x - mean(x, -1)) * rsqrt(var(x, -1) + 1e-5) * w + b }' \
  'kernel ln_bwd = grad(ln)' > "$work/apart.te"
"$TECC" -O2 --emit=json "$work/apart.te" -o "$work/apart.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
apart() { "$JQ" -rc "$2" "$work/$1"; }
is "$(apart apart.json '.kernels[] | select(.name == "ln_bwd") | .apart | [.group, .rows_longer_than, [.groups[] | .kind]]')" \
  '[0,4096,["stitch","stitch"]]' "layernorm bf16 backward: rows longer than 4096 sum dw and db apart"
is "$(apart apart.json '.kernels[] | select(.name == "ln_bwd") | [.apart.groups[0].variants[] | .name] | join(" ")')" \
  "long stream" "the apart plan's rows: no variant of rows of 4096 or less, no cluster"
is "$(apart apart.json '[.kernels[] | select(.name == "ln") | has("apart")]')" '[false]' "the forward has no apart plan"
"$TECC" -O2 -D M=1024 -D N=65536 --emit=json "$work/apart.te" -o "$work/apart_long.json"
"$TECC" -O2 -D M=8192 -D N=4096 --emit=json "$work/apart.te" -o "$work/apart_short.json"
is "$(apart apart_long.json '.kernels[] | select(.name == "ln_bwd") | [has("apart"), [.groups[] | .class]]')" \
  '[false,["stitch-row","stitch-column"]]' "literal rows of 65536: the apart plan alone"
is "$(apart apart_short.json '.kernels[] | select(.name == "ln_bwd") | [has("apart"), (.groups[0].plan.columns | length)]')" \
  '[false,2]' "literal rows of 4096: the column sums in the row stitch alone"
"$TECC" -O2 "$work/apart.te" -o "$work/apart.cu" || { echo "Bail out! tecc failed"; exit 1; }
ok "the entry runs the apart plan for rows longer than 4096" grep -q 'if (N > 4096) {' "$work/apart.cu"
# A column variance reads its column mean: the mean joins the row
# stitch, the variance (a second column sum reading the first) does not.
echo 'kernel colvar_f32(x: f32[M, N]) -> (s: f32[M], m: f32[N], v: f32[N]) { s = sum(x, -1); m = mean(x, 0); v = var(x, 0) }' \
  > "$work/colvar.te"
"$TECC" -O2 --emit=json "$work/colvar.te" -o "$work/colvar.json"
is "$("$JQ" -c '[.kernels[0].groups[] | [.kind, (.plan.columns // [] | length)]]' "$work/colvar.json")" \
  '[["stitch",1],["reduce",0]]' "sum(x, -1), mean(x, 0), var(x, 0): the mean a column sum, the variance a reduction of its own"
# Column stitches in registers (schedule.c, held_column_vec()): half a
# pack of columns where the group writes two results or more, or holds
# 8-byte values, but two where it holds 16-bit values, which sit two to a
# word; one result keeps the whole pack.
printf '%s\n' 'kernel col_two(x: bf16[M, N]) -> (a: bf16[M, N], l: bf16[M, N]) { a = softmax(x, 0); l = log_softmax(x, 0) }' \
  'kernel col_one(x: bf16[M, N]) -> (a: bf16[M, N]) { a = softmax(x, 0) }' \
  'kernel col_f64(x: f64[M, N]) -> (a: f64[M, N]) { a = softmax(x, 0) }' > "$work/cols.te"
"$TECC" -O2 --emit=json "$work/cols.te" -o "$work/cols.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
"$TECC" -O2 --emit=json "$top_srcdir/tests/regress/column_pairs_vec.te" -o "$work/mix.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
held_vec() { "$JQ" -rc --arg k "$2" '.kernels[] | select(.name == $k) | .groups[0] | [.variants[] | select(.storage == "registers") | .vec]' "$1"; }
is "$(held_vec "$work/cols.json" col_two)" '[4,4]' "softmax and log_softmax bf16 over columns: half a pack in registers"
is "$(held_vec "$work/cols.json" col_one)" '[8,8]' "softmax bf16 over columns: the whole pack"
is "$(held_vec "$work/cols.json" col_f64)" '[1]' "softmax f64 over columns: a column a thread"
is "$(held_vec "$work/mix.json" colmix)" '[2]' "f64 and bf16 held: two columns a thread, a word of bf16"

# A plain row reduction takes 8 packs a thread on rows of 256 packs and
# more that need no split, where its VEC accumulators take 48 bytes or
# fewer: an f32 or bf16 sum (16, 32), an f32 argmax (4 x 12), not a bf16
# argmax (8 x 12: it spilled).
cat > "$work/rowred.te" <<'EOT'
kernel sum_f32(x: f32[M, N]) -> (y: f32[M]) {
    y = sum(x, -1)
}
kernel sum_bf16(x: bf16[M, N]) -> (y: f32[M]) {
    y = sum(f32(x), -1)
}
kernel argmax_f32(x: f32[M, N]) -> (y: i64[M]) {
    y = argmax(x, -1)
}
kernel argmax_bf16(x: bf16[M, N]) -> (y: i64[M]) {
    y = argmax(x, -1)
}
EOT
"$TECC" -O2 --emit=json "$work/rowred.te" -o "$work/rowred.json" || echo "not ok - tecc --emit=json failed on rowred.te"
rowred() { "$JQ" -rc --arg k "$1" '.kernels[] | select(.name == $k) | .groups[0].variants[0] | {vec, items, long_items, long_packs}' "$work/rowred.json"; }
is "$(rowred sum_f32)" '{"vec":4,"items":4,"long_items":8,"long_packs":256}' "sum f32 rows: 8 packs a thread from 256 packs a row"
is "$(rowred sum_bf16)" '{"vec":8,"items":4,"long_items":8,"long_packs":256}' "bf16 summed in f32: 8 packs too (8 accumulators of 4 bytes)"
is "$(rowred argmax_f32)" '{"vec":4,"items":4,"long_items":8,"long_packs":256}' "argmax f32: 8 packs (4 accumulators of 12 bytes)"
is "$(rowred argmax_bf16)" '{"vec":8,"items":4,"long_items":0,"long_packs":256}' "argmax bf16: 4 packs always (8 accumulators of 12 bytes spilled at 8)"
done_testing
