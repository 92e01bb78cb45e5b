"""The training suite: kernel time of one forward + backward step of tecc's
kernels and their gradient kernels (bench/train/*.te, `grad`), of
torch.compile (forward and backward through AOTAutograd), eager PyTorch and
Liger-Kernel, beside the ideal time (ideal bytes at the copy rate measured in
the same run).  tecc's outputs and gradients are checked against float64
autograd (abi.md section 6) and its gradients for determinism.
bench/README.md describes it; on a GPU machine with nvcc and PyTorch:

    python3 bench/train.py [--cases rmsnorm,softmax] [--shapes 8192x4096]
                           [--dtypes bf16] [--json train.json]
"""

import argparse
import concurrent.futures
import importlib
import inspect
import json
import math
import os
import signal
import statistics
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(TOP, "python"), HERE]

import bench  # noqa: E402  -- Timer, copy_bandwidth, detect_arch, tdtype, log, fmt
import suite  # noqa: E402  -- ROW_SHAPES, TOLERANCE, the forward cases' reference and bounds
import tecc  # noqa: E402

log, fmt = bench.log, bench.fmt

# Ideal bytes of one step in units of M*N*e (e the element size; the [N]
# vectors and [M] losses are left out): what a fused forward and a fused
# backward must read and write.  bench/README.md has the same table.
IDEAL = {               # forward | backward
    "rmsnorm": (2, 3),        # x in, y out | x, dy in, dx out (+ dw)
    "layernorm": (2, 3),      # x in, y out | x, dy in, dx out (+ dw, db)
    "add_rmsnorm": (4, 4),    # x, r in, h, y out | h, dh, dy in, dx out (dr is dx: + dw)
    "softmax": (2, 3),        # x in, y out | y, dy in, dx out
    "log_softmax": (2, 3),    # x in, y out | y, dy in, dx out
    "swiglu": (3, 5),         # a, b in, y out | a, b, dy in, da, db out
    "geglu": (3, 5),          # a, b in, y out | a, b, dy in, da, db out
    "bias_gelu": (2, 3),      # x in, y out | x, dy in, dx out (+ db)
    "cross_entropy": (1, 2),  # logits in | logits in, dlogits out (+ dloss; no target)
}
BIG = {"norm": [(8192, 4096)], "ew": [(8192, 14336)], "ce": [(4096, 128256)]}
CE_NOTE = "tecc: a one-hot target (read, not in the ideal); others: int64 labels"


# --------------------------------------------------------------------------
# magnitude bounds (abi.md section 6, the rules of bench/suite.py's mags) of
# the gradients, following the arithmetic of the backward formulas

def fac(k):
    return math.log2(k) if k > 2 else 1.0


def rowsum(t):
    """The sum rule along a row: log2(N) times the sum of the terms' mags."""
    return fac(t.shape[-1]) * t.sum(-1, keepdim=True)


def m_rsqrt(v, mv):
    r = v.rsqrt()
    return r + 0.5 * r / v * mv


def m_softmax(x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    me = e * (1 + x.abs() + x.abs().amax(-1, keepdim=True))
    s = e.sum(-1, keepdim=True)
    return (me + e / s * rowsum(me)) / s


# An activation f: f(a) is a builtin (the smooth rule, |f| + |f'| ma); its
# derivative, as lib/grad_rules.c writes it, is arithmetic (the rules of its
# terms).  Each gives the bounds of f(a) and of f'(a), ma the bound of a.

def m_silu(a, ma):  # f' = s (1 + a (1 - s)), s = sigmoid(a)
    s = a.sigmoid()
    ms, d = s + s * (1 - s) * ma, s * (1 + a * (1 - s))
    return (a * s).abs() + d.abs() * ma, ms * (1 + ma * (1 + ms))


def m_gelu(a, ma):  # f' = 0.5 (1 + erf(a / sqrt 2)) + a exp(-a a / 2) / sqrt(2 pi)
    p = (-0.5 * a * a).exp() / math.sqrt(2 * math.pi)
    erf = (a / math.sqrt(2)).erf()
    f, d = 0.5 * a * (1 + erf), 0.5 * (1 + erf) + a * p
    return (f.abs() + d.abs() * ma,
            0.5 * (1 + erf.abs() + 2 * p * ma) + ma * p * (1 + 0.5 * ma * ma))


def m_gelu_tanh(a, ma):  # f' = 0.5 (1 + t) + 0.5 a (1 - t t) c (1 + 3 k a a)
    c, k = math.sqrt(2 / math.pi), 0.044715
    t = (c * (a + k * a ** 3)).tanh()
    mt = t.abs() + (1 - t * t) * c * (ma + k * ma ** 3)
    f, d = 0.5 * a * (1 + t), 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * c * (1 + 3 * k * a * a)
    return (f.abs() + d.abs() * ma,
            0.5 * (1 + mt) + 0.5 * ma * (1 + mt * mt) * c * (1 + 3 * k * ma * ma))


# The bounds of each case's gradients from the float64 inputs and
# cotangents, in the kernel's order; those of an [N] gradient per row, the
# terms of its column sum.

def g_rms(h, mh, w, dy, eps=1e-6):
    """dh = r g - h r^3 mean(g h) with g = w dy, r = rsqrt(mean(h h) + eps)
    (h's bound mh); dw = the column sum of dy h r."""
    n = h.shape[-1]
    mr = m_rsqrt((h * h).mean(-1, keepdim=True) + eps, rowsum(mh * mh) / n + eps)
    g = (w * dy).abs()
    return mr * g + mh * mr ** 3 * rowsum(g * mh) / n, dy.abs() * mh * mr


def g_layernorm(x, w, b, dy, eps=1e-5):
    """dx = r (g - mean(g) - xh mean(g xh)), xh = (x - mean) r, g = w dy (and
    the terms through var's own mean, zero but computed); dw, db terms."""
    n, ax = x.shape[-1], x.abs()
    mxc = ax + rowsum(ax) / n
    mr = m_rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps, rowsum(mxc * mxc) / n + eps)
    mxh, g = mxc * mr, (w * dy).abs()
    dx = mr * (g + rowsum(g) / n + (mxh + rowsum(mxh) / n) * rowsum(g * mxh) / n)
    return dx, dy.abs() * mxh, dy.abs()


def g_add_rmsnorm(x, r, w, dh, dy):
    d, dw = g_rms(x + r, x.abs() + r.abs(), w, dy)
    return dh.abs() + d, dh.abs() + d, dw


def g_softmax(x, dy):  # dx = y (dy - sum(dy y))
    my = m_softmax(x)
    return (my * (dy.abs() + rowsum(dy.abs() * my)),)


def g_glu(m_f):
    def g(a, b, dy):  # y = f(a) b: da = dy b f'(a), db = dy f(a)
        mf, mf1 = m_f(a, a.abs())
        return dy.abs() * b.abs() * mf1, dy.abs() * mf
    return g


def g_bias_gelu(x, b, dy):  # dx = dy gelu'(x + b), db its column sum
    d = dy.abs() * m_gelu(x + b, x.abs() + b.abs())[1]
    return d, d


# --------------------------------------------------------------------------
# the cases

class Case:
    """name: the .te file bench/train/NAME.te, whose kernels are NAME_DTYPE
    and NAME_DTYPE_bwd; params, outs: [(name, dims)] as bench/suite.py's;
    diff: the inputs differentiated; ref(*f64) -> outputs (differentiable),
    fmag(*f64) -> their bounds (suite.py's for the suite's cases); gmag(*f64
    inputs, *f64 cotangents) -> the bounds of the gradients (of an [N]
    gradient, the bounds of its terms, per row); user(*inputs) -> outputs,
    the PyTorch code eager runs and torch.compile compiles; liger: (module,
    class, call(apply, *inputs) -> outputs); torch_args: the inputs of user
    and liger from tecc's (cross-entropy: the labels of the one-hot)."""

    def __init__(self, name, kind, params, outs, user, gmag, liger=None, diff=None,
                 ref=None, fmag=None, torch_args=None):
        fwd = {c.name: c for c in suite.cases()}.get(name)
        self.name, self.kind, self.params, self.outs = name, kind, params, outs
        self.user, self.gmag, self.liger = user, gmag, liger
        self.diff = [i for i, (p, _) in enumerate(params) if diff is None or p in diff]
        self.ref, self.fmag = ref or fwd.ref, fmag or fwd.mag
        self.inputs = fwd.inputs if fwd else None
        self.torch_args = torch_args or (lambda xs: list(xs))

    def shapes(self):
        return BIG[self.kind] + (suite.ROW_SHAPES if self.kind != "ce" else [])


def cases(torch=None):
    F = torch.nn.functional if torch else None

    def rms_norm(x, w):
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (x.shape[-1],), w, 1e-6)
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)

    def add_rms_norm(x, r, w):
        h = x + r
        return h, rms_norm(h, w)

    MN, N = "MN", "N"
    return [
        Case("rmsnorm", "norm", [("x", MN), ("w", N)], [("y", MN)],
             lambda x, w: (rms_norm(x, w),),
             lambda x, w, dy: g_rms(x, x.abs(), w, dy),
             ("rms_norm", "LigerRMSNormFunction", lambda f, x, w: (
                 f(X=x, W=w, eps=1e-6, casting_mode="gemma", in_place=False),))),
        Case("layernorm", "norm", [("x", MN), ("w", N), ("b", N)], [("y", MN)],
             lambda x, w, b: (F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),), g_layernorm,
             ("layer_norm", "LigerLayerNormFunction", lambda f, x, w, b: (
                 f(X=x, W=w, B=b, eps=1e-5),))),
        Case("add_rmsnorm", "norm", [("x", MN), ("r", MN), ("w", N)], [("h", MN), ("y", MN)],
             add_rms_norm, g_add_rmsnorm,
             ("fused_add_rms_norm", "LigerFusedAddRMSNormFunction", lambda f, x, r, w: tuple(
                 f(X=x, R=r, W=w, eps=1e-6, casting_mode="gemma", in_place=False))[::-1])),
        Case("softmax", "norm", [("x", MN)], [("y", MN)],
             lambda x: (torch.softmax(x, -1),),
             g_softmax,
             ("softmax", "LigerSoftmaxFunction", lambda f, x: (f(input_=x),))),
        Case("log_softmax", "norm", [("x", MN)], [("y", MN)],
             lambda x: (torch.log_softmax(x, -1),),
             lambda x, dy: (dy.abs() + m_softmax(x) * rowsum(dy.abs()),)),
        Case("swiglu", "ew", [("a", MN), ("b", MN)], [("y", MN)],
             lambda a, b: (F.silu(a) * b,), g_glu(m_silu),
             ("swiglu", "LigerSiLUMulFunction", lambda f, a, b: (f(a=a, b=b),))),
        Case("geglu", "ew", [("a", MN), ("b", MN)], [("y", MN)],
             lambda a, b: (F.gelu(a, approximate="tanh") * b,), g_glu(m_gelu_tanh),
             ("geglu", "LigerGELUMulFunction", lambda f, a, b: (f(a=a, b=b),)),
             ref=lambda a, b: (F.gelu(a, approximate="tanh") * b,),
             fmag=lambda a, b: (m_gelu_tanh(a, a.abs())[0] * b.abs(),)),
        Case("bias_gelu", "ew", [("x", MN), ("b", N)], [("y", MN)],
             lambda x, b: (F.gelu(x + b),), g_bias_gelu),
        Case("cross_entropy", "ce", [("l", MN), ("onehot", MN)], [("y", "M")],
             lambda l, t: (F.cross_entropy(l, t, reduction="none"),),
             lambda l, t, dy: (dy.abs().unsqueeze(-1) * (m_softmax(l) + t.abs()),),
             ("cross_entropy", "LigerCrossEntropyFunction", lambda f, l, t: (
                 as_tuple(f(_input=l, target=t, weight=None, reduction="none"))[0],)),
             diff=["l"], torch_args=lambda xs: [xs[0], xs[1].argmax(-1)]),
    ]


def liger_fn(module, cls):
    """cls.apply taking keywords, put in the places of its forward's
    parameters (Liger's signatures grow between versions; names the forward
    lacks are dropped), or the reason it cannot be imported."""
    try:
        fn = getattr(importlib.import_module("liger_kernel.ops." + module), cls)
    except Exception as e:  # noqa: BLE001 -- no Liger: no column
        return "%s: %s" % (type(e).__name__, first_line(e))
    params = list(inspect.signature(fn.forward).parameters.values())[1:]

    def apply(**kw):
        return fn.apply(*[kw[p.name] if p.name in kw else p.default for p in params])
    return apply


# --------------------------------------------------------------------------
# the check against float64 autograd

def compared(torch, case, xs, cots, outs, grads, chunk=1 << 25):
    """(name, got, ref, mag) for each output and gradient, row chunk by row
    chunk: the float64 reference (the gradients by autograd) and its bound.
    An [N] gradient, summed over the rows, comes when every chunk is in."""
    m, n = xs[0].shape
    rows = max(1, chunk // n)
    total = {}
    for lo in range(0, m, rows):
        def cut(t, d):
            return t[lo:lo + rows] if d != "N" else t
        x64 = [cut(x, d).double().requires_grad_(i in case.diff)
               for i, (x, (_, d)) in enumerate(zip(xs, case.params))]
        c64 = [cut(c, d).double() for c, (_, d) in zip(cots, case.outs)]
        refs = case.ref(*x64)
        grefs = torch.autograd.grad(refs, [x64[i] for i in case.diff], c64)
        x64 = [x.detach() for x in x64]
        for (name, d), o, r, mg in zip(case.outs, outs, refs, case.fmag(*x64)):
            yield name, cut(o, d), r.detach(), mg
        for i, g, r, mg in zip(case.diff, grads, grefs, case.gmag(*x64, *c64)):
            name, d = case.params[i]
            if d == "N":
                r0, m0 = total.get(i, (0, 0))
                total[i] = (r0 + r, m0 + mg.reshape(-1, n).sum(0))
            else:
                yield "d" + name, cut(g, d), r, mg
    for i, (r, mg) in total.items():
        yield "d" + case.params[i][0], grads[case.diff.index(i)], r, fac(m) * mg


def check(torch, case, dtype, xs, cots, outs, grads):
    """abi.md section 6, |out - ref| <= atol + rtol (|ref| + mag): the worst
    ratio of error to bound, and the outputs past it."""
    rtol, atol = suite.TOLERANCE[dtype]
    worst, bad = 0.0, []
    for name, got, ref, mag in compared(torch, case, xs, cots, outs, grads):
        ratio = (got.double() - ref).abs() / (atol + rtol * (ref.abs() + mag))
        r = float(ratio.nan_to_num(float("inf")).max())
        worst = max(worst, r)
        if not r <= 1 and name not in bad:
            bad.append(name)
    return worst, bad


# --------------------------------------------------------------------------
# kernel time

def device_events(prof):
    """(start, duration in ns, name) of every GPU activity (kernels,
    memsets, copies) the profiler saw, in order."""
    out = []
    for e in prof.profiler.kineto_results.events():
        if not str(e.device_type()).endswith("CUDA"):
            continue
        start = e.start_ns() if hasattr(e, "start_ns") else e.start_us() * 1000
        dur = e.duration_ns() if hasattr(e, "duration_ns") else e.duration_us() * 1000
        out.append((start, dur, e.name()))
    return sorted(out)


def kernel_times(torch, impls, iters, flush):
    """{impl: [(fwd ns, bwd ns, kernels)] per step}: every impl's steps in one
    torch.profiler session.  A spin kernel (torch.cuda._sleep) marks each
    region: the impl's restore and an L2 flush, its forward, a flush, its
    backward; the kernels between two marks are that region's.  The
    restore also returns L2's persisting lines to normal, which a flush
    does not evict (bench.clear_persisting_l2)."""
    from torch.profiler import ProfilerActivity, profile
    if not impls:
        return {}
    labels = []

    def region(label, fn):
        torch.cuda._sleep(100)
        labels.append(label)
        return fn()

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for name, (pre, fwd, bwd) in impls.items():
            for _ in range(iters):
                # a flush leaves L2's persisting lines (bench.clear_persisting_l2)
                region(None, lambda: (pre and pre(), bench.clear_persisting_l2(), flush.zero_()))
                st = region((name, 0), fwd)
                region(None, flush.zero_)
                region((name, 1), lambda: bwd(st))
        torch.cuda._sleep(100)
        torch.cuda.synchronize()
    segs = [[]]
    for _, dur, name in device_events(prof):
        if "spin_kernel" in name:
            segs.append([])
        else:
            segs[-1].append(dur)
    if len(segs) != len(labels) + 2:
        raise RuntimeError("the profiler saw %d marks, %d were sent" % (len(segs) - 1,
                                                                        len(labels) + 1))
    steps = {}
    for label, seg in zip(labels, segs[1:]):
        if label:
            steps.setdefault(label, []).append((sum(seg), len(seg)))
    return {name: [(f, b, kf + kb) for (f, kf), (b, kb) in zip(steps[(name, 0)], steps[(name, 1)])]
            for name in impls}


class Compile:
    """torch.compile(dynamic=False) of a case's user code, warmed up (forward
    and backward compiled) within a per-compile limit and a total budget."""

    def __init__(self, torch, args):
        self.budget, self.timeout, self.spent = args.compile_budget, args.compile_timeout, 0.0
        import torch._dynamo
        for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 4096)

    def warm(self, step):
        if self.spent >= self.budget:
            raise RuntimeError("compile budget spent")
        signal.signal(signal.SIGALRM, bench._alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        t = time.time()
        try:
            step()
        except bench.CompileTimeout:
            raise RuntimeError("compile over %.0fs" % self.timeout) from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.spent += time.time() - t


# --------------------------------------------------------------------------
# one case at one shape

def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def first_line(ex):
    text = str(ex).strip()
    return text.splitlines()[0][:100] if text else type(ex).__name__


def make_inputs(torch, case, T, m, n, gen):
    if case.inputs:  # cross-entropy: logits and a one-hot target
        return [x.to(T) for x in case.inputs(torch, None, m, n, gen)]
    return [torch.randn(suite.dims_of(d, m, n), device="cuda", generator=gen).to(T)
            for _, d in case.params]


def bits(torch, t):
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32).clone()


def run_row(torch, ctx, case, dtype, m, n, args):
    T = bench.tdtype(torch, dtype)
    e = torch.tensor([], dtype=T).element_size()
    fb = IDEAL[case.name]
    row = {"case": case.name, "shape": "%dx%d" % (m, n), "dtype": dtype, "check": "-", "det": "-",
           "ideal_bytes": (fb[0] + fb[1]) * m * n * e, "note": []}
    if case.kind == "ce":
        row["note"].append(CE_NOTE)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(zlib.crc32(("%s %s %d %d" % (case.name, dtype, m, n)).encode()))
    xs = make_inputs(torch, case, T, m, n, gen)
    cots = [torch.randn(suite.dims_of(d, m, n), device="cuda", generator=gen).to(T)
            for _, d in case.outs]
    impls = {}
    lib = ctx["libs"].get(case.name)
    try:
        if isinstance(lib, str):
            raise RuntimeError(lib)
        fk, bk = lib["%s_%s" % (case.name, dtype)], lib["%s_%s_bwd" % (case.name, dtype)]
        outs, grads = as_tuple(fk(*xs)), as_tuple(bk(*xs, *cots))
        torch.cuda.synchronize()
        worst, bad = check(torch, case, dtype, xs, cots, outs, grads)
        row["check"], row["worst"] = "FAIL " + ",".join(bad) if bad else "ok", worst
        first = [bits(torch, g) for g in grads]  # 10 runs of the gradient, bit for bit
        same = True
        for _ in range(9):
            bk(*xs, *cots, *grads)
            same = same and all(torch.equal(a, bits(torch, g)) for a, g in zip(first, grads))
        row["det"] = "ok" if same else "DIFF"
        fv = fk._torch_args(list(xs) + list(outs), {}, False, None)[0]
        bv = bk._torch_args(list(xs) + list(cots) + list(grads), {}, False, None)[0]
        if not bad:  # a wrong result is not timed
            impls["tecc"] = (None, lambda: fk.call_c(fv), lambda _: bk.call_c(bv))
    except Exception as ex:  # noqa: BLE001 -- reported in the row
        row["note"].append("tecc: " + first_line(ex))

    def autograd(fn, targs, cts, pre=None):
        leaves = [t.detach().requires_grad_(True) if i in case.diff else t
                  for i, t in enumerate(targs)]
        wrt = [leaves[i] for i in case.diff]

        def bwd(outs):
            return torch.autograd.grad(outs, wrt, [c.to(o.dtype) for c, o in zip(cts, outs)])
        return (pre, lambda: as_tuple(fn(*leaves)), bwd)

    targs = case.torch_args(xs)
    if not args.no_compile:
        impls["compile"] = autograd(torch.compile(case.user, dynamic=False), targs, cots)
    impls["eager"] = autograd(case.user, targs, cots)
    lig = ctx["liger"].get(case.name)
    if isinstance(lig, str) and any(callable(v) for v in ctx["liger"].values()):
        row["note"].append("liger: " + lig)
    if callable(lig):  # Liger writes gradients over its inputs: copies, restored each step
        mine, theirs = [t.clone() for t in targs + cots], targs + cots
        call = case.liger[2]
        impls["liger"] = autograd(lambda *a: call(lig, *a), mine[:len(targs)], mine[len(targs):],
                                  lambda: [a.copy_(b) for a, b in zip(mine, theirs)])
    for name in list(impls):
        pre, fwd, bwd = impls[name]

        def step():
            for _ in range(2):
                _ = pre and pre()
                bwd(fwd())
            torch.cuda.synchronize()
        try:
            ctx["compile"].warm(step) if name == "compile" else step()
        except Exception as ex:  # noqa: BLE001 -- one failing impl is one note
            del impls[name]
            row["note"].append("%s: %s" % (name, first_line(ex)))
    for name, steps in kernel_times(torch, impls, args.iters, ctx["flush"]).items():
        if not all(f and b for f, b, _ in steps):
            row["note"].append("%s: the profiler saw no kernel in a forward or backward" % name)
            continue
        row[name + "_us"] = statistics.median(f + b for f, b, _ in steps) / 1e3
        row[name + "_fwd_us"] = statistics.median(f for f, _, _ in steps) / 1e3
        row[name + "_bwd_us"] = statistics.median(b for _, b, _ in steps) / 1e3
        row[name + "_kernels"] = statistics.median(k for _, _, k in steps)
    row["note"] = "; ".join(row["note"])
    return row


def finish(row, copy_gbps):
    """The ideal time (the ideal bytes at the copy's rate) and the ratios."""
    if "ideal_bytes" in row:
        row["ideal_us"] = row["ideal_bytes"] / (copy_gbps * 1e3)
    if "tecc_us" in row:
        row["tecc_over_ideal"] = row["tecc_us"] / row["ideal_us"]
        for other in ("compile", "eager", "liger"):
            if other + "_us" in row:
                row[other + "_over_tecc"] = row[other + "_us"] / row["tecc_us"]


# --------------------------------------------------------------------------
# build, report, main

def find_tecc():
    return tecc.find_tool("tecc", "TECC", [os.path.join(TOP, "src", "tecc"),
                                           os.path.join(TOP, "bench-carry", "tecc")])


def build_all(names, arch):
    """tecc.build (cached) of each bench/train/NAME.te in parallel: nvcc is
    slow.  {name: (so, header)} or {name: the error}."""
    binary = find_tecc()

    def one(name):
        try:
            return name, tecc.build(os.path.join(HERE, "train", name + ".te"), arch=arch,
                                    tecc=binary)
        except tecc.BuildError as e:
            return name, " ".join(str(e).split())[-160:]
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        return dict(pool.map(one, names))


COLUMNS = [("case", "case", 13, ""), ("shape", "shape", 11, ""), ("dtype", "dtype", 5, ""),
           ("ideal us", "ideal_us", 9, ".1f"), ("tecc us", "tecc_us", 9, ".1f"),
           ("tecc/ideal", "tecc_over_ideal", 10, ".2f"), ("compile us", "compile_us", 10, ".1f"),
           ("compile/tecc", "compile_over_tecc", 12, ".2f"), ("eager us", "eager_us", 9, ".1f"),
           ("liger us", "liger_us", 9, ".1f"), ("check", "check", 6, ""), ("det", "det", 4, ""),
           ("note", "note", 0, "")]


def table(rows):
    """The report's table; the liger column only when Liger ran."""
    cols = [c for c in COLUMNS if c[1] != "liger_us" or any("liger_us" in r for r in rows)]

    def line(cells):
        return " ".join(t.rjust(w) if spec else t.ljust(w)
                        for t, (_, _, w, spec) in zip(cells, cols)).rstrip()
    lines = [line([c[0] for c in cols])]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(line([format(r[k], spec) if isinstance(r.get(k), float) and spec
                           else str(r.get(k, "-")) for _, k, _, spec in cols]))
    return lines


def summary(rows):
    lines = []
    ratio = [r["tecc_over_ideal"] for r in rows if "tecc_over_ideal" in r]
    if ratio:
        lines.append("tecc/ideal over %d rows: geomean %.2f, max %.2f"
                     % (len(ratio), bench.geomean(ratio), max(ratio)))
    for other in ("compile", "eager", "liger"):
        sp = [r[other + "_over_tecc"] for r in rows if other + "_over_tecc" in r]
        if sp:
            lines.append("%s/tecc over %d rows: geomean %.2fx, min %.2fx, tecc slower in %d"
                         % (other, len(sp), bench.geomean(sp), min(sp), sum(s < 0.98 for s in sp)))
    lines.append("checks failed: %d; gradients not deterministic: %d"
                 % (sum("FAIL" in r.get("check", "") for r in rows),
                    sum(r.get("det") == "DIFF" for r in rows)))
    return lines


def self_check(torch):
    """CPU: every bound is at least |ref|, and gradients computed in f32
    autograd from the same inputs (as tecc computes: f32 arithmetic, one
    rounding at the store) pass the check.  Returns the failures."""
    bad = []
    gen = torch.Generator().manual_seed(1)
    for case in cases(torch):
        for m, n in ((3, 8), (5, 64), (2, 1000)):
            if case.inputs:
                xs = [x.double() for x in case.inputs(torch, None, m, n, gen, device="cpu")]
            else:
                xs = [torch.randn(suite.dims_of(d, m, n), generator=gen, dtype=torch.float64)
                      for _, d in case.params]
            cots = [torch.randn(suite.dims_of(d, m, n), generator=gen, dtype=torch.float64)
                    for _, d in case.outs]
            for dtype in ("f32", "bf16"):
                T = bench.tdtype(torch, dtype)
                xt, ct = [x.to(T) for x in xs], [c.to(T) for c in cots]
                x32 = [x.float().requires_grad_(i in case.diff) for i, x in enumerate(xt)]
                o32 = case.ref(*x32)
                g32 = torch.autograd.grad(o32, [x32[i] for i in case.diff], [c.float() for c in ct])
                outs, grads = [o.detach().to(T) for o in o32], [g.to(T) for g in g32]
                what = "%s %s %dx%d" % (case.name, dtype, m, n)
                for name, _, ref, mag in compared(torch, case, xt, ct, outs, grads):
                    if tuple(mag.shape) != tuple(ref.shape) or bool((mag < ref.abs() * (1 - 1e-9)).any()):
                        bad.append("%s: the bound of %s is below |ref| or misshapen" % (what, name))
                worst, fails = check(torch, case, dtype, xt, ct, outs, grads)
                if fails:
                    bad.append("%s: f32 autograd fails %s (worst %.3g)" % (what, fails, worst))
    for b in bad:
        print("self-check: FAIL " + b)
    print("self-check: %d cases, %d failures" % (len(cases(torch)), len(bad)))
    return bad


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--shapes", help="comma-separated MxN: only these of each case's shapes")
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--iters", type=int, default=20, help="profiled steps per implementation")
    ap.add_argument("--json", help="write the rows here (default: OUT/train.json with --out)")
    ap.add_argument("--out", help="a directory for train.txt and train.json")
    ap.add_argument("--arch", help="nvcc -arch (default: the GPU's)")
    ap.add_argument("--build-only", action="store_true", help="build the libraries and stop")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-liger", action="store_true", help="skip Liger-Kernel")
    ap.add_argument("--budget", type=float, default=480, help="seconds: start no row after")
    ap.add_argument("--compile-budget", type=float, default=360,
                    help="seconds of torch.compile warm-up (compilation) in all")
    ap.add_argument("--compile-timeout", type=float, default=60, help="seconds per compile")
    ap.add_argument("--self-check", action="store_true",
                    help="check the bounds on the CPU (PyTorch, no GPU) and stop")
    return ap.parse_args(argv)


def liger_status(ligers, off):
    """Where Liger-Kernel came from, or why there is no column."""
    if off or not ligers:
        return "off"
    if any(callable(v) for v in ligers.values()):
        return "from " + os.path.dirname(os.path.dirname(sys.modules["liger_kernel"].__file__))
    return "not imported (%s)" % next(iter(ligers.values()))


def main(argv):
    args = parse_args(argv)
    if args.self_check:
        import torch
        return 1 if self_check(torch) else 0
    names = [c.name for c in cases()]
    if args.cases:
        unknown = set(args.cases.split(",")) - set(names)
        if unknown:
            print("train: no case %s (%s)" % (", ".join(sorted(unknown)), ", ".join(names)),
                  file=sys.stderr)
            return 2
        names = [c for c in names if c in args.cases.split(",")]
    arch = args.arch or bench.detect_arch()
    built = build_all(names, arch)
    failed = {k: v for k, v in built.items() if isinstance(v, str)}
    log("built %d .te files for %s: %s" % (len(built), arch, failed or "no failure"))
    if args.build_only:
        return 1 if failed else 0
    import torch
    if not torch.cuda.is_available():
        print("train: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    todo = [c for c in cases(torch) if c.name in names]
    props = torch.cuda.get_device_properties(0)
    ctx = {"libs": {k: v if isinstance(v, str) else tecc.load(*v) for k, v in built.items()},
           "compile": Compile(torch, args),
           "liger": {} if args.no_liger else {c.name: liger_fn(*c.liger[:2]) for c in todo if c.liger},
           "flush": torch.empty(4 * getattr(props, "L2_cache_size", 60 << 20), dtype=torch.int8,
                                device="cuda")}
    liger = liger_status(ctx["liger"], args.no_liger)
    timer = bench.Timer(torch, 100)
    copy1 = bench.copy_bandwidth(torch, timer)
    log("device: %s; torch %s; copy %.0f GB/s; Liger-Kernel %s" % (props.name, torch.__version__,
                                                                   copy1, liger))
    shapes = args.shapes and {tuple(map(int, s.split("x"))) for s in args.shapes.split(",")}
    plan = []  # the big shapes first, then the suite's row shapes in order
    for i in range(1 + len(suite.ROW_SHAPES)):
        for c in todo:
            if i < len(c.shapes()) and (not shapes or c.shapes()[i] in shapes):
                plan += [(c, d, c.shapes()[i]) for d in args.dtypes.split(",")]
    rows = []
    for k, (case, dtype, (m, n)) in enumerate(plan):
        if time.time() > bench.T0 + args.budget:
            log("budget reached; not run: " + " ".join("%s:%dx%d:%s" % (c.name, mm, nn, d)
                                                        for c, d, (mm, nn) in plan[k:]))
            break
        try:
            row = run_row(torch, ctx, case, dtype, m, n, args)
        except Exception as e:  # noqa: BLE001 -- one broken row is one table line
            row = {"case": case.name, "shape": "%dx%d" % (m, n), "dtype": dtype,
                   "note": "%s: %s" % (type(e).__name__, first_line(e))}
        rows.append(row)
        log("%s %s %s: %s; check %s, det %s %s" % (
            case.name, row["shape"], dtype, ", ".join("%s %.1f us" % (i, row[i + "_us"]) for i in
                                                      ("tecc", "compile", "eager", "liger")
                                                      if i + "_us" in row),
            row.get("check"), row.get("det"), row.get("note", "")))
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    copy2 = bench.copy_bandwidth(torch, timer)
    for r in rows:
        finish(r, max(copy1, copy2))
    report = (["device: %s; torch %s; copy %.0f GB/s (start), %.0f GB/s (end); kernel time "
               "(torch.profiler) of fwd+bwd, median of %d steps; Liger-Kernel %s"
               % (props.name, torch.__version__, copy1, copy2, args.iters, liger)]
              + table(rows) + [""] + summary(rows)
              + ["torch.compile warm-up (compilation) took %.0fs" % ctx["compile"].spent])
    print("\n" + "\n".join(report))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "train.txt"), "w") as f:
            f.write("\n".join(report) + "\n")
    out_json = args.json or (args.out and os.path.join(args.out, "train.json"))
    if out_json:
        with open(out_json, "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__, "liger": liger,
                       "copy_gbps": [copy1, copy2], "iters": args.iters, "ideal": IDEAL,
                       "rows": rows}, f, indent=1)
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
