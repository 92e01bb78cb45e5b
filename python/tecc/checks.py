"""Argument checks shared by Kernel calls and the custom operators' fake
implementations, on plain descriptions of tensors (no torch import here).

A TensorInfo says what the checks need of a tensor: its .te dtype (None when
it has none, e.g. complex64), shape, device ("cuda:0", "meta", "cpu") and
whether it is contiguous.  check_inputs() binds the size variables from the
input shapes; output_specs() gives each output's dtype and shape from them.
"""

import ast
import operator
from collections import namedtuple

from .header import HeaderError

TORCH_DTYPES = {"bool": "bool", "i8": "int8", "u8": "uint8", "i32": "int32", "i64": "int64",
                "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f16": "float16",
                "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
DTYPE_OF_TORCH = {"torch." + v: k for k, v in TORCH_DTYPES.items()}

TensorInfo = namedtuple("TensorInfo", "dtype shape device contiguous")


def device_type(device):
    return str(device).partition(":")[0]


def describe_dtype(dtype):
    return "%s (torch.%s)" % (dtype, TORCH_DTYPES[dtype]) if dtype else "a dtype tecc lacks"


def check_tensor(where, p, info, bound, device, devices=("cuda",)):
    """Checks one tensor against parameter p; binds size variables in bound.
    device: the device of the tensors checked before (None for the first).
    Returns this tensor's device.  TypeError for a wrong dtype, ValueError
    for a wrong device, layout or shape."""
    name = "%s: %s" % (where, p.name)
    if info.dtype != p.dtype:
        raise TypeError("%s must be %s; got %s"
                        % (name, describe_dtype(p.dtype), describe_dtype(info.dtype)))
    if device_type(info.device) not in devices:
        raise ValueError("%s must be on a %s device; got %s"
                         % (name, " or ".join(d.upper() for d in devices), info.device))
    if device is not None and str(info.device) != str(device):
        raise ValueError("%s is on %s, another argument on %s" % (name, info.device, device))
    if not info.contiguous:
        raise ValueError("%s must be contiguous (row-major); call .contiguous()" % name)
    if p.shape is not None:
        bind_shape(name, p.shape, tuple(info.shape), bound)
    return info.device


def size_value(dim, bound):
    """The value of a dim under the bound size variables: an int, a name, or
    a derived size's expression (language.md section 9.8: + - * //, min,
    max of literals and names); None when a name in it is not bound."""
    if isinstance(dim, int):
        return dim
    if dim.isidentifier():
        return bound.get(dim)
    return _eval_size(ast.parse(dim, mode="eval").body, bound)


_SIZE_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.FloorDiv: operator.floordiv}


def _eval_size(node, bound):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval_size(node.operand, bound)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _SIZE_OPS:
        a, b = _eval_size(node.left, bound), _eval_size(node.right, bound)
        return None if a is None or b is None else _SIZE_OPS[type(node.op)](a, b)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("min", "max") and len(node.args) == 2):
        a, b = (_eval_size(x, bound) for x in node.args)
        return None if a is None or b is None else (min if node.func.id == "min" else max)(a, b)
    raise HeaderError("not a size expression: %s" % ast.dump(node))


def bind_shape(name, dims, actual, bound):
    """Checks a tensor's shape against .te dims, binding size variables
    (a derived size is checked once they are all bound: check_derived)."""
    if len(dims) == 0 and len(actual) <= 1 and (not actual or actual[0] == 1):
        return
    if len(dims) != len(actual):
        raise ValueError("%s has shape %s; the signature wants rank %d [%s]"
                         % (name, list(actual), len(dims), ", ".join(map(str, dims))))
    for axis, (d, n) in enumerate(zip(dims, actual)):
        if isinstance(d, int):
            if d != n:
                raise ValueError("%s: axis %d is %d; the signature fixes it to %d"
                                 % (name, axis, n, d))
        elif not d.isidentifier():
            continue
        elif bound.setdefault(d, n) != n:
            raise ValueError("%s: axis %d is %d but size %s is already %d"
                             % (name, axis, n, d, bound[d]))


def check_inputs(sig, infos, devices=("cuda",)):
    """Checks the inputs (a TensorInfo per tensor input, anything for a
    by-value one); returns (sizes bound from the shapes, the device)."""
    if len(infos) != len(sig.inputs):
        raise TypeError("%s takes %d inputs; got %d" % (sig.name, len(sig.inputs), len(infos)))
    bound, device = {}, None
    for p, info in zip(sig.inputs, infos):
        if p.by_value:
            if isinstance(info, TensorInfo):
                raise TypeError("%s: %s is a %s scalar, passed by value; got a tensor"
                                % (sig.name, p.name, p.dtype))
            continue
        if not isinstance(info, TensorInfo):
            raise TypeError("%s: %s must be a tensor; got %s"
                            % (sig.name, p.name, type(info).__name__))
        device = check_tensor(sig.name, p, info, bound, device, devices)
    missing = [s for s in sig.sizes if s not in bound]
    if missing:
        raise ValueError("%s: cannot infer size(s) %s from the tensors"
                         % (sig.name, ", ".join(missing)))
    for p, info in zip(sig.inputs, infos):
        for axis, d in enumerate(p.shape or ()):
            want = size_value(d, bound)
            if isinstance(info, TensorInfo) and want is not None and info.shape[axis] != want:
                raise ValueError("%s: %s: axis %d is %d; %s is %d"
                                 % (sig.name, p.name, axis, info.shape[axis], d, want))
    return bound, device


def output_specs(sig, bound):
    """[(name, dtype, shape)] of the outputs, the shapes from bound sizes."""
    specs = []
    for p in sig.outputs:
        if p.shape is None:
            raise HeaderError("%s: the header gives no shape for output %s (no .te "
                              "signature comment)" % (sig.name, p.name))
        shape = tuple(size_value(d, bound) for d in p.shape)
        if None in shape:
            raise ValueError("%s: cannot size output %s %r" % (sig.name, p.name, p.shape))
        specs.append((p.name, p.dtype, shape))
    return specs
