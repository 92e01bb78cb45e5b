"""tecc from Python: load a library built from tecc output and call its
kernels with PyTorch tensors or raw device pointers.

    import tecc
    so, h = tecc.build("softmax.te")            # tecc + nvcc -shared, cached
    lib = tecc.load(so, h)
    y = lib.softmax(x)                          # allocates y
    lib.softmax(x, y)                           # or writes into y
    lib.softmax(x_ptr, y_ptr, M=4, N=1024)      # raw device pointers
    tecc.register_ops(lib, "mylib")             # torch.ops.mylib.softmax(x),
                                                # traceable by torch.compile;
                                                # with a backward where the .te
                                                # file has grad(softmax)
"""

from .build import (BuildError, build, build_key, cache_dir, find_nvcc, find_tecc,
                    find_tool)
from .checks import TensorInfo, check_inputs, output_specs
from .header import (Gradient, HeaderError, Param, Signature, gradient_inputs, gradients,
                     parse_header, parse_header_file, parse_statuses)
from .loader import Kernel, Library, TeccError, bf16_bits
from .ops import choose_gradients, fake_outputs, op_schema, plan_ops, register_ops

__version__ = "0.1.0"  # configure.ac's AC_INIT; pyproject.toml reads it

__all__ = ["BuildError", "Gradient", "HeaderError", "Kernel", "Library", "Param",
           "Signature", "TensorInfo", "TeccError", "bf16_bits", "build", "build_key",
           "cache_dir", "check_inputs", "choose_gradients", "fake_outputs", "find_nvcc",
           "find_tecc", "find_tool", "gradient_inputs", "gradients", "load", "op_schema",
           "output_specs", "parse_header", "parse_header_file", "parse_statuses", "plan_ops",
           "register_ops"]


def load(so_path, headers=None):
    """Loads a shared library and binds the kernels its header(s) declare."""
    return Library(so_path, headers)
