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

import bench  # noqa: E402  (Timer, copy_bandwidth, kernel_us)
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
        # kernel time, taken after them, by 2%)
        bench.clear_persisting_l2()
        r["tecc"] = timer(lambda i: c.tecc_fn(*xs), 1)
        r["tecc_k"] = bench.kernel_us(torch, lambda: c.tecc_fn(*xs))
        bench.clear_persisting_l2()
        r["eager"] = timer(lambda i: c.eager(*xs), 1)
        r["eager_k"] = bench.kernel_us(torch, lambda: c.eager(*xs))
        try:
            cf = compiled(torch, c)
            cf(*xs)
            bench.clear_persisting_l2()
            r["compile"] = timer(lambda i: cf(*xs), 1)
            r["compile_k"] = bench.kernel_us(torch, lambda: cf(*xs))
        except Exception as e:  # noqa: BLE001 -- a failed compile is a table entry
            r["check"] += " compile: %s" % str(e).splitlines()[0][:60]
            cf = None
        r["ceiling"] = empty + c.nbytes / (copy * 1e3)
        del xs
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


