"""Every gradient against torch.autograd, in float64, on the GPU (TAP).

For every elementwise unary and binary builtin and every reduction of
lib/ops.h (read at test time, with its derivative column), the composites
of lib/prelude.te, where, clamp, pow, casts between floats, broadcasts and
detach: f64 kernels `k_NAME` and their gradients `k_NAME_bwd =
grad(k_NAME)`, written as a few .te files and built at once with
tecc.build (one nvcc per file, in parallel); each kernel and
its gradient run on random inputs in the function's domain and on the
points where it is not differentiable (doc/language.md §13.3: relu and abs
at 0, max and maximum ties, clamp's bounds, sqrt, rsqrt and log at 0, pow
at 0, NaN rows of max...), and are compared with the torch function's
value and torch.autograd.grad for the same random cotangent: abi.md §6's
f64 tolerance (rtol 1e-12, atol 1e-12; rtol times log2(K) where a
reduction over K elements is involved), NaN where torch gives NaN, the
same-signed infinity where torch gives one.  A builtin whose rule in ops.h
is d_none must have a gradient of exactly zero.  A builtin of ops.h (or a
fn of the prelude) that has no torch mapping here fails its TAP line, so a
new builtin cannot go untested.

Where tecc's rule differs from torch's on purpose, the expected gradient
says so (a case's fix): clamp with lo == hi (language.md §12, choice 18,
clamp_fix) and the gradient through a 16-bit cast, computed in f32 (§13.3,
"Numbers", f32_gradient).

usage: test_grad_torch.py TOP_SRCDIR WORKDIR   (env: NVCC, TECC)
"""

import concurrent.futures
import math
import os
import re
import sys
import time

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402

torch = taprun.torch_on_gpu()
import torch.nn.functional as F  # noqa: E402

import tecc  # noqa: E402

F64 = torch.float64
NAN, INF = float("nan"), float("inf")
RTOL, ATOL = 1e-12, 1e-12  # abi.md §6, f64
# Each case runs at both sizes; B only for the rank-3 cases.  D = 1 makes
# every [D] operand a [1] one and every row reduction one of one element.
SIZES = ({"B": 3, "N": 7, "D": 33}, {"B": 3, "N": 7, "D": 1})
XD = "f64[N, D]"

# ---- lib/ops.h and lib/prelude.te, read at test time ------------------------


def ops_tables():
    """{"unary"|"binary"|"reduce": [(spelling, rule), ...]} from ops.h's
    X-macro lists, in their order."""
    with open(os.path.join(TOP, "lib", "ops.h")) as f:
        lines = f.read().splitlines()
    tables = {}
    for macro, kind in (("TECC_UNARY_BUILTINS", "unary"), ("TECC_BINARY_OPS", "binary"),
                        ("TECC_REDUCTIONS", "reduce")):
        start = [i for i, l in enumerate(lines) if l.startswith("#define %s(X)" % macro)]
        if len(start) != 1:
            raise AssertionError("lib/ops.h: no single #define %s(X)" % macro)
        rows, i = [], start[0]
        while lines[i].rstrip().endswith("\\"):
            i += 1
            m = re.match(r'\s*X\(\s*\w+\s*,\s*"([^"]+)"\s*,\s*(?:\w+\s*,\s*)?(\w+)\s*\)',
                         lines[i])
            if m:
                rows.append((m.group(1), m.group(2)))
            elif lines[i].strip().strip("\\").strip():
                raise AssertionError("lib/ops.h: cannot read %s's line %r" % (macro, lines[i]))
        if not rows:
            raise AssertionError("lib/ops.h: %s lists nothing" % macro)
        tables[kind] = rows
    return tables


def prelude_fns():
    with open(os.path.join(TOP, "lib", "prelude.te")) as f:
        return re.findall(r"^fn\s+(\w+)\s*\(", f.read(), re.M)


# d_none in ops.h, yet differentiable: var is lowered to means before the
# gradient pass ("var never reaches the IR"), language.md §13.3's table.
LOWERED = {"var"}

# ---- inputs -------------------------------------------------------------------


def normal(scale=1.0):
    return lambda shape, g: scale * torch.randn(shape, generator=g, dtype=F64)


def uniform(lo, hi):
    return lambda shape, g: lo + (hi - lo) * torch.rand(shape, generator=g, dtype=F64)


def away(lo, hi):
    """|value| in [lo, hi), either sign: a divisor away from 0."""
    def gen(shape, g):
        mag = lo + (hi - lo) * torch.rand(shape, generator=g, dtype=F64)
        sign = torch.randint(0, 2, shape, generator=g).to(F64) * 2 - 1
        return mag * sign
    return gen


def ints(lo, hi):
    """Integers in [lo, hi] as floats: ties everywhere."""
    return lambda shape, g: torch.randint(lo, hi + 1, shape, generator=g).to(F64)


def place(t, values):
    """The values at t's first elements (row-major), as many as fit."""
    flat = t.view(-1)
    n = min(len(values), flat.numel())
    if n:
        flat[:n] = torch.tensor(values[:n], dtype=F64)
    return t


def grid(xs, ys):
    """Every pair: two lists of len(xs) * len(ys) values."""
    return [x for x in xs for _ in ys], [y for _ in xs for y in ys]


def parse_type(t):
    m = re.match(r"\s*f64\s*(?:\[(.*)\])?\s*$", t)
    assert m, t
    if not m.group(1):
        return ()
    return tuple(int(d) if d.strip().isdigit() else d.strip() for d in m.group(1).split(","))


def shape_of(dims, size):
    return tuple(d if isinstance(d, int) else size[d] for d in dims)


class Case:
    """One kernel and its gradient: `kernel k_NAME(PARAMS) -> (OUTS) { BODY }`.

    ref: the torch function of the inputs (tensors, f64, on the GPU) giving
    the outputs; doms: an input generator per parameter (or one for all);
    specials: values per parameter placed at its first elements, one more
    run; runs: more (label, doms) runs; fix(ins, cots, grads): a change to
    torch's gradients where tecc's rule differs on purpose; reduces: a
    reduction is involved (rtol * log2(K)); nograd: the gradient must be
    exactly zero (None: from ops.h)."""

    def __init__(self, group, name, params, outs, body, ref, doms, specials=None, runs=(),
                 fix=None, reduces=False, nograd=None):
        self.group, self.name, self.body, self.ref = group, name, body, ref
        self.params = [(p, parse_type(t), t) for p, t in params]
        self.outs = [(o, parse_type(t), t) for o, t in outs]
        if callable(doms):
            doms = [doms] * len(params)
        assert len(doms) == len(params), name
        self.runs = [("random", doms, None)]
        if specials:
            assert len(specials) == len(params), name
            self.runs.append(("special", doms, specials))
        for label, d in runs:
            self.runs.append((label, [d] * len(params) if callable(d) else d, None))
        self.fix, self.reduces, self.nograd = fix, reduces, nograd

    def te(self):
        sig = ", ".join("%s: %s" % (p, t) for p, _, t in self.params)
        outs = ", ".join("%s: %s" % (o, t) for o, _, t in self.outs)
        return ("kernel k_%s(%s) -> (%s) {\n    %s\n}\nkernel k_%s_bwd = grad(k_%s)\n"
                % (self.name, sig, outs, self.body, self.name, self.name))


CASES = []


def case(*a, **k):
    c = Case(*a, **k)
    assert c.name not in [o.name for o in CASES], c.name
    CASES.append(c)
    return c


# ---- the mapping: builtin -> torch ----------------------------------------------
# Every builtin of ops.h, by its spelling, and every fn of the prelude must
# have an entry here (a group of cases); tests for the rest are at the end.

UNARY = {
    # name: (torch function, domain, special points)
    "abs": (torch.abs, normal(2), [0.0, -0.0]),
    "exp": (torch.exp, uniform(-5, 5), [0.0]),
    "exp2": (torch.exp2, uniform(-5, 5), [0.0]),
    "expm1": (torch.expm1, uniform(-3, 3), [0.0, 1e-10]),
    "log": (torch.log, uniform(0.05, 5), [0.0, -1.0, 1.0]),
    "log2": (torch.log2, uniform(0.05, 5), [0.0, 1.0]),
    "log10": (torch.log10, uniform(0.05, 5), [0.0, 1.0]),
    "log1p": (torch.log1p, uniform(-0.95, 5), [-1.0, 0.0]),
    "sqrt": (torch.sqrt, uniform(0, 5), [0.0, -0.0, -1.0]),
    "rsqrt": (torch.rsqrt, uniform(0.05, 5), [0.0]),
    "sin": (torch.sin, uniform(-10, 10), [0.0]),
    "cos": (torch.cos, uniform(-10, 10), [0.0]),
    "tan": (torch.tan, uniform(-1.4, 1.4), [0.0]),
    "asin": (torch.asin, uniform(-0.99, 0.99), [1.0, -1.0, 0.0]),
    "acos": (torch.acos, uniform(-0.99, 0.99), [1.0, -1.0, 0.0]),
    "atan": (torch.atan, normal(3), [0.0]),
    "sinh": (torch.sinh, uniform(-5, 5), [0.0]),
    "cosh": (torch.cosh, uniform(-5, 5), [0.0]),
    "tanh": (torch.tanh, uniform(-4, 4), [0.0]),
    "erf": (torch.erf, uniform(-3, 3), [0.0]),
    "sigmoid": (torch.sigmoid, uniform(-8, 8), [0.0]),
    # torch.relu(NaN) is NaN and threshold_backward passes its gradient
    "relu": (torch.relu, normal(), [0.0, -0.0, NAN]),
    "gelu": (F.gelu, uniform(-5, 5), [0.0]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), uniform(-5, 5), [0.0]),
    "silu": (F.silu, uniform(-5, 5), [0.0]),
    # tecc's softplus has no threshold (§9.1, §12 choice 19): torch's
    # without one is log1p(exp(x)), derivative exp(x) / (exp(x) + 1)
    "softplus": (lambda x: F.softplus(x, beta=1, threshold=1e300), uniform(-30, 30),
                 [0.0, 25.0, -25.0]),
    "floor": (torch.floor, normal(3), [2.5, -2.5, 0.5, -0.5, 1.0, -0.0]),
    "ceil": (torch.ceil, normal(3), [2.5, -2.5, 0.5, -0.5, 1.0, -0.0]),
    "round": (torch.round, normal(3), [2.5, -2.5, 0.5, -0.5, 1.5, -0.0]),
    "trunc": (torch.trunc, normal(3), [2.5, -2.5, 0.5, -0.5, 1.0, -0.0]),
    "sign": (torch.sign, normal(), [0.0, -0.0]),
    "isnan": (lambda x: torch.isnan(x).to(F64), normal(), [NAN, INF, -INF, 0.0]),
    "isinf": (lambda x: torch.isinf(x).to(F64), normal(), [NAN, INF, -INF, 0.0]),
    "isfinite": (lambda x: torch.isfinite(x).to(F64), normal(), [NAN, INF, -INF, 0.0]),
}
PREDICATES = {"isnan", "isinf", "isfinite"}


def floor_div(a, b):
    return torch.div(a, b, rounding_mode="floor")


BINARY_IDS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod",
              "**": "pow", "maximum": "maximum", "minimum": "minimum", "atan2": "atan2",
              "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
              "and": "and", "or": "or"}
TIES = [("ties", ints(-2, 2))]
NAN_GRID = grid([NAN, 0.0, -0.0, 1.0], [NAN, 0.0, -0.0, 1.0])
BINARY = {
    # spelling: (torch function, domains of a and b, special grid, more runs,
    #            (body, torch function, domain, specials) of a literal operand)
    "+": (lambda a, b: a + b, normal(), None, (), ("y = a + 1.5", lambda a: a + 1.5)),
    "-": (lambda a, b: a - b, normal(), None, (), ("y = 1.5 - a", lambda a: 1.5 - a)),
    "*": (lambda a, b: a * b, normal(), None, (), ("y = 2.5 * a", lambda a: 2.5 * a)),
    "/": (lambda a, b: a / b, [normal(), away(0.5, 2)], grid([0.0, 1.0, -2.0], [0.0, 1.0]),
          (), ("y = 1.0 / a", lambda a: 1.0 / a, away(0.5, 2), [0.0, -0.0])),
    "//": (floor_div, [normal(3), away(0.5, 2)], grid([1.0, -1.0, 0.0], [0.0, 0.5]), (),
           None),
    "%": (torch.remainder, [normal(3), away(0.5, 2)], None, (),
          ("y = a % 1.5", lambda a: torch.remainder(a, 1.5))),
    # pow at 0 and at negative bases: to a, 0 where b == 0; to b, 0 where
    # a == 0 and b >= 0 (NaN from log(a < 0), as torch)
    "**": (torch.pow, [uniform(0.2, 3), uniform(-2, 2)],
           grid([0.0, -0.0, 1.0, -2.0, 2.5], [0.0, 1.0, 2.0, 0.5, -1.0, 3.0, -2.0]), (), None),
    "maximum": (torch.maximum, normal(), NAN_GRID, TIES,
                ("y = maximum(a, 0.0)", lambda a: torch.maximum(a, a.new_zeros(())),
                 normal(), [0.0, -0.0, NAN])),
    "minimum": (torch.minimum, normal(), NAN_GRID, TIES,
                ("y = minimum(a, 0.0)", lambda a: torch.minimum(a, a.new_zeros(())),
                 normal(), [0.0, -0.0, NAN])),
    "atan2": (torch.atan2, normal(), grid([0.0, 1.0, -1.0], [0.0, 1.0, -1.0]), (),
              ("y = atan2(a, 1.0)", lambda a: torch.atan2(a, torch.ones_like(a)))),
    "==": (lambda a, b: (a == b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    "!=": (lambda a, b: (a != b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    "<": (lambda a, b: (a < b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    "<=": (lambda a, b: (a <= b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    ">": (lambda a, b: (a > b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    ">=": (lambda a, b: (a >= b).to(F64), ints(-2, 2), NAN_GRID, (), None),
    "and": (lambda a, b: ((a > 0) & (b > 0)).to(F64), normal(), None, (), None),
    "or": (lambda a, b: ((a > 0) | (b > 0)).to(F64), normal(), None, (), None),
}
COMPARISONS = {"==", "!=", "<", "<=", ">", ">="}
LOGICAL = {"and", "or"}
FUNCTION_SPELLED = {"maximum", "minimum", "atan2"}


def binary_body(op):
    if op in COMPARISONS:
        return "y = f64(a %s b)" % op
    if op in LOGICAL:
        return "y = f64(a > 0.0 %s b > 0.0)" % op
    if op in FUNCTION_SPELLED:
        return "y = %s(a, b)" % op
    return "y = a %s b" % op


def var0(x, dim=None):
    """The population variance (language.md §10), torch.var's correction=0."""
    kw = {} if dim is None else {"dim": dim}
    try:
        return torch.var(x, correction=0, **kw)
    except TypeError:  # torch before 1.13
        return torch.var(x, unbiased=False, **kw)


def prod_over(x, dims):
    if dims is None:
        return x.prod()
    if len(dims) == 1:
        return x.prod(dims[0])
    keep = [d for d in range(x.dim()) if d not in dims]
    return x.permute(*keep, *dims).reshape(*[x.shape[d] for d in keep], -1).prod(-1)


def all_dims(x, dims):
    return tuple(range(x.dim())) if dims is None else dims


REDUCE = {
    # name: (torch function of (x, dims or None), domain, more runs)
    "sum": (lambda x, d: x.sum(all_dims(x, d)), normal(), TIES),
    "mean": (lambda x, d: x.mean(all_dims(x, d)), normal(), TIES),
    "var": (lambda x, d: var0(x, all_dims(x, d)), normal(), TIES),
    # torch.amax / amin: the gradient split evenly among the ties
    "max": (lambda x, d: torch.amax(x, all_dims(x, d)), normal(), TIES),
    "min": (lambda x, d: torch.amin(x, all_dims(x, d)), normal(), TIES),
    "prod": (prod_over, away(0.5, 1.5), ()),
}


def prod_zeros(shape, g):
    """Rows and columns with no zero, one zero and two zeros."""
    x = away(0.5, 1.5)(shape, g)
    x2 = x.view(-1, shape[-1])
    d = shape[-1]
    x2[0, 3 % d] = 0.0
    if x2.shape[0] > 3:
        x2[1, 0] = 0.0
        x2[1, 5 % d] = 0.0
        x2[3, 0] = 0.0
    return x


def max_nan(shape, g):
    """Ties, and a NaN (whose row and column give NaN gradients)."""
    x = ints(-2, 2)(shape, g)
    x.view(-1)[0] = NAN
    return x


NOGRAD_REDUCE = {
    # name: (body of x, torch function, output type)
    "any": [("y = f64(any(x > 0.0, -1))", lambda x: (x > 0).any(-1).to(F64), "f64[N]"),
            ("y = f64(any(x > 2.0))", lambda x: (x > 2).any().to(F64), "f64")],
    "all": [("y = f64(all(x > -1.0, -1))", lambda x: (x > -1).all(-1).to(F64), "f64[N]"),
            ("y = f64(all(x > -3.0))", lambda x: (x > -3).all().to(F64), "f64")],
    "argmax": [("y = f64(argmax(x, -1))", lambda x: torch.argmax(x, -1).to(F64), "f64[N]"),
               ("y = f64(argmax(x))", lambda x: torch.argmax(x).to(F64), "f64")],
    "argmin": [("y = f64(argmin(x, 0))", lambda x: torch.argmin(x, 0).to(F64), "f64[D]"),
               ("y = f64(argmin(x))", lambda x: torch.argmin(x).to(F64), "f64")],
}


def softmax_specials(shape, g):
    """A shift of 1000 with a tie, -inf entries and a row all -inf."""
    x = normal(3)(shape, g)
    row = [1000.0, 1000.0, -INF, 999.0, -1000.0][:shape[-1]]
    x[0, :len(row)] = torch.tensor(row, dtype=F64)
    x[1, :] = -INF
    return x


COMPOSITE = {
    # name: [(case suffix, body, torch function, output type), ...]
    "softmax": [("r", "y = softmax(x, -1)", lambda x: torch.softmax(x, -1), XD),
                ("c", "y = softmax(x, 0)", lambda x: torch.softmax(x, 0), XD)],
    "log_softmax": [("r", "y = log_softmax(x, -1)", lambda x: torch.log_softmax(x, -1), XD),
                    ("c", "y = log_softmax(x, 0)", lambda x: torch.log_softmax(x, 0), XD)],
    "logsumexp": [("r", "y = logsumexp(x, -1)", lambda x: torch.logsumexp(x, -1), "f64[N]"),
                  ("c", "y = logsumexp(x, 0)", lambda x: torch.logsumexp(x, 0), "f64[D]"),
                  ("a", "y = logsumexp(x, 0, 1)", lambda x: torch.logsumexp(x, (0, 1)), "f64")],
}


def clamp_fix(ins, cots, grads):
    """tecc's choice 18 (language.md §12): with lo == hi and x < lo the
    gradient goes to lo, the bound the result is; torch gives it to no one."""
    x, lo, hi = ins
    dy = cots[0]
    extra = torch.where((x < lo) & (lo == hi), dy, torch.zeros_like(dy))
    grads[1] = grads[1] + extra.sum_to_size(lo.shape)
    return grads


def f32_gradient(ins, cots, grads):
    """The gradient through a 16-bit value is computed in f32 (language.md
    §13.3 "Numbers"; lib/grad.c grad_dtype), rounded once where it is
    stored: torch rounds it to the 16-bit dtype at the cast."""
    return [cots[0].float().to(F64)]


def add_cases(tables):
    """Cases for ops.h's builtins that have a mapping, and the prelude's
    composites; the other groups are always there."""
    rules = {}
    for kind in ("unary", "binary", "reduce"):
        for name, rule in tables[kind]:
            rules[(kind, name)] = rule

    def nograd(kind, name):
        return rules[(kind, name)] == "d_none" and name not in LOWERED

    for name, _ in tables["unary"]:
        if name not in UNARY:
            continue
        ref, dom, specials = UNARY[name]
        body = "y = f64(%s(x))" % name if name in PREDICATES else "y = %s(x)" % name
        case(("unary", name), name, [("x", XD)], [("y", XD)], body, ref, dom,
             specials=[specials], nograd=nograd("unary", name))
    case(("unary", "-"), "neg", [("x", XD)], [("y", XD)], "y = -x", lambda x: -x, normal(),
         nograd=False)
    case(("unary", "not"), "not", [("x", XD)], [("y", XD)], "y = f64(not (x > 0.0))",
         lambda x: (~(x > 0)).to(F64), normal(), nograd=True)

    for op, _ in tables["binary"]:
        if op not in BINARY:
            continue
        ref, doms, specials, runs, lit = BINARY[op]
        ng = nograd("binary", op)
        ident = BINARY_IDS[op]
        body = binary_body(op)
        ab = [("a", XD), ("b", XD)]
        case(("binary", op), ident, ab, [("y", XD)], body, ref, doms,
             specials=list(specials) if specials else None, runs=runs, nograd=ng)
        if not ng:  # b: [D] stretched over the rows: db is a column sum
            case(("binary", op), ident + "_bc", [("a", XD), ("b", "f64[D]")], [("y", XD)],
                 body, ref, doms, runs=runs, reduces=True, nograd=ng)
        if lit:
            lbody, lref = lit[:2]
            ldom = lit[2] if len(lit) > 2 else (doms[0] if isinstance(doms, list) else doms)
            lspecials = [lit[3]] if len(lit) > 3 else None
            case(("binary", op), ident + "_lit", [("a", XD)], [("y", XD)], lbody, lref, ldom,
                 specials=lspecials, nograd=ng)
    if ("binary", "**") in rules:
        # pow() spelled as a function, and the literal exponents that tecc
        # computes as products, 1 / x, sqrt or 1 (language.md §6)
        ng = nograd("binary", "**")
        case(("binary", "**"), "pow_fn", [("a", XD), ("b", XD)], [("y", XD)], "y = pow(a, b)",
             torch.pow, [uniform(0.2, 3), uniform(-2, 2)], nograd=ng)
        at_zero = [0.0, -0.0, -1.5, 1.0]
        for suffix, e in (("2", "2"), ("3", "3"), ("4", "4"), ("0", "0"), ("half", "0.5"),
                          ("m1", "-1"), ("m2", "-2"), ("2half", "2.5")):
            case(("binary", "**"), "pow_" + suffix, [("a", XD)], [("y", XD)],
                 "y = a ** %s" % e, (lambda ev: lambda a: torch.pow(a, ev))(float(e)),
                 uniform(0.2, 3), specials=[at_zero], nograd=ng)
        case(("binary", "**"), "pow_base", [("a", XD)], [("y", XD)], "y = 2.0 ** a",
             lambda a: torch.pow(2.0, a), uniform(-4, 4), nograd=ng)

    for name, _ in tables["reduce"]:
        ng = nograd("reduce", name)
        if name in REDUCE:
            ref, dom, runs = REDUCE[name]
            more = list(runs)
            if name in ("max", "min"):
                more.append(("NaN", max_nan))
            if name == "prod":
                more.append(("zeros", prod_zeros))
            for suffix, call, dims, out in (("r", "%s(x, -1)", (-1,), "f64[N]"),
                                            ("c", "%s(x, 0)", (0,), "f64[D]"),
                                            ("a", "%s(x)", None, "f64")):
                case(("reduce", name), name + "_" + suffix, [("x", XD)], [("y", out)],
                     "y = " + call % name, (lambda r, d: lambda x: r(x, d))(ref, dims), dom,
                     runs=more, reduces=True, nograd=ng)
            case(("reduce", name), name + "_m", [("x", "f64[B, N, D]")], [("y", "f64[N]")],
                 "y = %s(x, 0, 2)" % name, (lambda r: lambda x: r(x, (0, 2)))(ref), dom, runs=more,
                 reduces=True, nograd=ng)
        elif name in NOGRAD_REDUCE:
            for i, (body, fn, out) in enumerate(NOGRAD_REDUCE[name]):
                case(("reduce", name), "%s_%d" % (name, i), [("x", XD)], [("y", out)], body, fn,
                     ints(-2, 2), reduces=True, nograd=ng)

    for name in prelude_fns():
        for suffix, body, fn, out in COMPOSITE.get(name, ()):
            case(("composite", name), name + "_" + suffix, [("x", XD)], [("y", out)], body, fn,
                 normal(3), runs=[("shift, -inf", softmax_specials)], reduces=True)

    # where, clamp, casts, broadcasts, detach: not in ops.h's tables
    case(("", "where"), "where", [("a", XD), ("b", XD)], [("y", XD)],
         "y = where(a > b, a * 2.0, b)", lambda a, b: torch.where(a > b, a * 2, b), normal(),
         runs=TIES)
    case(("", "where"), "where_lit", [("a", XD)], [("y", XD)], "y = where(a > 0.0, a, 0.0)",
         lambda a: torch.where(a > 0, a, torch.zeros_like(a)), normal(), specials=[[0.0, NAN]])
    case(("", "where"), "where_bc", [("a", XD), ("w", "f64[D]")], [("y", XD)],
         "y = where(a > 0.0, a, w)", lambda a, w: torch.where(a > 0, a, w), normal(),
         reduces=True)

    bounds = [ints(-2, 2), ints(-2, 1), ints(-1, 2)]
    case(("", "clamp"), "clamp", [("x", XD), ("lo", XD), ("hi", XD)], [("y", XD)],
         "y = clamp(x, lo, hi)", torch.clamp, normal(), runs=[("ties", bounds)], fix=clamp_fix)
    case(("", "clamp"), "clamp_bc", [("x", XD), ("lo", "f64[D]"), ("hi", "f64[D]")],
         [("y", XD)], "y = clamp(x, lo, hi)", torch.clamp, normal(), runs=[("ties", bounds)],
         fix=clamp_fix, reduces=True)
    case(("", "clamp"), "clamp_lit", [("x", XD)], [("y", XD)], "y = clamp(x, -0.5, 0.5)",
         lambda x: torch.clamp(x, -0.5, 0.5), normal(),
         specials=[[-0.5, 0.5, 0.0, NAN, -1.0, 1.0]])

    case(("", "casts"), "cast_f32", [("x", XD)], [("y", XD)], "y = f64(f32(x))",
         lambda x: x.float().to(F64), normal(), specials=[[1e39, 1e-46, 1.0 + 2.0 ** -30]])
    case(("", "casts"), "cast_f16", [("x", XD)], [("y", XD)], "y = f64(f16(x))",
         lambda x: x.half().to(F64), normal(), specials=[[70000.0, 1e-8, 1.0 + 2.0 ** -12]],
         fix=f32_gradient)
    case(("", "casts"), "cast_bf16", [("x", XD)], [("y", XD)], "y = f64(bf16(x))",
         lambda x: x.bfloat16().to(F64), normal(), specials=[[1e39, 1.0 + 2.0 ** -9]],
         fix=f32_gradient)
    case(("", "casts"), "cast_i32", [("x", XD)], [("y", XD)], "y = f64(i32(x * 4.0))",
         lambda x: (x * 4).to(torch.int32).to(F64), normal(), nograd=True)
    case(("", "casts"), "cast_bool", [("x", XD)], [("y", XD)], "y = f64(bool(x))",
         lambda x: (x != 0).to(F64), normal(), specials=[[0.0, NAN, -0.0]], nograd=True)

    case(("", "broadcast"), "bc_row", [("a", XD), ("w", "f64[D]")], [("y", XD)],
         "y = a * w + exp(w)", lambda a, w: a * w + torch.exp(w), normal(), reduces=True)
    case(("", "broadcast"), "bc_col", [("a", XD), ("c", "f64[N, 1]")], [("y", XD)],
         "y = a * c - c", lambda a, c: a * c - c, normal(), reduces=True)
    case(("", "broadcast"), "bc_one", [("a", XD), ("u", "f64[1]")], [("y", XD)],
         "y = a * u + u", lambda a, u: a * u + u, normal(), reduces=True)
    case(("", "broadcast"), "bc_scalar", [("a", XD), ("s", "f64")], [("y", XD)],
         "y = a * s + s * s", lambda a, s: a * s + s * s, normal(), reduces=True)
    case(("", "broadcast"), "bc_3", [("x", "f64[B, N, D]"), ("w", "f64[D]"), ("c", "f64[N, 1]")],
         [("y", "f64[B, N, D]")], "y = x * w + c", lambda x, w, c: x * w + c, normal(),
         reduces=True)

    case(("", "detach"), "detach", [("a", XD)], [("y", XD)],
         "y = a * detach(a) + detach(exp(a)) * a",
         lambda a: a * a.detach() + a.detach().exp() * a, normal())
    case(("", "detach"), "detach_all", [("a", XD)], [("y", XD)], "y = detach(a) * 2.0",
         lambda a: a.detach() * 2, normal(), nograd=True)
    case(("", "detach"), "detach_max", [("a", XD)], [("y", XD)], "y = a - detach(max(a, -1))",
         lambda a: a - a.amax(-1, keepdim=True).detach(), normal(), runs=TIES)


def groups(tables):
    """The TAP lines, in order: (kind, name); every builtin of ops.h and
    every fn of the prelude, mapped or not."""
    out = []
    for kind in ("unary", "binary", "reduce"):
        out += [(kind, name) for name, _ in tables[kind]]
        if kind == "unary":
            out += [("unary", "-"), ("unary", "not")]
    out += [("composite", name) for name in prelude_fns()]
    out += [("", name) for name in ("where", "clamp", "casts", "broadcast", "detach")]
    return out


# ---- running and comparing ------------------------------------------------------


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def mismatches(out, ref, rtol):
    """Elements where out is not ref within |out - ref| <= ATOL + rtol |ref|,
    NaN where ref is NaN, the same infinity where ref is infinite."""
    out, ref = out.to(F64), ref.to(F64)
    nan = ref.isnan()
    inf = ref.isinf()
    bad = nan != out.isnan()
    bad |= inf & (out != ref)
    finite = ~nan & ~inf
    err = (out - ref).abs()
    tol = ATOL + rtol * ref.abs()
    bad |= finite & ~(err <= tol)
    worst = 0.0
    if finite.any():
        ok = finite & ~bad
        if ok.any():
            worst = float((err[ok] / tol[ok]).max())
    return bad, worst


def where_bad(bad, what, out, ref, ins, names, limit=4):
    lines = []
    idx = bad.nonzero()
    for i in idx[:limit]:
        i = tuple(int(v) for v in i)
        ctx = ", ".join("%s=%r" % (n, float(t[i])) for n, t in zip(names, ins)
                        if t.shape == out.shape)
        lines.append("%s%s = %r, torch %r%s" % (what, list(i), float(out[i]), float(ref[i]),
                                                 " (%s)" % ctx if ctx else ""))
    if len(idx) > limit:
        lines.append("%s: %d more" % (what, len(idx) - limit))
    return lines


def torch_reference(c, ins, cots):
    xs = [t.detach().clone().requires_grad_(True) for t in ins]
    ys = as_tuple(c.ref(*xs))
    assert len(ys) == len(c.outs), "%s: %d torch outputs" % (c.name, len(ys))
    pairs = [(y, d) for y, d in zip(ys, cots) if y.requires_grad]
    grads = [None] * len(xs)
    if pairs:
        grads = list(torch.autograd.grad([y for y, _ in pairs], xs,
                                         [d.reshape(y.shape) for y, d in pairs],
                                         allow_unused=True))
    grads = [torch.zeros_like(x) if g is None else g.detach() for g, x in zip(grads, xs)]
    return [y.detach() for y in ys], grads


def run_case(lib, c, size, label, doms, specials, seed):
    g = torch.Generator().manual_seed(seed)
    shapes = [shape_of(dims, size) for _, dims, _ in c.params]
    ins = [dom(shape, g) for dom, shape in zip(doms, shapes)]
    if specials:
        ins = [place(t, vals) for t, vals in zip(ins, specials)]
    out_shapes = [shape_of(dims, size) for _, dims, _ in c.outs]
    cots = [torch.randn(s, generator=g, dtype=F64) for s in out_shapes]
    ins = [t.cuda() for t in ins]
    cots = [t.cuda() for t in cots]

    def arg(t, dims):  # rank 0 goes by value
        return float(t) if dims == () else t

    targs = [arg(t, dims) for t, (_, dims, _) in zip(ins, c.params)]
    ys = as_tuple(lib["k_" + c.name](*targs))
    dxs = as_tuple(lib["k_%s_bwd" % c.name](
        *targs, *[arg(d, dims) for d, (_, dims, _) in zip(cots, c.outs)]))
    ref_ys, ref_dxs = torch_reference(c, ins, cots)
    if c.fix:
        ref_dxs = c.fix(ins, cots, list(ref_dxs))
    torch.cuda.synchronize()

    rtol = RTOL
    if c.reduces:
        rtol *= max(1.0, math.log2(max(t.numel() for t in ins)))
    where = "k_%s at %s, %s inputs" % (c.name, ",".join("%s=%d" % kv for kv in size.items()),
                                       label)
    names = [p for p, _, _ in c.params]
    errors, worst = [], 0.0
    for (o, _, _), y, ry in zip(c.outs, ys, ref_ys):
        ry = ry.reshape(y.shape)
        bad, w = mismatches(y, ry, rtol)
        worst = max(worst, w)
        errors += where_bad(bad, "%s: %s" % (where, o), y, ry, ins, names)
    assert len(dxs) == len(ins), "%s: %d gradients for %d inputs" % (where, len(dxs), len(ins))
    for (p, _, _), dx, rdx in zip(c.params, dxs, ref_dxs):
        dx = dx.reshape(rdx.shape)
        if c.nograd:
            nz = dx != 0
            if nz.any():
                errors += where_bad(nz, "%s: d%s (no gradient: must be 0)" % (where, p), dx,
                                    torch.zeros_like(dx), ins, names)
            continue
        bad, w = mismatches(dx, rdx, rtol)
        worst = max(worst, w)
        errors += where_bad(bad, "%s: d%s" % (where, p), dx, rdx, ins, names)
    return errors, worst


def te_text(cases):
    return "# test_grad_torch.py's kernels: builtins and their gradients, f64\n\n" + \
        "\n".join(c.te() for c in cases)


# The kernels are built as a few libraries at once (nvcc takes most of the
# time, one core per file); LIB maps each kernel to its library.
CHUNKS = 4
LIB = {}


def build():
    nvcc = os.environ.get("NVCC") or tecc.find_nvcc()
    chunks = [CASES[i::CHUNKS] for i in range(CHUNKS)]

    def one(i):
        te = os.path.join(WORK, "grad_torch_%d.te" % i)
        with open(te, "w") as f:
            f.write(te_text(chunks[i]))
        return tecc.build(te, nvcc=nvcc)

    started = time.perf_counter()
    errors = []
    with concurrent.futures.ThreadPoolExecutor(CHUNKS) as pool:
        futures = [pool.submit(one, i) for i in range(CHUNKS)]
        for i, fut in enumerate(futures):
            try:
                so, h = fut.result()
            except Exception as e:  # noqa: BLE001 -- reported, the other chunks still run
                errors.append("grad_torch_%d.te: %s" % (i, e))
                continue
            lib = tecc.load(so, h)
            for c in chunks[i]:
                LIB[c.name] = lib
    print("# %d kernels and their gradients, in %d libraries, built in %.1f s"
          % (len(CASES), CHUNKS, time.perf_counter() - started))
    if errors:
        raise AssertionError("\n".join(errors))


def group_test(tables, key):
    kind, name = key
    cases = [c for c in CASES if c.group == key]
    label = ("%s %s" % (kind, name)).strip()

    def fn():
        if not cases:
            raise AssertionError(
                "%s (lib/%s) has no torch mapping in tests/python/test_grad_torch.py: "
                "add one" % (name, "prelude.te" if kind == "composite" else "ops.h"))
        unbuilt = [c.name for c in cases if c.name not in LIB]
        if unbuilt:
            raise AssertionError("not built: k_" + ", k_".join(unbuilt))
        errors, worst, runs = [], 0.0, 0
        for c in cases:
            for si, size in enumerate(SIZES):
                for ri, (run_label, doms, specials) in enumerate(c.runs):
                    seed = 1000003 * (1 + CASES.index(c)) + 101 * si + ri
                    try:
                        e, w = run_case(LIB[c.name], c, size, run_label, doms, specials,
                                        seed)
                    except Exception as ex:  # noqa: BLE001 -- the other runs go on
                        e, w = ["k_%s at %s, %s inputs: %s: %s"
                                % (c.name, size, run_label, type(ex).__name__, ex)], 0.0
                    errors += e
                    worst = max(worst, w)
                    runs += 1
        why = " (gradient must be 0)" if all(c.nograd for c in cases) else ""
        print("# %s: %s, %d runs, largest |err| / tol %.3g%s"
              % (label, " ".join("k_" + c.name for c in cases), runs, worst, why))
        if errors:
            raise AssertionError("\n".join(errors[:40]))
    fn.__name__ = label
    return fn


def main():
    os.makedirs(WORK, exist_ok=True)
    tests = []
    try:
        tables = ops_tables()
    except (OSError, AssertionError) as e:
        print("1..1\nnot ok 1 - lib/ops.h\n# %s" % e)
        return 1
    add_cases(tables)

    def build_library():
        build()
    build_library.__name__ = "build %d kernels and their gradients" % len(CASES)
    tests.append(build_library)
    tests += [group_test(tables, key) for key in groups(tables)]
    return taprun.run(tests)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "--te":  # print the .te, for checking
        add_cases(ops_tables())
        sys.stdout.write(te_text(CASES))
        sys.exit(0)
    sys.exit(main())
