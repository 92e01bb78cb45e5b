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

The schema and the checks are plain functions (op_schema here, check_inputs
and output_specs in checks.py): they need no torch.
"""

from .checks import TORCH_DTYPES, TensorInfo, check_inputs, output_specs
from .header import HeaderError

# .te dtype of a by-value input -> the schema's scalar type.
SCHEMA_SCALARS = {"bool": "bool", "i32": "int", "i64": "int", "f16": "float",
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


def register_ops(lib, namespace="tecc", names=None):
    """Registers the kernels of lib (a tecc.Library) named in names (default:
    all of them) as NAMESPACE::NAME; returns {name: operator}.  Every schema
    is made before any operator is registered, so a kernel that cannot be
    one (a header without the .te signature comment) raises HeaderError,
    and an unknown name KeyError, with nothing registered."""
    names = list(lib.kernels) if names is None else list(names)
    unknown = [n for n in names if n not in lib.kernels]
    if unknown:
        raise KeyError("the library has no kernel %s (it has %s)"
                       % (", ".join(unknown), ", ".join(lib.kernels)))
    schemas = {n: op_schema(lib.kernels[n].sig) for n in names}
    import torch
    return {n: _register(torch, namespace, lib.kernels[n], schemas[n]) for n in names}


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


__all__ = ["SCHEMA_SCALARS", "TensorInfo", "fake_outputs", "op_schema", "register_ops"]
