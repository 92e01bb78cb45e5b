#!/bin/sh
# run-O0.sh — the conformance run of run.sh at -O0 (one kernel per operation).
CONFORM_OPT=-O0 exec "${top_srcdir:-.}/tests/conform/run.sh"
