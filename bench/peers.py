"""bench/peers.py — what the side benches (bench/indexing/run.py,
bench/quant/run.py) share: a case checked against PyTorch's same function,
then timed two ways: CUDA events around each call (bench.py's Timer:
median, the GPU held while the runs are queued), against the ceiling (an
empty kernel's time plus the ideal bytes at the 1 GiB copy's rate,
doc/performance.md); and kernel time (torch.profiler device time, which
leaves out the host's launch path).

    run(argv, here, cases, compiled, table_name)

cases(torch, lib) -> [Case]; compiled(torch, case) -> the torch.compile'd
function of a case.  Without --lib the library is built from here's
kernels.te with tecc.build().
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

import bench  # noqa: E402  (Timer, copy_bandwidth, kernel_us, in_turn, rotating_outputs)
import tecc  # noqa: E402


class Case:
    """name, shape label, ideal bytes, make() -> inputs, tecc(*inputs),
    eager(*inputs), compiled(*inputs) (or None), check(tecc out, eager out)
    -> (ok, worst)."""

    def __init__(self, name, shape, nbytes, make, tecc_fn, eager, check, compile_fn=None):
        self.name, self.shape, self.nbytes = name, shape, nbytes
        self.make, self.tecc_fn, self.eager, self.check = make, tecc_fn, eager, check
        self.compile_fn = compile_fn


def close(a, b, atol, rtol):
    a, b = a.float(), b.float()
    err = (a - b).abs()
    bound = atol + rtol * b.abs()
    return bool((err <= bound).all()), float((err / bound).max())


def default_compiled(torch, case):
    return torch.compile(case.eager, dynamic=False)


# Input sets each implementation is timed over in turn (2: the tensors
# here are tens to hundreds of MB, past L2, so one other set is enough
# that no call starts on lines the call before left; TECC_BENCH_SETS=1
# times the calls on one set, as before, for comparison).
SETS = max(1, int(os.environ.get("TECC_BENCH_SETS", "2")))


def alternating(fn, sets):
    """A call of fn on the next of `sets` each time, its result kept until
    that set comes round again (bench.rotating_outputs: PyTorch's outputs
    go to other blocks, as tecc's do), by bench.in_turn."""
    return bench.in_turn(bench.rotating_outputs(lambda i: fn(*sets[i]), len(sets)), len(sets))


def timed(torch, timer, fn, sets):
    """(CUDA events, kernel time) of fn over the input sets in turn, us."""
    return timer(alternating(fn, sets), len(sets)), bench.kernel_us(torch, alternating(fn, sets))


def run(argv, here, cases, compiled=default_compiled, table="table"):
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--header")
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    import torch
    if args.lib:
        lib = tecc.load(args.lib, args.header)
    else:
        so, h = tecc.build(os.path.join(here, "kernels.te"))
        lib = tecc.load(so, h)
    timer = bench.Timer(torch, 200)
    copy = bench.copy_bandwidth(torch, timer)
    empty = timer(lambda i: torch.cuda._sleep(0), 1)
    print("copy %.0f GB/s, empty kernel %.2f us" % (copy, empty), flush=True)
    rows = []
    hdr = "%-18s %-20s %8s %8s %8s %8s %6s %6s | %8s %8s %8s %6s  %s" % (
        "case", "shape", "tecc us", "eager", "compile", "ceiling", "%ceil", "c/t",
        "tecc k", "eager k", "comp k", "c/t k", "check")
    lines = [hdr]
    for c in cases(torch, lib):
        if args.only and args.only not in c.name:
            continue
        t0 = time.time()
        xs = c.make()
        got, want = c.tecc_fn(*xs), c.eager(*xs)
        torch.cuda.synchronize()
        ok, worst = c.check(got, want)
        del got, want
        r = {"case": c.name, "shape": c.shape, "check": ("ok %.3g" if ok else "FAIL %.3g") % worst}
        # each implementation timed from L2 without another's persisting
        # lines (bench.clear_persisting_l2: torch.compile's kernels leave
        # up to 11.8 MB of their inputs there, which flattered tecc's
        # kernel time, taken after them, by 2%), and over SETS copies of
        # the inputs in turn ("buffers rotated between runs",
        # doc/performance.md): with one set, the lines a call leaves in L2
        # (reset to normal, not evicted) are the next call's first reads
        sets = [xs] + [c.make() for _ in range(SETS - 1)]
        bench.clear_persisting_l2()
        r["tecc"], r["tecc_k"] = timed(torch, timer, c.tecc_fn, sets)
        bench.clear_persisting_l2()
        r["eager"], r["eager_k"] = timed(torch, timer, c.eager, sets)
        try:
            cf = compiled(torch, c)
            cf(*xs)
            bench.clear_persisting_l2()
            r["compile"], r["compile_k"] = timed(torch, timer, cf, sets)
        except Exception as e:  # noqa: BLE001 -- a failed compile is a table entry
            r["check"] += " compile: %s" % str(e).splitlines()[0][:60]
            cf = None
        r["ceiling"] = empty + c.nbytes / (copy * 1e3)
        del xs, sets
        torch.cuda.empty_cache()

        def f(k):
            v = r.get(k)
            return "%8.1f" % v if isinstance(v, float) else "%8s" % "-"
        ratio = r["compile"] / r["tecc"] if "compile" in r else float("nan")
        ratio_k = r["compile_k"] / r["tecc_k"] if "compile_k" in r else float("nan")
        line = "%-18s %-20s %s %s %s %s %6.1f %6.2f | %s %s %s %6.2f  %s (%.0fs)" % (
            c.name, c.shape, f("tecc"), f("eager"), f("compile"), f("ceiling"),
            100 * r["ceiling"] / r["tecc"], ratio, f("tecc_k"), f("eager_k"), f("compile_k"), ratio_k,
            r["check"], time.time() - t0)
        print(line, flush=True)
        lines.append(line)
        rows.append(r)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, table + ".txt"), "w") as fh:
        fh.write("copy %.0f GB/s, empty kernel %.2f us\n" % (copy, empty))
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["check"].startswith("ok") for r in rows) else 1


