"""Argument checks shared by Kernel calls and the custom operators' fake
implementations, on plain descriptions of tensors (no torch import here).

A TensorInfo says what the checks need of a tensor: its .te dtype (None when
it has none, e.g. complex64), shape, device ("cuda:0", "meta", "cpu") and
whether it is contiguous.  check_inputs() binds the size variables from the
input shapes; output_specs() gives each output's dtype and shape from them.
"""

from collections import namedtuple

from .header import HeaderError

TORCH_DTYPES = {"bool": "bool", "i32": "int32", "i64": "int64", "f16": "float16",
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


def bind_shape(name, dims, actual, bound):
    """Checks a tensor's shape against .te dims, binding size variables."""
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
    return bound, device


def output_specs(sig, bound):
    """[(name, dtype, shape)] of the outputs, the shapes from bound sizes."""
    specs = []
    for p in sig.outputs:
        if p.shape is None:
            raise HeaderError("%s: the header gives no shape for output %s (no .te "
                              "signature comment)" % (sig.name, p.name))
        shape = tuple(d if isinstance(d, int) else bound.get(d) for d in p.shape)
        if None in shape:
            raise ValueError("%s: cannot size output %s %r" % (sig.name, p.name, p.shape))
        specs.append((p.name, p.dtype, shape))
    return specs
