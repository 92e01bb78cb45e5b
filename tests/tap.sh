# tap.sh — TAP helpers for shell tests (placeholder; filled in by H3).
