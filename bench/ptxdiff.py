#!/usr/bin/env python3
"""Which kernel instances two tecc outputs compile differently (bench/NOTES.md).

For two A/B variant directories (bench/ab.py's layout: DIR/a_base,
DIR/b_new, each with the same .cu names), compiles each .cu to PTX for
one architecture and compares every kernel instance's PTX, the file's
anonymous-namespace hash left out.  An instance whose PTX is the same in
both compiles to the same machine code: its timing cannot have moved, so
an A/B need only time the shapes that run the instances listed.

    python3 bench/ptxdiff.py A_DIR B_DIR [--arch sm_90]
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

NAMESPACE = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_[A-Za-z0-9_]+_cu_[0-9a-f]+")


def entries(ptx):
    """{instance (demangled enough to read): its PTX, names normalized}."""
    out = {}
    for m in re.finditer(r"\.entry (\S+)\((.*?)\n\}\n", ptx, re.S):
        name = m.group(1)
        # the file's hash in its anonymous namespace and in the names nvcc
        # gives its __device__ tables (_INTERNAL_<hash>: tecc's sin/cos), and
        # the function's number in its block labels ($L__BB<function>_<block>)
        body = re.sub(r"(_GLOBAL__N__|_INTERNAL_)[0-9a-f]+", r"\1", m.group(0).replace(name, "K"))
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
        out[NAMESPACE.sub("", name)] = body
    return out


def ptx_of(cu, arch, tmp):
    out = os.path.join(tmp, os.path.basename(os.path.dirname(cu)) + "_" + os.path.basename(cu) + ".ptx")
    subprocess.run(["nvcc", "-ptx", "-arch=" + arch, "-o", out, cu], check=True)
    with open(out) as f:
        return f.read()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args(argv)
    same = differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for a in sorted(glob.glob(os.path.join(args.a, "*.cu"))):
            b = os.path.join(args.b, os.path.basename(a))
            if not os.path.exists(b):
                continue
            ea, eb = entries(ptx_of(a, args.arch, tmp)), entries(ptx_of(b, args.arch, tmp))
            diff = [k for k in ea if k in eb and ea[k] != eb[k]]
            only = [k for k in ea if k not in eb] + [k for k in eb if k not in ea]
            n_same = sum(1 for k in ea if k in eb and ea[k] == eb[k])
            same += n_same
            differ += len(diff)
            print("%s: same %d, differ %d, in one only %d" % (os.path.basename(a), n_same, len(diff), len(only)))
            for k in diff + only:
                print("   " + k)
    print("total: same %d, differ %d" % (same, differ))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
