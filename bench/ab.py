#!/usr/bin/env python3
"""A/B timing of variants of the same suite kernels (bench/NOTES.md's method).

A variant is a directory of tecc-generated (and perhaps hand- or
script-edited) `.cu` files with their `.h` headers.  `--build` compiles
each variant into its own `libab.so` (here, on a CPU machine with nvcc);
the timing run (on the GPU) loads every variant, runs each suite case
given with `--cases` on the same inputs, checks every variant's outputs
bit for bit against the first variant's, and times each with bench.py's
Timer against the device-to-device copy of the same run.  Beside the
variants it times the first variant writing one fixed output set (the
suite rotates outputs with inputs), torch.compile both as bench.py
runs it (its outputs freed, so the caching allocator hands the same
block back each call) and with its outputs kept alive (rotated like
tecc's), eager, and a device-to-device copy of the same bytes (the
ceiling at that size: the % of copy divides by a 1 GiB copy).

    python3 bench/ab.py --build DIR --arch sm_90       # here: DIR/*/ -> DIR/*/libab.so
    python3 bench/ab.py --run DIR --cases fullsum:bf16,colsum:f32 \\
        [--shapes 65536x1024,4096x11007,...] [--no-compile]  # on the GPU: any M x N

Variants are sorted by name; the first is the reference.  `--make DIR
--cases ...` writes DIR/base/ (tecc -O2 of the cases) to start from.
"""

import argparse
import re
import concurrent.futures
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import suite  # noqa: E402

tecc = bench.tecc


def parse_cases(text):
    """'fullsum:bf16,colsum' -> [(Case, dtype)]."""
    by_name = {c.name: c for c in suite.cases()}
    out = []
    for item in text.split(","):
        name, _, dts = item.partition(":")
        if name not in by_name:
            raise SystemExit("ab: no suite case %r" % name)
        for d in (dts.split("+") if dts else suite.DTYPES):
            out.append((by_name[name], d))
    return out


def make_base(args):
    tecc_bin = tecc.find_tool("tecc", "TECC", [os.path.join(bench.TOP, "src", "tecc")])
    base = os.path.join(args.make, "base")
    os.makedirs(base, exist_ok=True)
    for case, d in parse_cases(args.cases):
        k = os.path.join(base, case.kernel(d))
        with open(k + ".te", "w") as f:
            f.write(case.te(d))
        bench.run_cmd([tecc_bin, "-O2", k + ".te", "-o", k + ".cu"])
    print("ab: wrote %s" % base)


def build(args):
    nvcc = tecc.find_nvcc()
    dirs = sorted(d for d in glob.glob(os.path.join(args.build, "*")) if os.path.isdir(d))

    def one(src):
        obj = src[:-3] + ".o"
        bench.run_cmd([nvcc, "-c", "-Xcompiler", "-fPIC", "-O3", "-arch=%s" % args.arch,
                       "-o", obj, src])
        return obj

    srcs = [s for d in dirs for s in sorted(glob.glob(os.path.join(d, "*.cu")))]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        objs = list(pool.map(one, srcs))
    for d in dirs:
        mine = [o for o in objs if os.path.dirname(o) == d]
        bench.run_cmd([nvcc, "-shared", "-arch=%s" % args.arch, "-o",
                       os.path.join(d, "libab.so")] + mine)
        for o in mine:
            os.remove(o)
    print("ab: built %s" % ", ".join(os.path.basename(d) for d in dirs))


def load_variants(root):
    out = []
    for d in sorted(glob.glob(os.path.join(root, "*"))):
        so = os.path.join(d, "libab.so")
        if os.path.exists(so):
            out.append((os.path.basename(d), tecc.load(so, sorted(glob.glob(os.path.join(d, "*.h"))))))
    return out


def bitwise_equal(torch, a, b):
    return all(torch.equal(x.reshape(-1).view(torch.uint8), y.reshape(-1).view(torch.uint8)) for x, y in zip(a, b))


def time_case(torch, ctx, variants, case, dtype, m, n):
    """One line per timing: (label, µs, note)."""
    k = case.kernel(dtype)
    nsets = bench.n_sets(bench.case_bytes(case, dtype, m, n), ctx["l2"])
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    sets = [bench.make_inputs(torch, case, dtype, m, n, gen) for _ in range(nsets)]
    timer, res, ref, fixed = ctx["timer"], [], None, None
    for name, lib in variants:
        kern = lib.kernels.get(k)
        if kern is None:
            continue
        outs = [bench.make_outputs(torch, case, dtype, m, n) for _ in range(nsets)]
        values = [kern._torch_args(list(s) + list(o), {}, False, None)[0]
                  for s, o in zip(sets, outs)]
        try:
            kern.call_c(values[0])
            torch.cuda.synchronize()
        except tecc.TeccError as e:
            res.append((name, float("nan"), str(e)))
            continue
        ok, worst = bench.check(torch, case, dtype, m, n, sets[0], outs[0])
        note = "check %s (worst %.3g)" % ("ok" if ok else "FAIL", worst)
        if ref is None:
            ref = [o.clone() for o in outs[0]]
            fixed = values
        elif not bitwise_equal(torch, outs[0], ref):
            note += ", bits differ from %s" % variants[0][0]
        cf = kern.cfunc
        res.append((name, timer(lambda i: cf(*values[i]), nsets), note))
        if fixed is values:
            one = [kern._torch_args(list(s) + list(outs[0]), {}, False, None)[0] for s in sets]
            res.append((name + " fixed-out", timer(lambda i: cf(*one[i]), nsets), ""))
    T = bench.tdtype(torch, case.dtypes(dtype)[1])
    fn = ctx["compiler"].compiled(case, dtype, sets[0])
    if fn is not None:
        res.append(("compile", timer(lambda i: fn(*sets[i]), nsets), "outputs freed (bench.py)"))
        keep = [None] * nsets

        def kept(i):
            keep[i] = fn(*sets[i])

        res.append(("compile kept-out", timer(kept, nsets), "outputs rotated"))
        del keep
    res.append(("eager", timer(lambda i: case.user(T, *sets[i]), nsets), ""))
    del sets
    res.append(("copy, same bytes", same_bytes_copy(torch, timer, bench.case_bytes(case, dtype, m, n), nsets),
                "a copy of half the bytes each way: the ceiling at this size"))
    return res


def same_bytes_copy(torch, timer, byt, nsets):
    """µs of a device-to-device copy moving `byt` bytes (half read, half
    written), rotated over `nsets` buffer pairs like the case's inputs:
    the launch and ramp a kernel of this size pays, which the 1 GiB copy
    that % of copy divides by does not."""
    half = max(16, (byt // 2) // 16 * 16)
    pairs = [(torch.empty(half, dtype=torch.uint8, device="cuda"),
              torch.empty(half, dtype=torch.uint8, device="cuda")) for _ in range(nsets)]
    for src, _ in pairs:
        src.fill_(1)
    us = timer(lambda i: pairs[i][1].copy_(pairs[i][0]), nsets)
    del pairs
    return us


def run(args):
    import torch
    props = torch.cuda.get_device_properties(0)
    ns = argparse.Namespace(no_compile=args.no_compile, compile_budget=600, compile_timeout=120)
    ctx = {"timer": bench.Timer(torch, 100), "l2": getattr(props, "L2_cache_size", 50 << 20),
           "compiler": bench.Compiler(torch, ns)}
    variants = load_variants(args.run)
    copy = bench.copy_bandwidth(torch, ctx["timer"])
    print("ab: %s, copy %.0f GB/s; variants %s" % (props.name, copy,
                                                   ", ".join(v for v, _ in variants)))
    for case, d in parse_cases(args.cases):
        shapes = case.shapes()
        if args.shapes:  # the suite's shapes by label; any other M x N of a case without a batch
            want = args.shapes.split(",")
            shapes = [s for s in shapes if case.shape_label(*s) in want]
            if not case.batch:
                more = [tuple(int(x) for x in w.split("x")) for w in want if re.fullmatch(r"\d+x\d+", w)]
                shapes += [s for s in more if s not in shapes]
        for m, n in shapes:
            byt = bench.case_bytes(case, d, m, n)
            t = time.time()
            res = time_case(torch, ctx, variants, case, d, m, n)
            print("\n%s %s %s (%.1f MB, %.1fs)" % (case.name, d, case.shape_label(m, n),
                                                   byt / 1e6, time.time() - t))
            for label, us, note in res:
                print("  %-22s %9.2f us %6.1f%% %s" % (label, us, byt / (us * 1e-6) / 1e9 / copy * 100,
                                                       note))
            sys.stdout.flush()
            torch.cuda.empty_cache()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", help="write DIR/base from --cases")
    ap.add_argument("--build", help="compile DIR/*/*.cu into DIR/*/libab.so")
    ap.add_argument("--run", help="time DIR/*/libab.so")
    ap.add_argument("--cases", default="")
    ap.add_argument("--shapes", help="comma-separated MxN: the case's shapes by label, or any other (default: the case's)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args(argv)
    if args.make:
        make_base(args)
    if args.build:
        build(args)
    if args.run:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
