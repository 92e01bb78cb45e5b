"""tecc benchmark harness (doc/performance.md): build the suite with tecc at -O2
and -O0, check every result against a float64 reference, time tecc, PyTorch
eager and torch.compile against a device-to-device copy measured in the same
run and against each case's ceiling (an empty kernel's time between the same
events plus the case's bytes at the copy's rate), take tecc's and
torch.compile's kernel time (torch.profiler device time), and write a table,
a CSV and a plot.  Run it through bench/run.sh.
"""

import argparse
import concurrent.futures
import csv
import hashlib
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "python"))
sys.path.insert(0, HERE)

import suite  # noqa: E402
import tecc  # noqa: E402
from tecc.build import run as run_cmd  # noqa: E402
from tecc.header import DTYPE_SIZE  # noqa: E402

IMPLS = ["O2", "O0", "eager", "compile"]
T0 = time.time()


def log(msg):
    print("[%6.1fs] %s" % (time.time() - T0, msg), flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a few shapes, for smoke runs")
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-out")
    ap.add_argument("--build-dir", help="default: OUT/build; reused when its stamp matches")
    ap.add_argument("--build-only", action="store_true", help="build the libraries and stop")
    ap.add_argument("--arch", help="nvcc -arch (default: the GPU's, else sm_90)")
    ap.add_argument("--budget", type=float, default=450, help="seconds for the whole run")
    ap.add_argument("--compile-budget", type=float, default=180,
                    help="seconds of torch.compile compilation in all")
    ap.add_argument("--compile-timeout", type=float, default=60, help="seconds per compile")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-kernel-time", action="store_true",
                    help="skip the kernel time (torch.profiler) of -O2 and torch.compile")
    ap.add_argument("--cases", help="comma-separated case names")
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--iters", type=int, default=100, help="timed runs per measurement (max)")
    ap.add_argument("--latency-only", action="store_true", help="copy and latency only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--self-check", action="store_true",
                    help="check the magnitude bounds and check() on the CPU (PyTorch, no GPU)")
    return ap.parse_args(argv)


# --------------------------------------------------------------------------
# build

def suite_hash(cases, dtypes):
    h = hashlib.sha256()
    for c in cases:
        for d in dtypes:
            h.update(c.te(d).encode())
    with open(os.path.join(HERE, "empty.cu"), "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def stamp_text(cases, dtypes, arch, tecc_bin):
    """What the libraries were built from: the suite, the arch, and the
    tecc binary (its hash) when one is at hand."""
    text = "suite %s arch %s\n" % (suite_hash(cases, dtypes), arch)
    if tecc_bin:
        with open(tecc_bin, "rb") as f:
            text += "tecc %s\n" % hashlib.sha256(f.read()).hexdigest()[:16]
    return text


def reusable(stamp, want, tecc_bin):
    """A stamp matches when it names the same suite, arch and tecc; with no
    tecc here (a GPU machine given prebuilt libraries) suite and arch do."""
    if not os.path.exists(stamp):
        return False
    have = open(stamp).read()
    if tecc_bin:
        return have == want
    return have.splitlines()[:1] == want.splitlines()[:1]


def build_suite(args, cases, dtypes, arch):
    """Builds BUILD/O{2,0}/libsuite.so unless the stamp there matches; returns
    {opt: (so, headers, failures, plans)}."""
    bdir = args.build_dir
    stamp = os.path.join(bdir, "stamp")
    try:
        tecc_bin = tecc.find_tool("tecc", "TECC", [os.path.join(TOP, "src", "tecc")])
    except tecc.BuildError:
        tecc_bin = None
    want = stamp_text(cases, dtypes, arch, tecc_bin)
    if reusable(stamp, want, tecc_bin):
        log("reusing the libraries in %s" % bdir)
        return load_built(bdir)
    if not tecc_bin:
        raise tecc.BuildError("cannot find tecc (set $TECC) and %s holds no libraries "
                              "built for this suite and %s" % (bdir, arch))
    nvcc = tecc.find_nvcc()
    log("building with %s and %s for %s" % (tecc_bin, nvcc, arch))
    for opt in (2, 0):
        build_one(args, bdir, opt, cases, dtypes, arch, tecc_bin, nvcc)
    with open(stamp, "w") as f:
        f.write(want)
    return load_built(bdir)


def build_one(args, bdir, opt, cases, dtypes, arch, tecc_bin, nvcc):
    odir = os.path.join(bdir, "O%d" % opt)
    os.makedirs(odir, exist_ok=True)
    failures = {}
    jobs = []
    for c in cases:
        for d in dtypes:
            k = c.kernel(d)
            te = os.path.join(odir, k + ".te")
            with open(te, "w") as f:
                f.write(c.te(d))
            jobs.append(k)

    def compile_kernel(k):
        base = os.path.join(odir, k)
        try:
            run_cmd([tecc_bin, "-O%d" % opt, base + ".te", "-o", base + ".cu"])
            run_cmd([nvcc, "-c", "-Xcompiler", "-fPIC", "-O3", "-arch=%s" % arch,
                     "-o", base + ".o", base + ".cu"])
        except tecc.BuildError as e:
            return k, str(e)
        try:
            plan_text = run_cmd([tecc_bin, "-O%d" % opt, "--emit=plan", base + ".te"])
            with open(base + ".plan", "w") as f:
                f.write(plan_text)
        except tecc.BuildError:
            pass  # the plan only adds the bytes-moved columns
        return k, None

    t = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for k, err in pool.map(compile_kernel, jobs):
            if err:
                failures[k] = " ".join(err.strip().splitlines()[1:])[-200:] or "failed"
                with open(os.path.join(odir, k + ".err"), "w") as f:
                    f.write(err)
    objs = [os.path.join(odir, k + ".o") for k in jobs if k not in failures]
    if opt == 2:
        run_cmd([nvcc, "-c", "-Xcompiler", "-fPIC", "-O3", "-arch=%s" % arch,
                        "-o", os.path.join(odir, "empty.o"), os.path.join(HERE, "empty.cu")])
        objs.append(os.path.join(odir, "empty.o"))
    if objs:
        run_cmd([nvcc, "-shared", "-arch=%s" % arch, "-o",
                        os.path.join(odir, "libsuite.so")] + objs)
    for o in objs:
        os.remove(o)
    with open(os.path.join(odir, "failures.txt"), "w") as f:
        for k, e in sorted(failures.items()):
            f.write("%s\t%s\n" % (k, e.replace("\n", " ")))
    log("-O%d: %d kernels built, %d failed (%.0fs)" % (opt, len(jobs) - len(failures),
                                                       len(failures), time.time() - t))


def load_built(bdir):
    built = {}
    for opt in (2, 0):
        odir = os.path.join(bdir, "O%d" % opt)
        failures = {}
        path = os.path.join(odir, "failures.txt")
        if os.path.exists(path):
            for line in open(path):
                k, _, e = line.rstrip("\n").partition("\t")
                failures[k] = e
        so = os.path.join(odir, "libsuite.so")
        headers = sorted(os.path.join(odir, f) for f in os.listdir(odir)
                         if f.endswith(".h") and f[:-2] not in failures)
        plans = {f[:-5]: open(os.path.join(odir, f)).read()
                 for f in os.listdir(odir) if f.endswith(".plan")}
        built[opt] = (so if os.path.exists(so) else None, headers, failures, plans)
    return built


def planned_bytes(plan_text, sizes):
    """The sum of the 'bytes moved per call: EXPR' lines of a tecc plan,
    evaluated at sizes; None when there are none or one does not parse."""
    total, found = 0, False
    for m in re.finditer(r"bytes moved per call:\s*(.+)", plan_text or ""):
        expr = m.group(1).strip()
        if not re.fullmatch(r"[A-Za-z_0-9\s*+()]+", expr):
            return None
        try:
            total += int(eval(expr, {"__builtins__": {}}, dict(sizes)))  # noqa: S307 -- checked above
        except (NameError, SyntaxError, TypeError, ValueError):
            return None
        found = True
    return total if found else None


def load_lib(so, headers, failures):
    """Loads so with every header that parses; the others become failures."""
    good = []
    for h in headers:
        try:
            tecc.parse_header_file(h)
            good.append(h)
        except (OSError, tecc.HeaderError) as e:
            failures[os.path.basename(h)[:-2]] = "header: %s" % e
    return tecc.load(so, good)


def detect_arch():
    try:
        import torch
        if torch.cuda.is_available():
            return "sm_%d%d" % torch.cuda.get_device_capability()
    except ImportError:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, text=True, timeout=20).stdout
        return "sm_" + out.split()[0].replace(".", "")
    except (OSError, IndexError, subprocess.SubprocessError):
        return "sm_90"


# --------------------------------------------------------------------------
# timing

class Timer:
    """Median GPU time of fn over rotating argument sets, with CUDA events.

    A spin kernel first holds the GPU while the host queues every run, so
    the events time the kernels, not the launch path.  Where L2's
    persisting lines are reset between runs (FRESH_L2), the host waits for
    each run and resets them before it queues the next behind its own
    spin: the reset is a host call, not ordered in the stream."""

    def __init__(self, torch, iters):
        self.torch, self.iters = torch, iters

    def __call__(self, fn, nsets, target_ms=30.0):
        torch = self.torch
        for i in range(3):
            fn(i % nsets)
        torch.cuda.synchronize()
        t = time.perf_counter()
        est = self._one(fn, 0)
        host = time.perf_counter() - t
        n = int(max(10, min(self.iters, target_ms / max(est, 1e-3))))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        if FRESH_L2:
            for i in range(n):
                torch.cuda.synchronize()
                clear_persisting_l2()
                spin(torch, host * 1.5)
                starts[i].record()
                fn(i % nsets)
                ends[i].record()
        else:
            spin(torch, host * n * 1.5)
            for i in range(n):
                starts[i].record()
                fn(i % nsets)
                ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3

    def _one(self, fn, i):
        torch = self.torch
        if FRESH_L2:
            torch.cuda.synchronize()
            clear_persisting_l2()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(i)
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e)


def spin(torch, seconds):
    """Holds the GPU for about `seconds` (at most 0.05 s) while the host
    queues what follows."""
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(int(min(seconds * 2e9, 1e8)))


# Each timed call starts without persisting L2 lines: loads marked
# L2::evict_last (Triton marks a looped reduction's first-pass loads so)
# keep their lines in L2's persisting carve-out after the kernel ends, so
# that a call on the same tensors finds up to 11.8 MB of them in L2 (an
# H200, bench/NOTES.md 2026-12-02) however much traffic ran between: the
# "L2 flushed between runs" of performance.md does not flush them.
# TECC_BENCH_L2=keep times the runs back to back as before, for
# comparison.
FRESH_L2 = os.environ.get("TECC_BENCH_L2", "fresh") != "keep"


_RUNTIME = []


def clear_persisting_l2():
    """Returns L2's persisting lines to normal (cudaCtxResetPersistingL2Cache)
    before an implementation is timed.  Loads marked L2::evict_last (Triton
    marks a looped reduction's first-pass loads so) persist in L2's
    persisting carve-out (11.8 MB on the H200s of bench/NOTES.md) after
    their kernel ends, and a later kernel reading the same tensors finds
    them there: on an H200, tecc's dequantize + RMSNorm at 8192 x 14336
    took 85.9 us of kernel time after torch.compile's function had run on
    its inputs, 87.9 after this reset or on clones of them (bench/NOTES.md,
    2026-12-01).  Without the CUDA runtime, nothing."""
    if not _RUNTIME:
        _RUNTIME.append(cudart())
    reset = getattr(_RUNTIME[0], "cudaCtxResetPersistingL2Cache", None)
    if reset is not None and reset() != 0:
        _RUNTIME[0].cudaGetLastError()


def busy_us(spans):
    """The time covered by [start, end) spans, overlaps counted once."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def device_events(torch, fn, iters):
    """torch.profiler's device events (kernels, copies, sets) of iters calls
    of fn after three unprofiled ones."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            if FRESH_L2:
                torch.cuda.synchronize()
                clear_persisting_l2()
            fn()
        torch.cuda.synchronize()
    return [e for e in prof.events() if e.device_type == DeviceType.CUDA]


def kernel_us(torch, fn, iters=20):
    """Device time of the kernels fn launches, a call (torch.profiler): what
    the GPU spends, without the host's launch path.  Kernels that overlap
    (a second stage launched early that waits for the first: programmatic
    dependent launch) count once, as the union of their spans."""
    spans = [(e.time_range.start, e.time_range.end) for e in device_events(torch, fn, iters)]
    return busy_us(spans) / iters


def copy_bandwidth(torch, timer):
    n = 256 << 20  # 1 GiB of f32 each way
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    us = timer(lambda i: dst.copy_(src), 1)
    del src, dst
    return 2 * n * 4 / (us * 1e-6) / 1e9


# --------------------------------------------------------------------------
# one case at one shape

TORCH_DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64"}


def tdtype(torch, d):
    return getattr(torch, TORCH_DTYPE[d])


def make_inputs(torch, case, dtype, m, n, gen):
    i, _ = case.dtypes(dtype)
    if case.inputs:
        return [x.to(tdtype(torch, i)) for x in case.inputs(torch, case.batch, m, n, gen)]
    xs = []
    for _name, dims in case.params:
        x = torch.randn(suite.dims_of(dims, m, n, case.batch, case.groups), device="cuda", generator=gen)
        xs.append(x.to(tdtype(torch, i)))
    return xs


def make_outputs(torch, case, dtype, m, n):
    _, o = case.dtypes(dtype)
    return [torch.full(suite.dims_of(d, m, n, case.batch, case.groups), float("nan"), dtype=tdtype(torch, o),
                       device="cuda") for _, d in case.outs]


def case_bytes(case, dtype, m, n):
    i, o = case.dtypes(dtype)
    size = lambda d, dt: math.prod(suite.dims_of(d, m, n, case.batch, case.groups)) * DTYPE_SIZE[dt]
    return (sum(size(d, i) for _, d in case.params) + sum(size(d, o) for _, d in case.outs))


def check(torch, case, dtype, m, n, inputs, outputs):
    """abi.md section 6 against a float64 reference, |out - ref| <= atol +
    rtol * (|ref| + mag) with the case's magnitude bound; returns (ok, worst
    ratio)."""
    _, o = case.dtypes(dtype)
    xs = [x.double() for x in inputs]
    refs = case.ref(*xs)
    mags = case.mag(*xs)
    rtol, atol = suite.tolerance(o, case.reduced(m, n))
    worst, ok = 0.0, True
    for out, ref, mag in zip(outputs, refs, mags):
        got = out.double().reshape(ref.shape)
        err = (got - ref).abs()
        bound = atol + rtol * (ref.abs() + mag.reshape(ref.shape))
        nan_ok = torch.isnan(ref) == torch.isnan(got)
        inf = torch.isinf(ref)
        inf_ok = ~inf | (got == ref)
        finite = ~torch.isnan(ref) & ~inf
        bad = (~nan_ok) | (~inf_ok) | (finite & ~(err <= bound))
        if bool(bad.any()):
            ok = False
        ratio = torch.where(finite, err / bound, torch.zeros_like(err))
        worst = max(worst, float(torch.nan_to_num(ratio, nan=1e30).max()))
    return ok, worst


def self_check(torch):
    """CPU only: every case's mag has its output's shape, is finite and at
    least |ref| on random inputs (randn, and the case's own inputs where it
    has them: the -inf of a causal mask, a one-hot target); a few bounds
    computed by hand (the same numbers as tests/interp/interp-test.c); and
    check() accepts the reference itself and rejects it moved by 4x its
    bound.  Returns the number of failures."""
    bad = []
    cases = {c.name: c for c in suite.cases()}
    t = lambda *rows: torch.tensor(rows, dtype=torch.float64)  # noqa: E731
    gen = torch.Generator().manual_seed(1)
    for c in cases.values():
        for m, n in ((1, 1), (3, 5), (4, 2), (2, 7)):
            sets = [("randn", [torch.randn(suite.dims_of(d, m, n, c.batch and 2, c.groups and 3), generator=gen,
                                           dtype=torch.float64) for _, d in c.params])]
            if c.inputs:  # the case's own inputs too: a -inf mask, a one-hot target
                sets.append(("own inputs", [x.double() for x in c.inputs(
                    torch, c.batch and 2, m, n, gen, device="cpu")]))
            for src, xs in sets:
                refs, mags = c.ref(*xs), c.mag(*xs)
                for (name, _), ref, mag in zip(c.outs, refs, mags):
                    what = "%s.%s at %dx%d (%s)" % (c.name, name, m, n, src)
                    if len(refs) != len(mags) or tuple(mag.shape) != tuple(ref.shape):
                        bad.append("%s: mag shape %s, output %s" % (what, tuple(mag.shape),
                                                                    tuple(ref.shape)))
                    elif not bool(torch.isfinite(mag).all()) or bool((mag < ref.abs() * (1 - 1e-12)).any()):
                        bad.append("%s: mag not finite or below |ref|" % what)
                for dtype in suite.DTYPES:
                    i, o = c.dtypes(dtype)
                    ins = [x.to(tdtype(torch, i)) for x in xs]
                    outs = [r.to(tdtype(torch, o)) for r in c.ref(*[x.double() for x in ins])]
                    if not check(torch, c, dtype, m, n, ins, outs)[0]:
                        bad.append("%s %s at %dx%d (%s): check() rejects the reference"
                                   % (c.name, dtype, m, n, src))
                    xd = [x.double() for x in ins]
                    rtol, atol = suite.tolerance(o, c.reduced(m, n))
                    for j, (r, mg) in enumerate(zip(c.ref(*xd), c.mag(*xd))):
                        moved = list(outs)
                        flat = r.reshape(-1).clone()
                        k = (flat.numel() - 1) // 2
                        flat[k] += 4 * (atol + rtol * (flat[k].abs() + mg.reshape(-1)[k])) + 0.5
                        moved[j] = flat.reshape(r.shape).to(tdtype(torch, o))
                        if check(torch, c, dtype, m, n, ins, moved)[0]:
                            bad.append("%s %s at %dx%d (%s): check() accepts output %d moved by "
                                       "4x its bound" % (c.name, dtype, m, n, src, j))
    L3 = math.log2(3)
    hand = [("fullsum", [t([1, -1], [2, -2.5])], [13.0]),
            ("colsum", [t([1, 2], [-1, 3], [0.5, -1])], [[2.5 * L3, 6 * L3]]),
            ("rowstats", [t([1, 2, 3, 6])], [[6.0], [169.0]]),
            ("softmax", [t([0, 0])], [[[1.0, 1.0]]]),
            ("chain5", [t([1.0])] * 4 + [t([-2.0])], [[[1 + 1 + (math.sin(1) + math.cos(1)) * 2 + 10]]]),
            ("bias_gelu", [t([1.0]), torch.tensor([-1.0], dtype=torch.float64)],
             [[[0.5 * 2]]])]
    for name, xs, want in hand:
        got = cases[name].mag(*xs)
        for j, w in enumerate(want):
            w = torch.tensor(w, dtype=torch.float64)
            if not torch.allclose(got[j].reshape(w.shape), w, rtol=1e-12, atol=0):
                bad.append("%s: mag %d is %s, by hand %s" % (name, j, got[j].tolist(), w.tolist()))
    for b in bad:
        print("self-check: FAIL %s" % b)
    print("self-check: %d cases, %d failures" % (len(cases), len(bad)))
    return len(bad)


class CompileTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CompileTimeout()


class Compiler:
    """torch.compile(dynamic=False), one compile per case and shape, inside a
    total time budget and a per-compile time limit."""

    def __init__(self, torch, args):
        self.torch, self.enabled = torch, not args.no_compile
        self.budget, self.timeout, self.spent = args.compile_budget, args.compile_timeout, 0.0
        self.note = "" if self.enabled else "disabled"
        import torch._dynamo
        cfg = torch._dynamo.config
        for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(cfg, knob):
                setattr(cfg, knob, 4096)

    def compiled(self, case, dtype, inputs):
        """A warmed-up compiled callable, or None with the reason in .note."""
        if not self.enabled:
            return None
        if self.spent >= self.budget:
            self.note = "compile budget spent"
            return None
        T = tdtype(self.torch, case.dtypes(dtype)[1])
        fn = self.torch.compile(lambda *xs: case.user(T, *xs), dynamic=False)
        t = time.time()
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            fn(*inputs)
            self.torch.cuda.synchronize()
        except CompileTimeout:
            self.enabled, self.note = False, "compile over %.0fs: stopped" % self.timeout
            return None
        except Exception as e:  # noqa: BLE001 -- a failed compile is a table entry
            self.note = "compile failed: %s" % str(e).splitlines()[0][:80]
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.spent += time.time() - t
        return fn


def n_sets(bytes_, l2):
    return max(1, min(8, math.ceil(4 * l2 / bytes_)))


def rotating_outputs(fn, nsets):
    """fn(i), keeping its result alive until set i comes round again, so
    that PyTorch writes each call into another block, as tecc writes into
    the rotating output sets.  A result dropped at once goes back to the
    caching allocator, and the next call writes into the same block, whose
    lines the last call left in L2: on an H100 that took 1-2 us off each
    20 us call at 32768x256 (swiglu bf16 19.66 against 21.38 us kept),
    which tecc writing one fixed output set gains as well (21.63 -> 20.00;
    bench/NOTES.md)."""
    kept = [None] * nsets

    def call(i):
        kept[i] = fn(i)

    return call


def in_turn(fn, nsets):
    """A call that calls fn(0), fn(1), ... fn(nsets - 1), fn(0) ... one a
    call, whatever it is passed: kernel_us (no argument) or a Timer over
    the input sets in turn, as the events time them.  With one set every profiled call read the inputs
    the call before had left in L2: at 32768 x 256 f32 (32 MB, an H100's
    L2 holds 50) torch.compile's row sum took 6.5 us of kernel time, past
    what HBM can deliver (bench/NOTES.md, 2026-12-07)."""
    turn = [0]

    def call(_i=None):
        i = turn[0]
        turn[0] = (i + 1) % nsets
        fn(i)

    return call


def run_case(torch, ctx, case, dtype, m, n):
    """Checks and times one case at one shape; returns a result row."""
    row = {"case": case.name, "shape": case.shape_label(m, n), "M": m, "N": n,
           "dtype": case.label(dtype), "bytes": case_bytes(case, dtype, m, n),
           "check": "", "worst": "", "note": ""}
    k = case.kernel(dtype)
    for impl, opt in (("O2", 2), ("O0", 0)):
        b = planned_bytes(ctx["plans"].get(opt, {}).get(k), {"B": case.batch or 1, "G": case.groups or 1, "M": m, "N": n})
        if b is not None:
            row[impl + "_plan_bytes"] = b
    nsets = n_sets(row["bytes"], ctx["l2"])
    gen = torch.Generator(device="cuda")
    gen.manual_seed(hash((case.name, dtype, m, n)) & 0xFFFF)
    sets = [make_inputs(torch, case, dtype, m, n, gen) for _ in range(nsets)]
    outs = [make_outputs(torch, case, dtype, m, n) for _ in range(nsets)]
    T = tdtype(torch, case.dtypes(dtype)[1])
    checks = []
    for impl, opt in (("O2", 2), ("O0", 0)):
        kern = ctx["libs"][opt].kernels.get(k) if ctx["libs"].get(opt) else None
        if kern is None:
            row["note"] += "%s: %s; " % (impl, ctx["failures"][opt].get(k, "not built"))
            continue
        try:
            values = [kern._torch_args(list(s) + list(o), {}, False, None)[0]
                      for s, o in zip(sets, outs)]
            kern.call_c(values[0])
            torch.cuda.synchronize()
            ok, worst = check(torch, case, dtype, m, n, sets[0], outs[0])
        except (tecc.TeccError, TypeError, ValueError) as e:
            row["note"] += "%s: %s; " % (impl, e)
            continue
        checks.append("%s:%s" % (impl, "ok" if ok else "FAIL"))
        row["worst"] += "%s%.3g " % (impl, worst)
        if not ok:
            row["note"] += "%s wrong (worst err/bound %.3g); " % (impl, worst)
            continue
        cfunc = kern.cfunc
        clear_persisting_l2()
        row[impl] = ctx["timer"](lambda i: cfunc(*values[i]), nsets)
        if impl == "O2" and ctx["kernel_time"]:
            row["O2_k"] = kernel_us(torch, in_turn(lambda i: cfunc(*values[i]), nsets))
    row["check"] = " ".join(checks)
    clear_persisting_l2()
    row["eager"] = ctx["timer"](rotating_outputs(lambda i: case.user(T, *sets[i]), nsets), nsets)
    fn = ctx["compiler"].compiled(case, dtype, sets[0])
    if fn is not None:
        clear_persisting_l2()
        row["compile"] = ctx["timer"](rotating_outputs(lambda i: fn(*sets[i]), nsets), nsets)
        if ctx["kernel_time"]:
            row["compile_k"] = kernel_us(torch, in_turn(rotating_outputs(lambda i: fn(*sets[i]), nsets), nsets))
    elif ctx["compiler"].note:
        row["note"] += ctx["compiler"].note
    del sets, outs
    return row


# --------------------------------------------------------------------------
# latency

def cudart():
    """The CUDA runtime as a ctypes library, or None."""
    import ctypes
    import glob
    names = ["libcudart.so"] + sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so*"))
    try:
        import torch
        names += sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia",
                                               "*", "lib", "libcudart.so*")))
    except ImportError:
        pass
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def keep_pool(keep):
    """Sets the device's default memory pool to keep (or release at every
    synchronization, CUDA's default) the memory freed to it: a diagnostic
    for stubs that take their workspace from cudaMallocAsync."""
    import ctypes
    rt = cudart()
    if rt is None:
        return False
    pool = ctypes.c_void_p()
    if rt.cudaDeviceGetDefaultMemPool(ctypes.byref(pool), 0) != 0:
        return False
    value = ctypes.c_uint64(2 ** 64 - 1 if keep else 0)
    return rt.cudaMemPoolSetAttribute(pool, 4, ctypes.byref(value)) == 0  # ReleaseThreshold


def latency(torch, ctx, cases_by_name):
    """Host-timed launch+completion (median µs): plain call + synchronize, and
    CUDA graph replay + synchronize; the empty kernel is the floor."""
    rows = []
    empty = ctx.get("empty")
    lib = ctx["libs"].get(2)

    def host_us(fn, n=300):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1e6

    def graph_of(factory):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            factory()()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            factory()()
        return g

    def measure(label, shape, factory):
        """factory() gives a call bound to the current stream."""
        r = {"what": label, "shape": shape}
        try:
            r["plain_us"] = host_us(factory())
            g = graph_of(factory)
            r["graph_us"] = host_us(g.replay)
        except Exception as e:  # noqa: BLE001 -- reported in the table
            r["note"] = str(e).splitlines()[0][:100]
        rows.append(r)

    def bound(kern, tensors):
        values = kern._torch_args(list(tensors), {}, False, None)[0]
        return lambda: kern.call_c(values)

    if empty is not None:
        measure("empty kernel", "-",
                lambda: (lambda s=torch.cuda.current_stream().cuda_stream: empty(s)))
    for name in suite.LATENCY_CASES:
        case = cases_by_name.get(name)
        if case is None:
            continue
        for m, n in suite.LATENCY_SHAPES:
            xs = make_inputs(torch, case, "f32", m, n, None)
            ys = make_outputs(torch, case, "f32", m, n)
            kern = lib.kernels.get(case.kernel("f32")) if lib else None
            shape = "%dx%d" % (m, n)
            if kern is not None:
                measure("tecc %s f32" % name, shape,
                        lambda kern=kern, xs=xs, ys=ys: bound(kern, xs + ys))
                if keep_pool(True):
                    measure("  pool kept", shape,
                            lambda kern=kern, xs=xs, ys=ys: bound(kern, xs + ys))
                    keep_pool(False)
            measure("eager %s f32" % name, shape,
                    lambda case=case, xs=xs: (lambda: case.user(torch.float32, *xs)))
    return rows


# --------------------------------------------------------------------------
# report

def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def finish_row(row, copy_gbps, empty_us):
    """Rates, % of copy, and the ceiling: the empty kernel's time plus the
    case's bytes at the copy's rate (doc/performance.md)."""
    if row.get("bytes") and isinstance(empty_us, float):
        row["ceiling_us"] = empty_us + row["bytes"] / (copy_gbps * 1e3)
        if isinstance(row.get("O2"), float):
            row["O2_ceil_pct"] = 100 * row["ceiling_us"] / row["O2"]
    if isinstance(row.get("O2_k"), float) and isinstance(row.get("compile_k"), float):
        row["O2_vs_compile_k"] = row["compile_k"] / row["O2_k"]
    for impl in IMPLS:
        us = row.get(impl)
        if isinstance(us, float):
            row[impl + "_us"] = us
            row[impl + "_gbps"] = row["bytes"] / (us * 1e-6) / 1e9
            row[impl + "_pct"] = 100 * row[impl + "_gbps"] / copy_gbps
    if row.get("O2_plan_bytes") and row.get("bytes"):
        row["O2_plan_over_ideal"] = row["O2_plan_bytes"] / row["bytes"]
    if row.get("O2_plan_bytes") and row.get("O0_plan_bytes"):
        row["plan_O0_over_O2"] = row["O0_plan_bytes"] / row["O2_plan_bytes"]
    if isinstance(row.get("O2"), float):
        for other in ("compile", "eager", "O0"):
            if isinstance(row.get(other), float):
                row["O2_vs_" + other] = row[other] / row["O2"]


CSV_FIELDS = (["case", "shape", "M", "N", "dtype", "bytes", "check", "worst"]
              + [impl + suffix for impl in IMPLS for suffix in ("_us", "_gbps", "_pct")]
              + ["ceiling_us", "O2_ceil_pct", "O2_k", "compile_k", "O2_vs_compile_k"]
              + ["O2_vs_compile", "O2_vs_eager", "O2_vs_O0", "O2_plan_bytes", "O0_plan_bytes",
                 "plan_O0_over_O2", "O2_plan_over_ideal", "note"])


def table(rows):
    """The result table as lines of text."""
    form = ("%-14s %-12s %-9s | %9s %7s %5s %5s | %9s %5s | %9s %5s | %9s %5s | %6s %6s %6s "
            "| %8s %8s %6s | %s")
    head = form % ("case", "shape", "dtype", "O2 us", "GB/s", "%cp", "%ceil", "O0 us", "%cp",
                   "eager us", "%cp", "compile", "%cp", "xcomp", "xO0", "bO0/O2",
                   "O2 k us", "comp k", "xcomp k", "check")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(form % (r["case"], r["shape"], r["dtype"], fmt(r.get("O2_us"), ".1f"),
                             fmt(r.get("O2_gbps"), ".0f"), fmt(r.get("O2_pct"), ".0f"),
                             fmt(r.get("O2_ceil_pct"), ".1f"),
                             fmt(r.get("O0_us"), ".1f"), fmt(r.get("O0_pct"), ".0f"),
                             fmt(r.get("eager_us"), ".1f"), fmt(r.get("eager_pct"), ".0f"),
                             fmt(r.get("compile_us"), ".1f"), fmt(r.get("compile_pct"), ".0f"),
                             fmt(r.get("O2_vs_compile"), ".2f"), fmt(r.get("O2_vs_O0"), ".2f"),
                             fmt(r.get("plan_O0_over_O2"), ".2f"), fmt(r.get("O2_k"), ".1f"),
                             fmt(r.get("compile_k"), ".1f"), fmt(r.get("O2_vs_compile_k"), ".2f"),
                             r["check"] or "-")
                     + (("  " + r["note"]) if r["note"] else ""))
    return lines


def latency_table(lat):
    """Plain and graph-replay latency, and each one's excess over the empty
    kernel's (doc/performance.md: within 2 us)."""
    empty = next((r for r in lat if r["what"] == "empty kernel"), {})
    form = "%-20s %-9s %9s %9s %10s %10s %s"
    lines = [form % ("latency", "shape", "plain us", "graph us", "plain-empty",
                     "graph-empty", "")]
    for r in lat:
        over = [r[k] - empty[k] if isinstance(r.get(k), float) and
                isinstance(empty.get(k), float) else None for k in ("plain_us", "graph_us")]
        lines.append(form % (r["what"], r["shape"], fmt(r.get("plain_us"), ".1f"),
                             fmt(r.get("graph_us"), ".1f"), fmt(over[0], "+.1f"),
                             fmt(over[1], "+.1f"), r.get("note", "")))
    return lines


def geomean(xs):
    xs = [x for x in xs if isinstance(x, float) and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def summary(rows, copy_gbps):
    lines = []
    for impl in IMPLS:
        pct = [r[impl + "_pct"] for r in rows if impl + "_pct" in r]
        if pct:
            lines.append("%-8s %3d cases: %% of copy geomean %.1f, min %.1f, >=90%%: %d"
                         % (impl, len(pct), geomean(pct), min(pct), sum(p >= 90 for p in pct)))
    ceil = [r["O2_ceil_pct"] for r in rows if "O2_ceil_pct" in r]
    if ceil:
        lines.append("O2       %3d cases: %% of ceiling geomean %.1f, min %.1f, >=92%%: %d"
                     % (len(ceil), geomean(ceil), min(ceil), sum(p >= 92 for p in ceil)))
    for other in ("compile", "eager", "O0", "compile_k"):
        sp = [r["O2_vs_" + other] for r in rows if "O2_vs_" + other in r]
        if sp:
            lines.append("O2 vs %-7s %3d cases: speedup geomean %.2fx, min %.2fx, below 1.0x: %d"
                         % (other, len(sp), geomean(sp), min(sp), sum(s < 1 for s in sp)))
    both = [r for r in rows if "O2_vs_O0" in r and "plan_O0_over_O2" in r]
    if both:
        lines.append("O2 vs O0 on %d cases: planned bytes ratio geomean %.2fx, measured "
                     "speedup geomean %.2fx" % (len(both),
                                               geomean([r["plan_O0_over_O2"] for r in both]),
                                               geomean([r["O2_vs_O0"] for r in both])))
    fails = [r for r in rows if "FAIL" in r["check"]]
    missing = [r for r in rows if "O2_us" not in r]
    lines.append("checks failed: %d; rows without an -O2 time: %d; copy %.0f GB/s"
                 % (len(fails), len(missing), copy_gbps))
    return lines


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (("%.4g" % v) if isinstance(v, float) else v)
                        for k, v in r.items()})


def plot(path, rows):
    """One panel per case: % of copy by shape, a line per implementation,
    solid for the first dtype, dashed for the second."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed here: no plot"
    rows = [r for r in rows if any(i + "_pct" in r for i in IMPLS)]
    if not rows:
        return "nothing to plot"
    names = list(dict.fromkeys(r["case"] for r in rows))
    cols = 3
    fig, axes = plt.subplots((len(names) + cols - 1) // cols, cols, squeeze=False,
                             figsize=(13, 2.6 * ((len(names) + cols - 1) // cols)))
    colors = dict(zip(IMPLS, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))
    for ax, name in zip(axes.flat, names):
        mine = [r for r in rows if r["case"] == name]
        shapes = list(dict.fromkeys(r["shape"] for r in mine))
        for k, dt in enumerate(dict.fromkeys(r["dtype"] for r in mine)):
            for impl in IMPLS:
                pts = [(shapes.index(r["shape"]), r[impl + "_pct"]) for r in mine
                       if r["dtype"] == dt and impl + "_pct" in r]
                if pts:
                    ax.plot(*zip(*pts), marker="o", ms=3, color=colors[impl],
                            ls="-" if k == 0 else "--", label="%s %s" % (impl, dt))
        ax.axhline(90, color="k", lw=0.6, ls=":")
        ax.set_title(name, fontsize=9)
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels(shapes, fontsize=6, rotation=20)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylim(bottom=0)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=5, ncol=2)
    fig.suptitle("% of device-to-device copy bandwidth (same run)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return "plot: %s" % path


# --------------------------------------------------------------------------

def plan(cases, dtypes, quick):
    """(shape, case, dtype) in the order they run: shape by shape, so a run
    cut short by its budget still covers every case at the first shapes;
    then the cases with shapes of their own."""
    row_shapes = suite.ROW_SHAPES
    col_shapes = suite.COL_SHAPES
    if quick:
        row_shapes = [(32768, 1024), (4096, 11008)]
        col_shapes = [(16384, 4096)]
    order = []
    for i in range(max(len(row_shapes), len(col_shapes))):
        for c in cases:
            shapes = col_shapes if c.kind in ("col", "full") else row_shapes
            if i < len(shapes) and not c.own_shapes:
                order += [(shapes[i], c, d) for d in dtypes]
    for c in cases:
        for shape in c.own_shapes or []:
            order += [(shape, c, d) for d in dtypes]
    return order


def main(argv):
    args = parse_args(argv)
    if args.self_check:
        try:
            import torch
        except ImportError:
            print("bench: --self-check needs PyTorch (CPU is enough)", file=sys.stderr)
            return 1
        return 1 if self_check(torch) else 0
    os.makedirs(args.out, exist_ok=True)
    args.build_dir = args.build_dir or os.path.join(args.out, "build")
    cases = suite.cases()
    if args.cases:
        keep = args.cases.split(",")
        cases = [c for c in cases if c.name in keep]
    dtypes = args.dtypes.split(",")
    arch = args.arch or detect_arch()
    try:
        built = build_suite(args, cases, dtypes, arch)
    except tecc.BuildError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 1
    if args.build_only:
        return 0
    import torch
    import ctypes
    if not torch.cuda.is_available():
        print("no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    ctx = {"timer": Timer(torch, args.iters), "l2": l2, "libs": {}, "failures": {},
           "compiler": Compiler(torch, args), "kernel_time": not args.no_kernel_time}
    ctx["plans"] = {}
    for opt, (so, headers, failures, plans) in built.items():
        ctx["failures"][opt] = failures
        ctx["plans"][opt] = plans
        if so:
            ctx["libs"][opt] = load_lib(so, headers, failures)
    if ctx["libs"].get(2):
        fn = ctx["libs"][2].cdll.bench_empty
        fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_int
        ctx["empty"] = fn
    log("device: %s, %d SMs, L2 %d MiB; torch %s" % (props.name, props.multi_processor_count,
                                                     l2 >> 20, torch.__version__))
    copy1 = copy_bandwidth(torch, ctx["timer"])
    log("device-to-device copy: %.0f GB/s" % copy1)
    empty = ctx.get("empty")
    empty_us = ctx["timer"]((lambda i: empty(None)) if empty else (lambda i: torch.cuda._sleep(0)), 1)
    log("empty kernel between the events: %.2f us" % empty_us)
    lat = latency(torch, ctx, {c.name: c for c in cases})
    rows = []
    deadline = T0 + args.budget - 25
    todo = [] if args.latency_only else plan(cases, dtypes, args.quick)
    for idx, ((m, n), case, dtype) in enumerate(todo):
        if time.time() > deadline:
            log("budget reached: %d of %d case-shapes not run" % (len(todo) - idx, len(todo)))
            break
        label = case.shape_label(m, n)
        if idx == 0 or todo[idx - 1][1].shape_label(*todo[idx - 1][0]) != label:
            log("shape %s" % label)
        try:
            rows.append(run_case(torch, ctx, case, dtype, m, n))
        except Exception as e:  # noqa: BLE001 -- one broken case is one table row
            rows.append({"case": case.name, "shape": case.shape_label(m, n), "M": m, "N": n,
                         "dtype": case.label(dtype), "bytes": 0, "check": "",
                         "note": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:80])})
        torch.cuda.empty_cache()
    copy2 = copy_bandwidth(torch, ctx["timer"])
    copy_gbps = max(copy1, copy2)
    for r in rows:
        finish_row(r, copy_gbps, empty_us)
    write_csv(os.path.join(args.out, "bench.csv"), rows, CSV_FIELDS)
    write_csv(os.path.join(args.out, "latency.csv"), lat,
              ["what", "shape", "plain_us", "graph_us", "note"])
    plot_note = plot(os.path.join(args.out, "bench.png"), rows)
    report = (["device: %s; copy %.0f GB/s (start) %.0f GB/s (end); empty kernel %.2f us; torch %s; "
               "torch.compile spent %.0fs" % (props.name, copy1, copy2, empty_us, torch.__version__,
                                              ctx["compiler"].spent)]
              + table(rows) + [""] + latency_table(lat) + [""]
              + summary(rows, copy_gbps) + [plot_note])
    with open(os.path.join(args.out, "report.txt"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n" + "\n".join(report))
    print("files: %s/{report.txt,bench.csv,latency.csv,bench.png}" % args.out)
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
