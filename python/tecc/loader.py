"""Call tecc entry points from Python through ctypes.

A Kernel checks its arguments against the Signature parsed from the header
before anything reaches the GPU: with PyTorch tensors it checks dtype,
device, contiguity and shape, infers the size variables from the shapes and
checks they agree, and passes the current CUDA stream; with raw device
pointers (ints) it needs every size variable given explicitly.
"""

import ctypes
import math
import os
import struct

from .checks import (DTYPE_OF_TORCH, TORCH_DTYPES, TensorInfo, bind_shape,  # noqa: F401
                     check_tensor)
from .header import (DTYPE_SIZE, INPUT, OUTPUT, SIZE, parse_header_file,
                     parse_statuses)

# A few cudaError_t names, for TECC_ERROR_CUDA + err.
CUDA_ERRORS = {1: "cudaErrorInvalidValue", 2: "cudaErrorMemoryAllocation",
               3: "cudaErrorInitializationError", 9: "cudaErrorInvalidConfiguration",
               98: "cudaErrorInvalidDeviceFunction", 100: "cudaErrorNoDevice",
               101: "cudaErrorInvalidDevice", 209: "cudaErrorNoKernelImageForDevice",
               222: "cudaErrorUnsupportedPtxVersion", 400: "cudaErrorInvalidResourceHandle",
               700: "cudaErrorIllegalAddress", 701: "cudaErrorLaunchOutOfResources",
               702: "cudaErrorLaunchTimeout", 716: "cudaErrorMisalignedAddress",
               719: "cudaErrorLaunchFailure", 900: "cudaErrorStreamCaptureUnsupported"}


class TeccError(RuntimeError):
    """A non-zero tecc_status; .status is the code, .status_name its name."""

    def __init__(self, kernel, status, status_name):
        super().__init__("%s returned %s (%d)" % (kernel, status_name, status))
        self.status, self.status_name = status, status_name


def status_name(statuses, code):
    if code in statuses:
        return statuses[code]
    if code > 1000:
        return "TECC_ERROR_CUDA+%d (%s)" % (code - 1000, CUDA_ERRORS.get(code - 1000, "?"))
    return "unknown tecc_status"


def bf16_bits(value):
    """Rounds a Python float to bfloat16 (nearest even) and returns its bits."""
    bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return 0x7FC0 | ((bits >> 16) & 0x8000)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def f16_bits(value):
    return struct.unpack("<H", struct.pack("<e", float(value)))[0]


def f8_bits(dtype, value):
    """Rounds a Python float to float8 as torch's casts do: through float32,
    then to nearest even; e4m3 has no infinity (beyond 464 is NaN, 0x7f),
    e5m2 overflows to infinity; NaN keeps its sign."""
    man, exp_bits, finite_only = (3, 4, True) if dtype == "f8e4m3" else (2, 5, False)
    bias = (1 << (exp_bits - 1)) - 1
    x = struct.unpack("<f", struct.pack("<f", float(value)))[0]
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    top = (1 << (exp_bits + man)) - 1  # 0x7f
    if math.isnan(x):
        return sign | top
    a = abs(x)
    if math.isinf(a):
        return sign | (top if finite_only else 0x7c)
    step = 2.0 ** (1 - bias - man)  # the subnormal step
    if a >= 2.0 ** (1 - bias):
        step = 2.0 ** (math.frexp(a)[1] - 1 - man)
    q = a / step
    r = math.floor(q)
    if q - r > 0.5 or (q - r == 0.5 and r % 2 == 1):
        r += 1
    v = r * step
    largest = 448.0 if finite_only else 57344.0
    if v > largest:
        return sign | (top if finite_only else 0x7c)
    if v < 2.0 ** (1 - bias):
        return sign | int(v / 2.0 ** (1 - bias - man))
    e = math.frexp(v)[1] - 1
    m = int(v / 2.0 ** (e - man)) - (1 << man)
    return sign | ((e + bias) << man) | m


SCALAR_CTYPES = {"bool": ctypes.c_uint8, "i8": ctypes.c_int8, "u8": ctypes.c_uint8,
                 "i32": ctypes.c_int32, "i64": ctypes.c_int64, "f8e4m3": ctypes.c_uint8,
                 "f8e5m2": ctypes.c_uint8, "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16,
                 "f32": ctypes.c_float, "f64": ctypes.c_double}


def scalar_arg(param, value):
    """Converts a Python number to the C value of a rank-0 input."""
    if hasattr(value, "item") and not isinstance(value, (int, float, bool)):
        if getattr(value, "numel", lambda: 1)() != 1:
            raise ValueError("%s is a scalar input; got a tensor of shape %s"
                             % (param.name, tuple(value.shape)))
        value = value.item()
    if not isinstance(value, (int, float, bool)):
        raise TypeError("%s is a scalar %s input; got %s" % (param.name, param.dtype,
                                                             type(value).__name__))
    if param.dtype == "bool":
        return 1 if value else 0
    if param.dtype in ("i8", "u8", "i32", "i64"):
        if isinstance(value, float) and not value.is_integer():
            raise TypeError("%s is %s; got the float %r" % (param.name, param.dtype, value))
        return int(value)
    if param.dtype == "bf16":
        return bf16_bits(value)
    if param.dtype == "f16":
        return f16_bits(value)
    if param.dtype in ("f8e4m3", "f8e5m2"):
        return f8_bits(param.dtype, value)
    return float(value)


def is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


class Kernel:
    """One entry point of a loaded library; call it like a function."""

    def __init__(self, cfunc, sig, statuses):
        self.sig, self.statuses, self.cfunc = sig, statuses, cfunc
        self.__name__ = sig.name
        cfunc.restype = ctypes.c_int
        cfunc.argtypes = [self._ctype(p) for p in sig.params]

    @staticmethod
    def _ctype(p):
        if p.role == SIZE:
            return ctypes.c_int64
        if p.role == INPUT and p.by_value:
            return SCALAR_CTYPES[p.dtype]
        return ctypes.c_void_p

    def __repr__(self):
        return "<tecc kernel %s>" % (self.sig.te_signature or self.sig.name)

    def __call__(self, *args, stream=None, **sizes):
        tensors, given_sizes, allocate = self._split_args(args, sizes)
        if any(is_torch_tensor(t) for t in tensors if t is not None):
            values, out, device = self._torch_args(tensors, given_sizes, allocate, stream)
            import torch
            if device is not None and device.index != torch.cuda.current_device():
                with torch.cuda.device(device):  # the stub launches on the current device
                    self.call_c(values)
                return out
        else:
            if allocate:
                raise TypeError("%s: outputs can be allocated only for PyTorch inputs"
                                % self.sig.name)
            values, out = self._raw_args(tensors, given_sizes, stream), None
        self.call_c(values)
        return out

    def call_c(self, values):
        """Calls the C function with converted values; raises on a bad status."""
        status = self.cfunc(*values)
        if status != 0:
            raise TeccError(self.sig.name, status, status_name(self.statuses, status))

    def _split_args(self, args, sizes):
        sig = self.sig
        n_in, n_out, size_names = len(sig.inputs), len(sig.outputs), sig.sizes
        unknown = set(sizes) - set(size_names)
        if unknown:
            raise TypeError("%s: unknown size variable(s) %s (it has %s)"
                            % (sig.name, ", ".join(sorted(unknown)),
                               ", ".join(size_names) or "none"))
        if len(args) == n_in:
            return list(args) + [None] * n_out, dict(sizes), True
        if len(args) == n_in + n_out + len(size_names) and size_names:
            pos = dict(zip(size_names, args[n_in + n_out:]))
            dup = set(pos) & set(sizes)
            if dup:
                raise TypeError("%s: size %s given twice" % (sig.name, ", ".join(dup)))
            pos.update(sizes)
            return list(args[:n_in + n_out]), pos, False
        if len(args) == n_in + n_out:
            return list(args), dict(sizes), False
        raise TypeError("%s takes %d inputs and %d outputs (then optionally the sizes "
                        "%s); got %d arguments" % (sig.name, n_in, n_out,
                                                   ", ".join(size_names) or "-", len(args)))

    def _params(self):
        return self.sig.inputs + self.sig.outputs

    def _raw_args(self, tensors, sizes, stream):
        sig = self.sig
        missing = [s for s in sig.sizes if s not in sizes]
        if missing:
            raise TypeError("%s: with raw pointers, give the size(s) %s"
                            % (sig.name, ", ".join(missing)))
        values = []
        for p, v in zip(self._params(), tensors):
            if p.by_value:
                values.append(scalar_arg(p, v))
            elif v is None or isinstance(v, int):
                values.append(v)
            elif hasattr(v, "data_ptr"):
                values.append(v.data_ptr())
            elif isinstance(v, ctypes.c_void_p) or hasattr(v, "_type_") or isinstance(v, ctypes.Array):
                values.append(ctypes.cast(v, ctypes.c_void_p).value)
            else:
                raise TypeError("%s: %s must be a device pointer (int); got %s"
                                % (sig.name, p.name, type(v).__name__))
        for s in sig.sizes:
            n = sizes[s]
            if isinstance(n, bool) or not isinstance(n, int):
                raise TypeError("%s: size %s must be an int; got %r" % (sig.name, s, n))
            values.append(n)
        values.append(stream_handle(stream))
        return values

    def _torch_args(self, tensors, sizes, allocate, stream):
        import torch
        sig = self.sig
        bound = {k: v for k, v in sizes.items()}
        device = None
        for p, t in zip(self._params(), tensors):
            if p.by_value or t is None:
                continue
            device = self._check_tensor(torch, p, t, bound, device)
        missing = [s for s in sig.sizes if s not in bound]
        if missing:
            raise ValueError("%s: cannot infer size(s) %s from the tensors; give them "
                             "as keywords" % (sig.name, ", ".join(missing)))
        outs = []
        for i, p in enumerate(sig.outputs):
            k = len(sig.inputs) + i
            if tensors[k] is None:
                if not allocate:
                    raise TypeError("%s: output %s is None" % (sig.name, p.name))
                tensors[k] = self._allocate(torch, p, bound, device)
            outs.append(tensors[k])
        values = []
        for p, t in zip(self._params(), tensors):
            values.append(scalar_arg(p, t) if p.by_value else t.data_ptr())
        values += [bound[s] for s in sig.sizes]
        if stream is None:
            stream = torch.cuda.current_stream(device)
        values.append(stream_handle(stream))
        if not allocate:
            return values, None, device
        return values, (outs[0] if len(outs) == 1 else tuple(outs)), device

    def _check_tensor(self, torch, p, t, bound, device):
        if not is_torch_tensor(t):
            raise TypeError("%s: %s must be a torch.Tensor like the other arguments; got %s"
                            % (self.sig.name, p.name, type(t).__name__))
        return check_tensor(self.sig.name, p, tensor_info(t), bound, device)

    def _allocate(self, torch, p, bound, device):
        if p.shape is None:
            raise TypeError("%s: the header gives no shape for output %s; pass it"
                            % (self.sig.name, p.name))
        shape = [d if isinstance(d, int) else bound.get(d) for d in p.shape]
        if None in shape:
            raise TypeError("%s: cannot size output %s %r; pass it"
                            % (self.sig.name, p.name, p.shape))
        return torch.empty(shape, dtype=getattr(torch, TORCH_DTYPES[p.dtype]), device=device)


def tensor_info(t):
    """What checks.check_tensor needs of a torch tensor."""
    return TensorInfo(DTYPE_OF_TORCH.get(str(t.dtype)), tuple(t.shape), t.device,
                      t.is_contiguous())


def stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream or None
    if isinstance(stream, ctypes.c_void_p):
        return stream.value
    raise TypeError("stream must be an int handle or a torch.cuda.Stream; got %s"
                    % type(stream).__name__)


class Library:
    """A shared library built from tecc output, with its entry points as
    attributes: lib.softmax(x, y), lib.kernels['softmax']."""

    def __init__(self, so_path, headers=None):
        self.path = os.path.abspath(so_path)
        if headers is None:
            headers = [os.path.splitext(so_path)[0] + ".h"]
        elif isinstance(headers, (str, os.PathLike)):
            headers = [headers]
        self.cdll = ctypes.CDLL(self.path)
        self.kernels = {}
        for h in headers:
            with open(h) as f:
                statuses = parse_statuses(f.read())
            for sig in parse_header_file(h):
                if sig.name in self.kernels:
                    raise ValueError("kernel %s is in two headers" % sig.name)
                try:
                    cfunc = getattr(self.cdll, sig.name)
                except AttributeError:
                    raise ValueError("%s declares %s but %s does not define it"
                                     % (h, sig.name, so_path)) from None
                self.kernels[sig.name] = Kernel(cfunc, sig, statuses)

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError("no kernel %r in %s (it has %s)"
                             % (name, self.__dict__.get("path"), ", ".join(kernels)))

    def __getitem__(self, name):
        return self.kernels[name]

    def __dir__(self):
        return list(super().__dir__()) + list(self.kernels)


def element_size(dtype):
    return DTYPE_SIZE[dtype]
