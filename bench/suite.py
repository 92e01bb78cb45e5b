"""The doc/performance.md suite: each case as a .te kernel, a float64 reference
and the PyTorch code a user would write for it (timed eager and compiled).

Every kernel uses the size variables M and N (and B for a batch), so one
library serves every shape.  Kernel names are CASE_DTYPE (softmax_f32,
softmax_bf16, ...).  Two row cases run at one shape of their own:
masked_softmax (attention scores s[B, M, N] scaled, plus a causal mask
m[M, N] broadcast over the batch; 32x2048x2048) and cross_entropy (the
loss of 4096 rows of logits over a 128,256-token vocabulary against a
one-hot target).
"""

import math
import struct

ROW_SHAPES = [(32768, 256), (32768, 1024), (16384, 4096), (4096, 16384),
              (1024, 65536), (128, 262144), (4096, 11008)]
COL_SHAPES = [(65536, 1024), (1024, 65536), (16384, 4096)]
LATENCY_SHAPES = [(1, 4096), (128, 4096)]
LATENCY_CASES = ["softmax", "rmsnorm"]
DTYPES = ["f32", "bf16"]


class Case:
    """name: suite name; kind: row, col, full, ew, chan or group (what is
    reduced; chan: axes 0 and 2 of [B, M, N], a batch-norm's channels M;
    group: axes 2 and 3 of [B, G, M, N], a group-norm's groups of M channels);
    params: [(name, dims)], dims 'BMN', 'BGMN', 'GM1' ([G, M, 1]), 'MN', 'M1'
    ([M, 1]), 'M', 'N' or ''
    (rank 0); outs: [(name, dims)]; body: .te statements; ref(*f64 inputs) -> outputs;
    user(T, *inputs) -> outputs (PyTorch, native dtype); mag(*f64 inputs)
    -> the magnitude bound of each output (abi.md section 6: the check is
    |out - ref| <= atol + rtol * (|ref| + mag)), following body's arithmetic
    by lib/interp.h's rules, so that outputs that cancel are judged at the
    scale of their terms.  Optional: own_shapes, the (M, N) the case runs
    at instead of its kind's; batch, the B of 'BMN' and 'BGMN' dims; groups,
    the G of 'BGMN' and 'GM1'; inputs(torch, b,
    m, n, gen, device='cuda') -> float32 tensors, for inputs randn does not
    model (a mask, a one-hot target)."""

    def __init__(self, name, kind, params, outs, body, ref, user, mag,
                 in_dtype=None, out_dtype=None, own_shapes=None, batch=None, inputs=None, groups=None):
        self.name, self.kind, self.params, self.outs = name, kind, params, outs
        self.body, self.ref, self.user, self.mag = body, ref, user, mag
        self.in_dtype, self.out_dtype = in_dtype, out_dtype
        self.own_shapes, self.batch, self.inputs = own_shapes, batch, inputs
        self.groups = groups

    def kernel(self, dtype):
        return "%s_%s" % (self.name, dtype)

    def dtypes(self, dtype):
        """(input dtype, output dtype) of the variant named dtype."""
        return (self.in_dtype or {}).get(dtype, dtype), (self.out_dtype or {}).get(dtype, dtype)

    def label(self, dtype):
        i, o = self.dtypes(dtype)
        return i if i == o else "%s>%s" % (i, o)

    def te(self, dtype):
        i, o = self.dtypes(dtype)
        dims = {"BMN": "[B, M, N]", "BGMN": "[B, G, M, N]", "GM1": "[G, M, 1]", "MN": "[M, N]", "M1": "[M, 1]",
                "M": "[M]", "N": "[N]", "": ""}
        ps = ", ".join("%s: %s%s" % (n, i, dims[d]) for n, d in self.params)
        os_ = ", ".join("%s: %s%s" % (n, o, dims[d]) for n, d in self.outs)
        text = self.body(i, o) if callable(self.body) else self.body
        body = "\n".join("    " + s.strip() for s in text.split(";"))
        return "kernel %s(%s) -> (%s) {\n%s\n}\n" % (self.kernel(dtype), ps, os_, body)

    def shapes(self):
        if self.own_shapes:
            return self.own_shapes
        return COL_SHAPES if self.kind in ("col", "full") else ROW_SHAPES

    def shape_label(self, m, n):
        if self.groups:
            return "%dx%dx%dx%d" % (self.batch, self.groups, m, n)
        return "%dx%dx%d" % (self.batch, m, n) if self.batch else "%dx%d" % (m, n)

    def reduced(self, m, n):
        """K of abi.md section 6: how many elements each output reduces."""
        return {"row": n, "col": m, "full": m * n, "ew": 1, "chan": (self.batch or 1) * n, "group": m * n}[self.kind]


def dims_of(d, m, n, b=None, g=None):
    return {"BMN": (b, m, n), "BGMN": (b, g, m, n), "GM1": (g, m, 1), "MN": (m, n), "M1": (m, 1), "M": (m,),
            "N": (n,), "": ()}[d]


def _cases():
    try:  # the .te texts need no PyTorch (bench.py --build-only)
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = F = None

    def f32(T, x):
        return x.float() if T == torch.bfloat16 else x

    def mv(x, dim=-1):
        return x.mean(dim, keepdim=True), x.var(dim, unbiased=False, keepdim=True)

    def layernorm(x, w, b, dim=-1):
        m, v = mv(x, dim)
        return ((x - m) * torch.rsqrt(v + 1e-5) * w + b,)

    def rms(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    def group_norm(x, w, b):
        B, G, C, S = x.shape
        y = F.group_norm(x.reshape(B, G * C, S), G, w.reshape(-1), b.reshape(-1), eps=1e-5)
        return y.reshape(B, G, C, S)

    def card(x):
        return (torch.exp(x - x.amax(-1, keepdim=True)).sum(-1),)

    # Magnitude bounds (lib/interp.h): |x| for an input, m(a) + m(b) for
    # a +- b, m(a) * m(b) for a * b, (m(a) + |a/b| m(b)) / |b| for a / b,
    # |f| + |f'(a)| m(a) for a smooth f, L(K) * sum of m for a sum of K
    # terms (mean: / K), the largest m for max.  Each function below
    # follows its case's body (as prelude.te spells softmax and friends),
    # in float64 from the float64 inputs.
    def dims(dim):
        return dim if isinstance(dim, tuple) else (dim,)

    def fac(k):
        return math.log2(k) if k > 2 else 1.0

    def msum(m, dim):
        """dim: an axis or a tuple of them (K their sizes' product)."""
        return fac(math.prod(m.shape[d] for d in dims(dim))) * m.sum(dim, keepdim=True)

    def mmean(m, dim):
        return msum(m, dim) / math.prod(m.shape[d] for d in dims(dim))

    def m_exp_shifted(x, dim):
        """e = exp(x - max(x, dim)) and its bound, with the bound of the
        max (the largest |x|)."""
        mx = x.abs().amax(dim, keepdim=True)
        e = torch.exp(x - x.amax(dim, keepdim=True))
        return e, e * (1 + x.abs() + mx), mx

    def m_softmax(x, dim):
        e, me, _ = m_exp_shifted(x, dim)
        s = e.sum(dim, keepdim=True)
        return (me + e / s * msum(me, dim)) / s

    def m_logsum(x, dim):
        """log(sum(exp(x - max))) and max's bound."""
        e, me, mx = m_exp_shifted(x, dim)
        s = e.sum(dim, keepdim=True)
        return torch.log(s).abs() + msum(me, dim) / s, mx

    def m_log_softmax(x, dim):
        ml, mx = m_logsum(x, dim)
        return x.abs() + mx + ml

    def m_logsumexp(x, dim):
        ml, mx = m_logsum(x, dim)
        return ml + mx

    def m_rsqrt(v, mv):
        r = torch.rsqrt(v)
        return r + 0.5 * r / v.abs() * mv

    def m_rowstats(x, dim=-1):
        """mean(x, dim), var(x, dim) = mean((x - mean(x))**2), their bounds,
        and that of x - mean(x)."""
        mm = mmean(x.abs(), dim)
        md = x.abs() + mm
        return mm, mmean(md * md, dim), md

    def m_layernorm(x, w, b, eps, dim=-1):
        _, mv, md = m_rowstats(x, dim)
        v = x.var(dim, unbiased=False, keepdim=True) + eps
        return md * m_rsqrt(v, mv + eps) * w.abs() + b.abs()

    def m_rms(h, mh, w, eps):
        v = (h * h).mean(-1, keepdim=True) + eps
        return mh * m_rsqrt(v, mmean(mh * mh, -1) + eps) * w.abs()

    def m_gelu(a, ma):
        slope = 0.5 * (1 + torch.erf(a / math.sqrt(2))) + a * torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
        return F.gelu(a).abs() + slope.abs() * ma

    def m_silu(a, ma):
        sg = torch.sigmoid(a)
        return (a * sg).abs() + (sg * (1 + a * (1 - sg))).abs() * ma

    def m_masked_softmax(s, m):
        """softmax(s * 0.125 + m, -1) with m holding -inf where masked: those
        terms are exactly 0, with no error, so their bound is 0 too."""
        a = s * 0.125 + m
        ma = torch.where(torch.isfinite(a), s.abs() * 0.125 + m.abs(), torch.zeros_like(a))
        e = torch.exp(a - a.amax(-1, keepdim=True))
        me = e * (1 + ma + ma.amax(-1, keepdim=True))
        sm = e.sum(-1, keepdim=True)
        return (me + e / sm * msum(me, -1)) / sm

    def causal_inputs(torch_, b, m, n, gen, device="cuda"):
        """Scores and a causal mask: 0 on and below the diagonal, -inf above
        (as torch.full(..., -inf).triu(1)); column 0 is never masked, so no
        row is all -inf."""
        s = torch_.randn((b, m, n), device=device, generator=gen)
        return [s, torch_.full((m, n), float("-inf"), device=device).triu(1)]

    def onehot_inputs(torch_, b, m, n, gen, device="cuda"):
        """Logits and a one-hot target (one 1 per row, at a random label)."""
        logits = torch_.randn((m, n), device=device, generator=gen)
        label = torch_.randint(0, n, (m, 1), device=device, generator=gen)
        return [logits, torch_.zeros((m, n), device=device).scatter_(1, label, 1.0)]

    def cross_entropy(l, t):
        return (torch.logsumexp(l, -1) - (l * t).sum(-1),)

    def f32c(c):
        """A .te literal as the f32 constant the kernels compute with."""
        return struct.unpack("f", struct.pack("f", c))[0]

    def to(T, *ys):
        return tuple(y.to(T) for y in ys)

    return [
        Case("softmax", "row", [("x", "MN")], [("y", "MN")], "y = softmax(x, -1)",
             lambda x: (torch.softmax(x, -1),),
             lambda T, x: (torch.softmax(x, -1),),
             lambda x: (m_softmax(x, -1),)),
        Case("log_softmax", "row", [("x", "MN")], [("y", "MN")], "y = log_softmax(x, -1)",
             lambda x: (torch.log_softmax(x, -1),),
             lambda T, x: (torch.log_softmax(x, -1),),
             lambda x: (m_log_softmax(x, -1),)),
        Case("card", "row", [("x", "MN")], [("y", "M")],
             "y = sum(exp(x - max(x, -1)), -1)", card,
             lambda T, x: to(T, *card(f32(T, x))),
             lambda x: (msum(m_exp_shifted(x, -1)[1], -1).squeeze(-1),)),
        Case("logsumexp", "row", [("x", "MN")], [("y", "M")], "y = logsumexp(x, -1)",
             lambda x: (torch.logsumexp(x, -1),),
             lambda T, x: (torch.logsumexp(x, -1),),
             lambda x: (m_logsumexp(x, -1).squeeze(-1),)),
        Case("layernorm", "row", [("x", "MN"), ("w", "N"), ("b", "N")], [("y", "MN")],
             "y = (x - mean(x, -1)) * rsqrt(var(x, -1) + 1e-5) * w + b", layernorm,
             lambda T, x, w, b: to(T, *layernorm(f32(T, x), f32(T, w), f32(T, b))),
             lambda x, w, b: (m_layernorm(x, w, b, f32c(1e-5)),)),
        Case("rmsnorm", "row", [("x", "MN"), ("w", "N")], [("y", "MN")],
             "y = x * rsqrt(mean(x * x, -1) + 1e-6) * w",
             lambda x, w: (rms(x, w),),
             lambda T, x, w: to(T, rms(f32(T, x), f32(T, w))),
             lambda x, w: (m_rms(x, x.abs(), w, f32c(1e-6)),)),
        Case("add_rmsnorm", "row", [("x", "MN"), ("r", "MN"), ("w", "N")],
             [("h", "MN"), ("y", "MN")],
             "h = x + r; y = h * rsqrt(mean(h * h, -1) + 1e-6) * w",
             lambda x, r, w: (x + r, rms(x + r, w)),
             lambda T, x, r, w: to(T, f32(T, x) + f32(T, r),
                                   rms(f32(T, x) + f32(T, r), f32(T, w))),
             lambda x, r, w: (x.abs() + r.abs(), m_rms(x + r, x.abs() + r.abs(), w, f32c(1e-6)))),
        Case("rowstats", "row", [("x", "MN")], [("m", "M"), ("v", "M")],
             "m = mean(x, -1); v = var(x, -1)",
             lambda x: (x.mean(-1), x.var(-1, unbiased=False)),
             lambda T, x: to(T, *reversed(torch.var_mean(f32(T, x), -1, unbiased=False))),
             lambda x: tuple(m.squeeze(-1) for m in m_rowstats(x)[:2])),
        # A plain row sum, as x.sum(-1) (bf16 summed in f32, as a user asks
        # for torch.sum(x, -1, dtype=torch.float32)): no stitch, a reduce group.
        Case("rowsum", "row", [("x", "MN")], [("y", "M")],
             lambda i, o: "y = sum(x, -1)" if i == o else "y = sum(%s(x), -1)" % o,
             lambda x: (x.sum(-1),),
             lambda T, x: (x.sum(-1, dtype=torch.float32),),
             lambda x: (msum(x.abs(), -1).squeeze(-1),),
             out_dtype={"bf16": "f32"}),
        Case("masked_softmax", "row", [("s", "BMN"), ("m", "MN")], [("y", "BMN")],
             "y = softmax(s * 0.125 + m, -1)",
             lambda s, m: (torch.softmax(s * 0.125 + m, -1),),
             lambda T, s, m: (torch.softmax(s * 0.125 + m, -1),),
             lambda s, m: (m_masked_softmax(s, m),),
             own_shapes=[(2048, 2048)], batch=32, inputs=causal_inputs),
        Case("cross_entropy", "row", [("l", "MN"), ("onehot", "MN")], [("y", "M")],
             "y = logsumexp(l, -1) - sum(l * onehot, -1)",
             cross_entropy,
             lambda T, l, t: cross_entropy(l, t),
             lambda l, t: ((m_logsumexp(l, -1) + msum((l * t).abs(), -1)).squeeze(-1),),
             own_shapes=[(4096, 128256)], inputs=onehot_inputs),
        # A batch-norm's training statistics and normalization over [B, C, S]
        # (B = 32): few channels of long planes, many of short ones.
        Case("batchnorm_stats", "chan", [("x", "BMN")], [("m", "M"), ("v", "M")],
             "m = mean(x, 0, 2); v = var(x, 0, 2)",
             lambda x: (x.mean((0, 2)), x.var((0, 2), unbiased=False)),
             lambda T, x: to(T, *reversed(torch.var_mean(f32(T, x), (0, 2), unbiased=False))),
             lambda x: tuple(m.reshape(-1) for m in m_rowstats(x, (0, 2))[:2]),
             own_shapes=[(64, 12544), (2048, 392)], batch=32),
        Case("batchnorm", "chan", [("x", "BMN"), ("w", "M1"), ("b", "M1")], [("y", "BMN")],
             "y = (x - mean(x, 0, 2)) * rsqrt(var(x, 0, 2) + 1e-5) * w + b",
             lambda x, w, b: layernorm(x, w, b, (0, 2)),
             lambda T, x, w, b: to(T, F.batch_norm(f32(T, x), None, None, f32(T, w)[:, 0], f32(T, b)[:, 0],
                                                   training=True, eps=1e-5)),
             lambda x, w, b: (m_layernorm(x, w, b, f32c(1e-5), (0, 2)),),
             own_shapes=[(64, 12544), (2048, 392)], batch=32),
        # A group-norm over [B, G, C, S] (B = 16, G = 32 groups of C channels):
        # SD's UNet blocks, 320 channels of 64 x 64 and 512 of 32 x 32.
        Case("groupnorm", "group", [("x", "BGMN"), ("w", "GM1"), ("b", "GM1")], [("y", "BGMN")],
             "y = (x - mean(x, 2, 3)) * rsqrt(var(x, 2, 3) + 1e-5) * w + b",
             lambda x, w, b: layernorm(x, w, b, (2, 3)),
             lambda T, x, w, b: to(T, group_norm(f32(T, x), f32(T, w), f32(T, b))),
             lambda x, w, b: (m_layernorm(x, w, b, f32c(1e-5), (2, 3)),),
             own_shapes=[(10, 4096), (16, 1024)], batch=16, groups=32),
        Case("softmax_col", "col", [("x", "MN")], [("y", "MN")], "y = softmax(x, 0)",
             lambda x: (torch.softmax(x, 0),),
             lambda T, x: (torch.softmax(x, 0),),
             lambda x: (m_softmax(x, 0),)),
        Case("colsum", "col", [("x", "MN")], [("y", "N")], "y = sum(x, 0)",
             lambda x: (x.sum(0),),
             lambda T, x: (x.sum(0),),
             lambda x: (msum(x.abs(), 0).squeeze(0),)),
        Case("fullsum", "full", [("x", "MN")], [("y", "")], "y = sum(x)",
             lambda x: (x.sum(),),
             lambda T, x: (x.sum(),),
             lambda x: (fac(x.numel()) * x.abs().sum(),)),
        Case("bias_gelu", "ew", [("x", "MN"), ("b", "N")], [("y", "MN")], "y = gelu(x + b)",
             lambda x, b: (F.gelu(x + b),),
             lambda T, x, b: (F.gelu(x + b),),
             lambda x, b: (m_gelu(x + b, x.abs() + b.abs()),)),
        Case("swiglu", "ew", [("a", "MN"), ("b", "MN")], [("y", "MN")], "y = silu(a) * b",
             lambda a, b: (F.silu(a) * b,),
             lambda T, a, b: (F.silu(a) * b,),
             lambda a, b: (m_silu(a, a.abs()) * b.abs(),)),
        Case("chain5", "ew", [(c, "MN") for c in "BCDEF"], [("y", "MN")],
             "y = B + C * D + sin(E) * F + 10",
             lambda B, C, D, E, F_: (B + C * D + torch.sin(E) * F_ + 10,),
             lambda T, B, C, D, E, F_: (B + C * D + torch.sin(E) * F_ + 10,),
             lambda B, C, D, E, F_: (B.abs() + (C * D).abs()
                                     + (torch.sin(E).abs() + (torch.cos(E) * E).abs()) * F_.abs()
                                     + 10,)),
        Case("cast", "ew", [("x", "MN")], [("y", "MN")], lambda i, o: "y = %s(x)" % o,
             lambda x: (x,),
             lambda T, x: (x.to(torch.bfloat16 if x.dtype == torch.float32 else torch.float32),),
             lambda x: (x.abs(),),
             in_dtype={"f32": "f32", "bf16": "bf16"},
             out_dtype={"f32": "bf16", "bf16": "f32"}),
    ]


def cases():
    return _cases()


TOLERANCE = {"f64": (1e-12, 1e-12), "f32": (1e-5, 1e-6), "f16": (2e-3, 1e-5),
             "bf16": (1.6e-2, 1e-5)}


def tolerance(out_dtype, k):
    """abi.md section 6: (rtol, atol) of the output dtype.  The log2(K)
    growth for a reduction over K elements is in the magnitude bound (a
    sum's rule), once, not in rtol as well."""
    rtol, atol = TOLERANCE[out_dtype]
    return rtol, atol
