"""A/B kernel time of whole programs built by two tecc versions, or more
(bench/NOTES.md): torch.profiler device time of one call, each variant's
outputs against base's (largest difference relative to the largest
|output|; integers, bools and 8-bit floats: 0 or inf), on the same random
inputs.

    DIR/base/P.cu, DIR/new/P.cu (with their .h): `tecc P.te -o DIR/V/P.cu`
    python3 bench/prog_ab.py [--events] [--sets N] [--kernels] DIR CASE...
                                           (on the GPU, from the top)
    CASE: prog:kernel:M=70001,N=4096   (kernel `-`: the program's kernel
          of its own name, a file of top-level statements; an entry
          INPUT=LO..HI draws that integer input from [LO, HI), as an
          embedding's ids: prog:embedding:V=128256,D=4096,N=8192,ids=0..128256)

Every directory of DIR is a variant (each with every program's .cu);
`base` is the reference, and the others are timed beside it in name
order, one column each.

--sets N times each variant over N sets of inputs in turn (seeds 1..N;
default 1): with one set, a call's first reads can hit the lines the call
before left in L2 (doc/performance.md: buffers rotated between runs).
--kernels prints, under each case, every kernel's mean span a call and
the mean time from a call's first start to its last end.

--events times each call in CUDA events instead (bench.Timer, the
suite's measure: the gaps between a call's launches count), three rounds
of base then the others, the median of each.  Kernel time leaves those
gaps out, and where a launch is chained to the one before it (its blocks
wait at its top) the union of the spans covers its wait; so a change to
how the launches follow each other is measured with --events.
"""
import sys, os, subprocess, concurrent.futures as cf
sys.path.insert(0, "python")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, tecc
import bench  # device_events

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}
F8 = {"f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}


def variants_of(root):
    """base first, then the other directories of root by name."""
    names = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    if "base" not in names:
        sys.exit("prog_ab: %s has no base/" % root)
    return ["base"] + [d for d in names if d != "base"]


def build_libs(root, progs, variants):
    """nvcc each ROOT/V/P.cu into a shared library (unless its .so is newer);
    {V: {P: tecc.load(...)}}."""
    def fresh(v, p):  # built before (here, to spare device time) and not edited since
        so, cu = "%s/%s/%s.so" % (root, v, p), "%s/%s/%s.cu" % (root, v, p)
        return os.path.exists(so) and os.path.getmtime(so) >= os.path.getmtime(cu)
    jobs = [["nvcc", "-shared", "-Xcompiler", "-fPIC", "-O3", "-arch=sm_90", "-o", "%s/%s/%s.so" % (root, v, p),
             "%s/%s/%s.cu" % (root, v, p)] for v in variants for p in progs if not fresh(v, p)]
    with cf.ThreadPoolExecutor(16) as ex:
        res = list(ex.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
    for c, r in zip(jobs, res):
        if r.returncode:
            print(" ".join(c), r.stderr[-3000:])
            sys.exit(1)
    return {v: {p: tecc.load("%s/%s/%s.so" % (root, v, p), "%s/%s/%s.h" % (root, v, p)) for p in progs}
            for v in variants}


def inputs(sig, sizes, ranges, seed=1):
    """Random tensors for sig's inputs, its dimensions named in `sizes`,
    the integer inputs named in `ranges` drawn from their [lo, hi)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for p in sig.inputs:
        shape = [sizes[d] if isinstance(d, str) else d for d in p.shape]
        if p.name in ranges:
            lo, hi = ranges[p.name]
            t = torch.randint(lo, hi, shape, generator=g, device="cuda", dtype=torch.int64)
            out.append(t.to(getattr(torch, {"i32": "int32", "i64": "int64"}[p.dtype])))
        elif p.dtype in DT:
            out.append(torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(DT[p.dtype]))
        elif p.dtype == "bool":
            out.append(torch.rand(shape, generator=g, device="cuda") > 0.5)
        elif p.dtype in F8:
            out.append(torch.randn(shape, generator=g, device="cuda").mul(16).to(F8[p.dtype]))
        elif p.dtype in ("i8", "u8"):
            lo = -128 if p.dtype == "i8" else 0
            t = torch.randint(lo, lo + 256, shape, generator=g, device="cuda", dtype=torch.int64)
            out.append(t.to(torch.int8 if p.dtype == "i8" else torch.uint8))
        else:  # integers: nonzero, either sign (divisors)
            t = torch.randint(1, 1000, shape, generator=g, device="cuda", dtype=torch.int64)
            s = torch.randint(0, 2, shape, generator=g, device="cuda", dtype=torch.int64) * 2 - 1
            out.append((t * s).to(getattr(torch, {"i32": "int32", "i64": "int64"}[p.dtype])))
    return out


def ktime(fn, reps=30):
    """(device time of one call in us, kernels a call, their names).  The
    time is the union of the kernels' spans, as bench.kernel_us: a second
    stage launched early (programmatic dependent launch) waits beside the
    first, and summing the two counted its wait twice."""
    evs = [e for e in bench.device_events(torch, fn, reps)
           if "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    names = sorted(set(e.name.split("<")[0][-40:] for e in evs))
    spans = [(e.time_range.start, e.time_range.end) for e in evs]
    return bench.busy_us(spans) / reps, len(evs) // reps, names


def kernel_table(fn, reps=30):
    """Lines of each kernel's mean span a call (in launch order) and the
    mean span of a whole call, in us (torch.profiler)."""
    evs = sorted((e for e in bench.device_events(torch, fn, reps)
                  if "memcpy" not in e.name.lower() and "memset" not in e.name.lower()),
                 key=lambda e: e.time_range.start)
    per = len(evs) // reps
    if per == 0:
        return []
    lines, order = [], []
    spans = {}
    for i, e in enumerate(evs[:per * reps]):
        name = e.name.split("<")[0][-40:]
        if i < per:
            order.append(name)
        spans.setdefault(i % per, []).append(e.time_range.end - e.time_range.start)
    for k, name in enumerate(order):
        lines.append("    %-44s %8.1f" % (name, sum(spans[k]) / reps))
    calls = [evs[c * per:(c + 1) * per] for c in range(reps)]
    whole = sum(max(e.time_range.end for e in c) - c[0].time_range.start for c in calls) / reps
    lines.append("    %-44s %8.1f" % ("(a call, first start to last end)", whole))
    return lines


def rotated(kern, sets):
    """A call of kern on the next of `sets` each time."""
    turn = [0]

    def call():
        kern(*sets[turn[0]])
        turn[0] = (turn[0] + 1) % len(sets)
    return call


def max_diff(ob, on):
    """Largest |new - base| over the largest |base| (integers, bools: 0 or inf)."""
    diff = 0.0
    for a, b in zip(ob, on):
        if a.dtype in F8.values():
            a, b = a.view(torch.uint8), b.view(torch.uint8)
        if not a.is_floating_point():
            diff = max(diff, 0.0 if torch.equal(a, b) else float("inf"))
        else:
            d = torch.nan_to_num((a.double() - b.double()).abs(), nan=0.0, posinf=0.0)
            diff = max(diff, d.max().item() / (a.double().abs().max().item() + 1e-30))
    return diff


def etime(fn, rounds=3):
    """(median of `rounds` event timings of one call, in us; 0 kernels,
    no names): bench.Timer, as the suite times a call."""
    timer = bench.Timer(torch, 200)
    ts = sorted(timer(lambda i: fn(), 1) for _ in range(rounds))
    return ts[len(ts) // 2], 0, []


def main(root, cases, measure=ktime, nsets=1, per_kernel=False):
    variants = variants_of(root)
    libs = build_libs(root, sorted(set(c.split(":")[0] for c in cases)), variants)
    others = variants[1:]
    print("%-40s %-22s %9s %s" % ("kernel", "sizes", "base us",
                                  " ".join("%9s %6s %8s" % (v[:9], "ratio", "maxdiff") for v in others)))
    for c in cases:
        p, k, sz = c.split(":")
        entries = dict(kv.split("=") for kv in sz.split(","))
        sizes = {n: int(v) for n, v in entries.items() if ".." not in v}
        ranges = {n: tuple(int(x) for x in v.split("..")) for n, v in entries.items() if ".." in v}
        k = p if k == "-" else k
        kb = libs["base"][p].kernels[k]
        sets = [inputs(kb.sig, sizes, ranges, seed) for seed in range(1, nsets + 1)]
        args = sets[0]
        given = {s: sizes[s] for s in kb.sig.sizes if s in sizes}

        def outputs(kern):
            o = kern(*args, **given)
            return o if isinstance(o, tuple) else (o,)
        ob = outputs(kb)
        tb = measure(rotated(kb, sets))[0]
        cols, tables = [], [("base", kernel_table(rotated(kb, sets)) if per_kernel else [])]
        for v in others:
            kn = libs[v][p].kernels[k]
            tn = measure(rotated(kn, sets))[0]
            cols.append("%9.1f %6.3f %8.2e" % (tn, tn / tb, max_diff(ob, outputs(kn))))
            if per_kernel:
                tables.append((v, kernel_table(rotated(kn, sets))))
        print("%-40s %-22s %9.1f %s" % (p + ":" + k, sz, tb, " ".join(cols)), flush=True)
        for v, lines in tables:
            if lines:
                print("  " + v)
                print("\n".join(lines), flush=True)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--events", action="store_true")
    ap.add_argument("--sets", type=int, default=1)
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("root")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    main(a.root, a.cases, etime if a.events else ktime, max(1, a.sets), a.kernels)
