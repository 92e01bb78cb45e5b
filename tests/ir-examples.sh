#!/bin/sh
# ir-examples.sh — golden `tecc --emit=ir` of every program in examples/,
# kept in tests/ir/examples/NAME.ir (ir.sh does the work).
: "${top_srcdir:=.}"
IR_SOURCE_DIR="$top_srcdir/examples" IR_GOLDEN_DIR="$top_srcdir/tests/ir/examples" \
  exec sh "$top_srcdir/tests/ir.sh"
