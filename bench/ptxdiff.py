#!/usr/bin/env python3
"""Which kernel instances two tecc outputs compile differently (bench/NOTES.md).

For two A/B variant directories (bench/ab.py's layout: DIR/a_base,
DIR/b_new, each with the same .cu names), compiles each .cu to PTX for
one architecture and compares every kernel instance's PTX, the file's
anonymous-namespace hash left out.  An instance whose PTX is the same in
both compiles to the same machine code: its timing cannot have moved, so
an A/B need only time the shapes that run the instances listed.

    python3 bench/ptxdiff.py A_DIR B_DIR [--arch sm_90] [--new-bool] [--cubin]
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import struct
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


def paired(ea, eb):
    """B's instances renamed as the A instances they are with one false
    bool template argument (Lb0E) left out (--new-bool: a template
    parameter added to a kernel, its false instances compared with the
    kernel before).  An A instance may be several B names less one bool
    (masked softmax's PACKS and the new one): of those, one whose code is
    the same, if any.  The names of its static shared arrays in PTX hold
    the instance's name too."""
    def as_a(name, without, body):
        if isinstance(body, bytes):  # machine code: no names in it
            return body
        return body.replace(re.sub(r"^_ZN\d+", "", name), re.sub(r"^_ZN\d+", "", without))
    out, taken = {}, set()
    for a_name, a_body in ea.items():
        found = None
        for name, body in eb.items():
            for m in re.finditer(r"Lb0E", name):
                if name[:m.start()] + name[m.end():] == a_name:
                    mine = as_a(name, a_name, body)
                    if found is None or mine == a_body:
                        found = (name, mine)
        if found:
            out[a_name] = found[1]
            taken.add(found[0])
    out.update((k, v) for k, v in eb.items() if k not in taken)
    return out


def cubin_entries(path):
    """{instance: its machine code}: the .text.<name> sections of a cubin
    (an ELF file; nvcc -cubin), names normalized as entries() does."""
    with open(path, "rb") as f:
        elf = f.read()
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx]
    out = {}
    for sec in sections:
        name_at = strtab[4] + sec[0]
        name = elf[name_at:elf.index(b"\0", name_at)].decode()
        if name.startswith(".text."):
            out[NAMESPACE.sub("", name[len(".text."):])] = elf[sec[4]:sec[4] + sec[5]]
    return out


def ptx_of(cu, arch, tmp):
    out = os.path.join(tmp, os.path.basename(os.path.dirname(cu)) + "_" + os.path.basename(cu) + ".ptx")
    subprocess.run(["nvcc", "-ptx", "-arch=" + arch, "-o", out, cu], check=True)
    with open(out) as f:
        return f.read()


def cubin_of(cu, arch, tmp):
    out = os.path.join(tmp, os.path.basename(os.path.dirname(cu)) + "_" + os.path.basename(cu) + ".cubin")
    subprocess.run(["nvcc", "-cubin", "-arch=" + arch, "-o", out, cu], check=True)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--cubin", action="store_true",
                    help="compare the machine code (each instance's .text section of nvcc -cubin), not the PTX: "
                         "PTX that differs only in its register numbers may compile to the same code")
    ap.add_argument("--new-bool", action="store_true",
                    help="B's kernels take one template bool more: pair each B instance whose name without one of "
                         "its false bools is an A instance with that one")
    args = ap.parse_args(argv)
    same = differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for a in sorted(glob.glob(os.path.join(args.a, "*.cu"))):
            b = os.path.join(args.b, os.path.basename(a))
            if not os.path.exists(b):
                continue
            if args.cubin:
                ea, eb = cubin_entries(cubin_of(a, args.arch, tmp)), cubin_entries(cubin_of(b, args.arch, tmp))
            else:
                ea, eb = entries(ptx_of(a, args.arch, tmp)), entries(ptx_of(b, args.arch, tmp))
            if args.new_bool:
                eb = paired(ea, eb)
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
