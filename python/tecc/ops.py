"""tecc kernels as PyTorch custom operators (torch.library.custom_op,
PyTorch 2.4 or newer).

    lib = tecc.load("model.so", "model.h")
    ops = tecc.register_ops(lib, "model")     # torch.ops.model.<kernel>
    y = torch.ops.model.softmax(x)             # or ops["softmax"](x)

Each entry point becomes a functional operator: it takes the inputs (tensors,
and Python numbers for rank-0 inputs passed by value), allocates the outputs
and returns them (one tensor, or a tuple).  Its fake implementation, which
torch.compile, torch.export and meta tensors use, derives the outputs'
dtypes and shapes from the .te signature in the header, after the same
checks as a real call (dtype, device, contiguity, shape), so a wrong
argument fails while tracing with the message a call would give.

A kernel whose gradient kernels are in the library (`kernel k_bwd =
grad(k)`, language.md section 13; the header's `gradient of k` comment
pairs them) gets a backward (register_autograd): the gradient kernels are
operators too, and the backward calls the narrowest of them that computes
every gradient autograd asks for (ctx.needs_input_grad), so loss.backward(),
torch.compile and CUDA graphs go through tecc's kernels both ways.

The schema, the checks and the choice of gradient kernels are plain
functions (op_schema, plan_ops and choose_gradients here, check_inputs and
output_specs in checks.py): they need no torch.
"""

from .checks import TORCH_DTYPES, TensorInfo, check_inputs, output_specs
from .header import HeaderError, gradients

# .te dtype of a by-value input -> the schema's scalar type.
SCHEMA_SCALARS = {"bool": "bool", "i8": "int", "u8": "int", "i32": "int", "i64": "int",
                  "f8e4m3": "float", "f8e5m2": "float", "f16": "float",
                  "bf16": "float", "f32": "float", "f64": "float"}


def op_schema(sig):
    """'(Tensor x, Tensor w, float eps) -> (Tensor, Tensor)' for sig."""
    unknown = [p.name for p in sig.inputs + sig.outputs if p.shape is None]
    if unknown:
        raise HeaderError("%s: the header has no .te signature comment giving the shapes "
                          "of %s; a custom operator needs them for its outputs"
                          % (sig.name, ", ".join(unknown)))
    args = ", ".join("%s %s" % (SCHEMA_SCALARS[p.dtype] if p.by_value else "Tensor", p.name)
                     for p in sig.inputs)
    outs = ["Tensor"] * len(sig.outputs)
    result = outs[0] if len(outs) == 1 else "(%s)" % ", ".join(outs)
    return "(%s) -> %s" % (args, result)


def fake_outputs(sig, infos):
    """The outputs' (name, dtype, shape) for inputs described by infos, on
    CUDA or meta tensors: what a fake implementation allocates."""
    bound, _ = check_inputs(sig, infos, devices=("cuda", "meta"))
    return output_specs(sig, bound)


def plan_ops(lib, names=None):
    """What register_ops(lib, namespace, names) registers, without torch:
    (the kernel names, {name: schema}, {forward name: [header.Gradient]}).
    The names are those given (default: every kernel of lib), then the
    gradient kernels of those, and theirs, that were not given.  Raises
    KeyError for an unknown name, HeaderError for a kernel that cannot be an
    operator or a gradient kernel whose signature does not fit its
    forward's."""
    names = list(lib.kernels) if names is None else list(names)
    unknown = [n for n in names if n not in lib.kernels]
    if unknown:
        raise KeyError("the library has no kernel %s (it has %s)"
                       % (", ".join(unknown), ", ".join(lib.kernels)))
    paired = gradients([k.sig for k in lib.kernels.values()])
    for n in names:  # names grows: the gradients' gradients come in too
        for g in paired.get(n, ()):
            if g.sig.name not in names:
                names.append(g.sig.name)
    schemas = {n: op_schema(lib.kernels[n].sig) for n in names}
    return names, schemas, {n: paired[n] for n in names if n in paired}


def choose_gradients(sig, grads, needed):
    """The gradient kernels (header.Gradient, from grads) to run for the
    inputs at the positions in needed: the one that differentiates the
    fewest inputs among those that differentiate all of them (the first
    such in grads on a tie); where none does, a few that do together, each
    the one that adds the most (of those, the narrowest).  RuntimeError
    when no gradient kernel differentiates one of them."""
    need = set(needed)
    whole = [g for g in grads if need <= set(g.inputs)]
    if whole:
        return [min(whole, key=lambda g: len(g.inputs))]
    missing = sorted(need - {i for g in grads for i in g.inputs})
    if missing:
        names = [sig.inputs[i].te_name for i in missing]
        have = "; ".join("%s computes %s" % (g.sig.name, ", ".join(
            "d" + sig.inputs[i].te_name for i in g.inputs)) for g in grads)
        raise RuntimeError(
            "%s: autograd needs the gradient of %s, but no gradient kernel of %s computes "
            "%s (%s); add `kernel %s_bwd = grad(%s)` to the .te file"
            % (sig.name, ", ".join(names), sig.name, ", ".join("d" + n for n in names),
               have or "it has none", sig.name, sig.name))
    plan, left = [], set(need)
    while left:
        best = max(grads, key=lambda g: (len(left & set(g.inputs)), -len(g.inputs)))
        plan.append(best)
        left -= set(best.inputs)
    return plan


def register_ops(lib, namespace="tecc", names=None):
    """Registers the kernels of lib (a tecc.Library) named in names (default:
    all of them) as NAMESPACE::NAME, with the gradient kernels of those
    (plan_ops); returns {name: operator}.  An operator whose kernel has
    gradient kernels gets a backward that calls them.  Every schema is made
    and every gradient paired before any operator is registered, so a
    kernel that cannot be one (a header without the .te signature comment)
    raises HeaderError, and an unknown name KeyError, with nothing
    registered."""
    names, schemas, paired = plan_ops(lib, names)
    import torch
    ops = {n: _register(torch, namespace, lib.kernels[n], schemas[n]) for n in names}
    for n, grads in paired.items():
        _register_autograd(torch, ops[n], lib.kernels[n].sig,
                           [(g, ops[g.sig.name]) for g in grads])
    return ops


def _info(torch, value):
    if not isinstance(value, torch.Tensor):
        return value
    from .loader import tensor_info
    return tensor_info(value)


def _register(torch, namespace, kernel, schema):
    sig = kernel.sig

    def real(*args):
        return kernel(*args)

    def fake(*args):
        specs = fake_outputs(sig, [_info(torch, a) for a in args])
        device = next((a.device for a, p in zip(args, sig.inputs) if not p.by_value), "cuda")
        outs = tuple(torch.empty(shape, dtype=getattr(torch, TORCH_DTYPES[dtype]), device=device)
                     for _, dtype, shape in specs)
        return outs[0] if len(outs) == 1 else outs

    op = torch.library.custom_op("%s::%s" % (namespace, sig.name), real,
                                 mutates_args=(), schema=schema)
    op.register_fake(fake)
    return op


def _register_autograd(torch, op, sig, grads):
    """The backward of op (kernel sig) through the gradient operators grads,
    [(header.Gradient, operator)].

    The gradient kernels recompute what they need from the forward's
    inputs, so setup_context saves the inputs (tensors, and the Python
    numbers passed by value) and the float outputs' shapes and dtypes, for
    zero cotangents.  A cotangent of a rank-0 output is passed to the
    gradient kernel by value; autograd has it as a tensor, which cannot
    become a Python number without a copy to the host (no torch.compile
    graph, no CUDA graph then).  The gradient is linear in the cotangents,
    so the backward calls the kernel with that cotangent 1 (the others 0)
    and scales the result by the tensor instead, summing such terms in f32
    (f64 for f64 gradients) when there are several."""
    n_in = len(sig.inputs)
    tensors = [i for i, p in enumerate(sig.inputs) if not p.by_value]
    cots = [j for j, p in enumerate(sig.outputs) if p.is_float]  # header.cotangent_outputs
    ops = {g.sig.name: gop for g, gop in grads}
    grads = [g for g, _ in grads]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*[inputs[i] for i in tensors])
        ctx.tecc_scalars = {i: inputs[i] for i, p in enumerate(sig.inputs) if p.by_value}
        outs = output if isinstance(output, tuple) else (output,)
        ctx.tecc_cotangents = [(outs[j].shape, outs[j].dtype, outs[j].device) for j in cots]
        ctx.set_materialize_grads(False)  # None, not zeros, for outputs not used

    def call(g, inputs, tensor_cots, scalar_cots):
        """g's operator on the inputs and cotangents (by position among the
        cotangents: a tensor, or for one passed by value a number)."""
        args = list(inputs)
        for k, p in enumerate(g.sig.inputs[n_in:]):
            args.append(scalar_cots.get(k, 0.0) if p.by_value else tensor_cots[k])
        out = ops[g.sig.name](*args)
        return out if isinstance(out, tuple) else (out,)

    def run(g, inputs, given, zeros):
        """g's gradients for the cotangents given (None for those autograd
        left out), in g's output order."""
        by_value = [p.by_value for p in g.sig.inputs[n_in:]]
        tensor_cots = [None if b else zeros(k) if c is None else c
                       for k, (b, c) in enumerate(zip(by_value, given))]
        scaled = [k for k, (b, c) in enumerate(zip(by_value, given)) if b and c is not None]
        if not scaled:
            return call(g, inputs, tensor_cots, {})
        terms = []
        if any(not b and c is not None for b, c in zip(by_value, given)):
            terms.append((None, call(g, inputs, tensor_cots, {})))
        zero_cots = [None if b else zeros(k) for k, b in enumerate(by_value)]
        for k in scaled:
            terms.append((given[k], call(g, inputs, zero_cots, {k: 1.0})))
        result = []
        for i in range(len(g.inputs)):
            dtype = terms[0][1][i].dtype
            wide = torch.float64 if dtype == torch.float64 else torch.float32
            parts = [t[i] if s is None else t[i].to(wide) * s.to(wide) for s, t in terms]
            total = parts[0]
            for part in parts[1:]:
                total = total.to(wide) + part.to(wide)
            result.append(total.to(dtype))
        return result

    def backward(ctx, *cotangents):
        needed = [i for i in tensors if ctx.needs_input_grad[i]]
        if not needed:
            return (None,) * n_in
        plan = choose_gradients(sig, grads, needed)
        inputs = [None] * n_in
        for i, t in zip(tensors, ctx.saved_tensors):
            inputs[i] = t
        for i, v in ctx.tecc_scalars.items():
            inputs[i] = v
        given = []
        for j, (shape, dtype, _) in zip(cots, ctx.tecc_cotangents):
            c = cotangents[j]
            if c is not None:
                c = c.to(dtype).contiguous()  # a sum's cotangent is an expanded view
            given.append(c)

        def zeros(k):
            shape, dtype, device = ctx.tecc_cotangents[k]
            return torch.zeros(shape, dtype=dtype, device=device)

        result = [None] * n_in
        for g in plan:
            for i, t in zip(g.inputs, run(g, inputs, given, zeros)):
                if i in needed and result[i] is None:
                    result[i] = t
        return tuple(result)

    op.register_autograd(backward, setup_context=setup_context)


__all__ = ["SCHEMA_SCALARS", "TensorInfo", "choose_gradients", "fake_outputs", "op_schema",
           "plan_ops", "register_ops"]
