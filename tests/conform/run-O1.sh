#!/bin/sh
# run-O1.sh — the conformance run of run.sh at -O1 (fusion, fixed schedules).
CONFORM_OPT=-O1 exec "${top_srcdir:-.}/tests/conform/run.sh"
