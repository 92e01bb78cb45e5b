"""CPU-side tests of python/tecc (header parsing, argument checks, ctypes
marshalling through a host-memory stand-in library).  Prints TAP.

usage: test_tecc_module.py TOP_SRCDIR WORKDIR   (env: CC, TECC)
"""

import ctypes
import os
import subprocess
import sys

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))
import tecc  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402
from tecc.loader import bind_shape  # noqa: E402

HERE = os.path.join(TOP, "tests", "python")
results = []


def test(fn):
    results.append(fn)
    return fn


def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("%s not raised" % exc.__name__)


def roles(sig):
    return [p.role for p in sig.params]


def fixture():
    return {s.name: s for s in tecc.parse_header_file(os.path.join(HERE, "fixture.h"))}


@test
def fixture_has_every_prototype_in_order():
    names = [s.name for s in tecc.parse_header_file(os.path.join(HERE, "fixture.h"))]
    assert names == ["scale2", "ln", "addc", "total", "flags"], names


@test
def scale2_roles_dtypes_shapes():
    s = fixture()["scale2"]
    assert roles(s) == ["input", "output", "size", "stream"], roles(s)
    assert [p.dtype for p in s.params[:2]] == ["f32", "f32"]
    assert s.inputs[0].shape == ("N",) and s.outputs[0].shape == ("N",)
    assert s.sizes == ["N"]


@test
def abi_example_ln():
    s = fixture()["ln"]
    assert [p.name for p in s.params] == ["x", "w", "eps", "y", "m", "N", "D", "stream"]
    assert roles(s) == ["input"] * 3 + ["output"] * 2 + ["size"] * 2 + ["stream"]
    x, w, eps, y, m = s.params[:5]
    assert (x.dtype, x.shape, x.ctype) == ("bf16", ("N", "D"), "const tecc_bf16 *")
    assert (w.dtype, w.shape) == ("f32", ("D",))
    assert eps.by_value and eps.shape == () and eps.dtype == "f32" and not eps.is_tensor
    assert (y.dtype, m.shape) == ("bf16", ("N",))
    assert s.sizes == ["N", "D"]


@test
def scalar_input_before_outputs():
    s = fixture()["addc"]
    assert roles(s) == ["input", "input", "output", "size", "stream"]
    assert s.params[1].by_value and s.params[1].dtype == "i32"


@test
def rank0_output_and_literal_dim():
    s = fixture()["total"]
    assert s.inputs[0].shape == ("M", 3), s.inputs[0].shape
    assert s.outputs[0].shape == () and s.outputs[0].dtype == "f64"


@test
def prototype_without_comment_uses_c_types():
    s = fixture()["flags"]
    assert roles(s) == ["input", "input", "output", "size", "stream"]
    assert [p.dtype for p in s.params[:3]] == ["bool", "f16", "bool"]
    assert all(p.shape is None for p in s.params[:3]) and s.te_signature is None


@test
def status_names_from_header():
    with open(os.path.join(HERE, "fixture.h")) as f:
        names = tecc.parse_statuses(f.read())
    assert names[2] == "TECC_ERROR_ALIASING" and names[1000] == "TECC_ERROR_CUDA"


@test
def malformed_headers_are_rejected():
    nostream = "tecc_status k(const float *x, float *y, int64_t N);"
    raises(tecc.HeaderError, tecc.parse_header, nostream)
    mismatch = ("/* kernel k(x: f64[N]) -> (y: f32[N]) */\n"
                "tecc_status k(const float *x, float *y, int64_t N, cudaStream_t stream);")
    e = raises(tecc.HeaderError, tecc.parse_header, mismatch)
    assert "f64" in str(e), e
    count = ("/* kernel k(x: f32[N], z: f32[N]) -> (y: f32[N]) */\n"
             "tecc_status k(const float *x, float *y, int64_t N, cudaStream_t stream);")
    raises(tecc.HeaderError, tecc.parse_header, count)
    after = "tecc_status k(const float *x, float *y, float z, cudaStream_t stream);"
    raises(tecc.HeaderError, tecc.parse_header, after)
    unbound = ("/* kernel k(x: f32[4]) -> (y: f32[4]) */\n"
               "tecc_status k(const float *x, float *y, int64_t N, cudaStream_t stream);")
    raises(tecc.HeaderError, tecc.parse_header, unbound)


@test
def comment_forms():
    text = ("// k(x: f32[B, H, S]) -> y\n"
            "tecc_status k(const float *x, float *y, int64_t B, int64_t H, int64_t S,\n"
            "              cudaStream_t stream);\n"
            "/*\n * kernel j(a: bf16[N,D], b: bf16[D]) -> (o: bf16[N,D])\n */\n"
            "tecc_status j(const tecc_bf16 *a, const tecc_bf16 *b, tecc_bf16 *o, int64_t N,"
            " int64_t D, cudaStream_t stream);\n")
    k, j = tecc.parse_header(text)
    assert k.inputs[0].shape == ("B", "H", "S") and k.outputs[0].shape is None
    assert k.sizes == ["B", "H", "S"]
    assert j.inputs[1].shape == ("D",) and j.outputs[0].shape == ("N", "D")


@test
def bf16_rounding():
    assert tecc.bf16_bits(1.0) == 0x3F80
    assert tecc.bf16_bits(-2.5) == 0xC020
    assert tecc.bf16_bits(1.0 + 2 ** -8) == 0x3F80        # tie goes to even
    assert tecc.bf16_bits(1.0 + 3 * 2 ** -8) == 0x3F82    # tie goes to even, up
    assert tecc.bf16_bits(float("inf")) == 0x7F80
    assert tecc.bf16_bits(float("nan")) & 0x7FC0 == 0x7FC0


@test
def shape_binding():
    bound = {}
    bind_shape("x", ("N", "D"), (4, 8), bound)
    bind_shape("w", ("D",), (8,), bound)
    assert bound == {"N": 4, "D": 8}
    e = raises(ValueError, bind_shape, "w2", ("D",), (9,), bound)
    assert "already 8" in str(e), e
    raises(ValueError, bind_shape, "t", ("M", 3), (5, 4), {})
    raises(ValueError, bind_shape, "r", ("N",), (4, 1), {})
    bind_shape("s", (), (), {})


@test
def custom_op_schemas():
    f = fixture()
    assert tecc.op_schema(f["scale2"]) == "(Tensor x) -> Tensor"
    assert tecc.op_schema(f["ln"]) == "(Tensor x, Tensor w, float eps) -> (Tensor, Tensor)"
    assert tecc.op_schema(f["addc"]) == "(Tensor x, int c) -> Tensor"
    e = raises(tecc.HeaderError, tecc.op_schema, f["flags"])  # no .te comment
    assert "x, h, y" in str(e) and "no .te signature" in str(e), e


def info(dtype, shape, device="cuda:0", contiguous=True):
    return tecc.TensorInfo(dtype, shape, device, contiguous)


@test
def fake_outputs_from_the_te_signature():
    f = fixture()
    ln = tecc.fake_outputs(f["ln"], [info("bf16", (4, 8)), info("f32", (8,)), 0.5])
    assert ln == [("y", "bf16", (4, 8)), ("m", "f32", (4,))], ln
    assert tecc.fake_outputs(f["total"], [info("f64", (5, 3), "meta")]) == [("s", "f64", ())]
    assert tecc.fake_outputs(f["addc"], [info("i32", (0,)), 3]) == [("y", "i32", (0,))]


@test
def fake_outputs_check_like_a_call():
    ln = fixture()["ln"]
    x, w = info("bf16", (4, 8)), info("f32", (8,))
    e = raises(TypeError, tecc.fake_outputs, ln, [info("f16", (4, 8)), w, 0.5])
    assert str(e) == "ln: x must be bf16 (torch.bfloat16); got f16 (torch.float16)", e
    e = raises(TypeError, tecc.fake_outputs, ln, [info(None, (4, 8)), w, 0.5])
    assert "got a dtype tecc lacks" in str(e), e
    e = raises(ValueError, tecc.fake_outputs, ln, [info("bf16", (4, 8), "cpu"), w, 0.5])
    assert "must be on a CUDA or META device; got cpu" in str(e), e
    e = raises(ValueError, tecc.fake_outputs, ln, [x, info("f32", (8,), "cuda:1"), 0.5])
    assert "w is on cuda:1, another argument on cuda:0" in str(e), e
    e = raises(ValueError, tecc.fake_outputs, ln, [info("bf16", (4, 8), contiguous=False), w, 0.5])
    assert "contiguous" in str(e), e
    e = raises(ValueError, tecc.fake_outputs, ln, [x, info("f32", (9,)), 0.5])
    assert "ln: w: axis 0 is 9 but size D is already 8" in str(e), e
    e = raises(TypeError, tecc.fake_outputs, ln, [x, w, info("f32", ())])
    assert "eps is a f32 scalar, passed by value" in str(e), e
    e = raises(TypeError, tecc.fake_outputs, ln, [x, w])
    assert "takes 3 inputs; got 2" in str(e), e
    e = raises(TypeError, tecc.fake_outputs, ln, [x, 1.0, 0.5])
    assert "w must be a tensor" in str(e), e


@test
def real_calls_take_only_cuda():
    s = fixture()["scale2"]
    e = raises(ValueError, tecc.check_inputs, s, [info("f32", (4,), "meta")])
    assert "must be on a CUDA device; got meta" in str(e), e
    assert tecc.check_inputs(s, [info("f32", (4,))]) == ({"N": 4}, "cuda:0")


@test
def torch_example_header():
    """examples/torch/rmsnorm.te through the real tecc: the operator schema
    and the fake outputs its custom op gets (the GPU half is in
    test_tecc_gpu.py)."""
    tecc_cmd = os.environ.get("TECC")
    if not tecc_cmd:
        print("# torch_example_header: TECC not set; skipped")
        return
    h = os.path.join(WORK, "rmsnorm.h")
    subprocess.run([tecc_cmd, os.path.join(TOP, "examples", "torch", "rmsnorm.te"),
                    "-o", os.path.join(WORK, "rmsnorm.cu"), "-H", h], check=True)
    (sig,) = tecc.parse_header_file(h)
    assert tecc.op_schema(sig) == "(Tensor x, Tensor w) -> Tensor", tecc.op_schema(sig)
    out = tecc.fake_outputs(sig, [info("bf16", (3, 64), "meta"), info("bf16", (64,), "meta")])
    assert out == [("y", "bf16", (3, 64))], out
    e = raises(ValueError, tecc.fake_outputs, sig, [info("bf16", (3, 64)), info("bf16", (32,))])
    assert "axis 0 is 32 but size D is already 64" in str(e), e


@test
def register_ops_checks_every_kernel_first():
    """Before PyTorch is needed: a kernel without a .te signature comment or
    an unknown name stops register_ops before anything is registered."""
    e = raises(tecc.HeaderError, tecc.register_ops, lib(), "tecc_cpu")
    assert str(e).startswith("flags: the header has no .te signature comment"), e
    e = raises(KeyError, tecc.register_ops, lib(), "tecc_cpu", ["scale2", "nope"])
    assert "no kernel nope" in str(e), e


@test
def describe_command():
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "python"))
    out = subprocess.run([sys.executable, "-m", "tecc", "describe",
                          os.path.join(HERE, "fixture.h")], env=env,
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    assert "ln  # kernel ln(x: bf16[N, D]" in out, out
    assert "size   D" in out, out
    assert "gradient of" not in out, out
    h = os.path.join(WORK, "grad_describe.h")
    with open(h, "w") as f:
        f.write(GRAD_HEADER)
    out = subprocess.run([sys.executable, "-m", "tecc", "describe", h], env=env,
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    assert "rmsnorm_dw  # kernel rmsnorm_dw(" in out and "\n  gradient of rmsnorm\n" in out, out


def build_stub():
    so = os.path.join(WORK, "fixture_cpu.so")
    cc = os.environ.get("CC") or "cc"
    subprocess.run(cc.split() + ["-shared", "-fPIC", "-o", so,
                                 os.path.join(HERE, "fixture_cpu.c")], check=True)
    return tecc.load(so, os.path.join(HERE, "fixture.h"))


LIB = []


def lib():
    if not LIB:
        LIB.append(build_stub())
    return LIB[0]


def floats(*v):
    return (ctypes.c_float * len(v))(*v)


@test
def raw_pointer_call_and_stream():
    x, y = floats(1, 2, 3), floats(0, 0, 0)
    assert lib().scale2(x, y, N=3, stream=0x1234) is None
    assert list(y) == [2.0, 4.0, 6.0], list(y)
    last = ctypes.c_void_p.in_dll(lib().cdll, "fixture_last_stream").value
    assert last == 0x1234, last
    y2 = floats(0, 0)
    lib().scale2(ctypes.addressof(x), ctypes.addressof(y2), 2)   # positional size, ints
    assert list(y2) == [2.0, 4.0]
    assert ctypes.c_void_p.in_dll(lib().cdll, "fixture_last_stream").value is None


@test
def raw_pointer_argument_errors():
    x, y = floats(1), floats(0)
    e = raises(TypeError, lib().scale2, x, y)
    assert "give the size(s) N" in str(e), e
    raises(TypeError, lib().scale2, x, y, M=1)
    raises(TypeError, lib().scale2, x, y, 1, N=1)
    raises(TypeError, lib().scale2, x)
    raises(TypeError, lib().scale2, x, y, N=1.0)
    raises(TypeError, lib().scale2, "x", y, N=1)


@test
def scalar_inputs_are_converted():
    x = (ctypes.c_int32 * 2)(10, 20)
    y = (ctypes.c_int32 * 2)()
    lib().addc(x, 5, y, N=2)
    assert list(y) == [15, 25], list(y)
    raises(TypeError, lib().addc, x, 1.5, y, N=2)
    raises(TypeError, lib().addc, x, "1", y, N=2)
    lib().ln(None, None, 0.5, None, None, N=0, D=0)
    e = raises(tecc.TeccError, lib().ln, None, None, 0.25, None, None, N=0, D=0)
    assert e.status == 2 and e.status_name == "TECC_ERROR_ALIASING", e


@test
def statuses_become_exceptions():
    e = raises(tecc.TeccError, lib().scale2, None, None, N=-1)
    assert e.status == 1 and "TECC_ERROR_INVALID_VALUE" in str(e), e
    s = (ctypes.c_double * 1)()
    e = raises(tecc.TeccError, lib().total, None, s, M=0)
    assert e.status == 1700 and "cudaErrorIllegalAddress" in e.status_name, e
    x = (ctypes.c_double * 6)(1, 2, 3, 4, 5, 6)
    lib().total(x, s, M=2)
    assert s[0] == 21.0


@test
def missing_symbol_is_reported():
    h = os.path.join(WORK, "extra.h")
    with open(h, "w") as f:
        f.write("tecc_status nosuch(const float *x, float *y, int64_t N, cudaStream_t s);\n")
    e = raises(ValueError, tecc.load, os.path.join(WORK, "fixture_cpu.so"), h)
    assert "nosuch" in str(e), e


ABI_EXAMPLE = """kernel ln(x: bf16[N, D], w: f32[D], eps: f32) -> (y: bf16[N, D], m: f32[N]) {
    m = mean(f32(x), -1)
    y = (f32(x) - m) * rsqrt(var(f32(x), -1) + eps) * w
}
"""


def tecc_header(source, name, *options):
    te = os.path.join(WORK, name)
    with open(te, "w") as f:
        f.write(source)
    out = subprocess.run([os.environ["TECC"], "--emit=header"] + list(options) + [te, "-o", "-"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def have_tecc():
    t = os.environ.get("TECC")
    return "" if t and os.access(t, os.X_OK) else "no $TECC"


@test
def generated_header_of_the_abi_example():
    sig, = tecc.parse_header(tecc_header(ABI_EXAMPLE, "abi.te"))
    assert [(p.name, p.ctype, p.role) for p in sig.params] == [
        ("x", "const tecc_bf16 *", "input"), ("w", "const float *", "input"),
        ("eps", "float", "input"), ("y", "tecc_bf16 *", "output"),
        ("m", "float *", "output"), ("N", "int64_t", "size"), ("D", "int64_t", "size"),
        ("stream", "cudaStream_t", "stream")], sig.params
    assert sig.inputs[0].shape == ("N", "D") and sig.outputs[1].shape == ("N",)
    assert sig.inputs[2].by_value and sig.inputs[2].dtype == "f32"


generated_header_of_the_abi_example.skip = have_tecc


@test
def generated_header_with_a_bound_size_and_an_implicit_kernel():
    sig, = tecc.parse_header(tecc_header(ABI_EXAMPLE, "abi.te", "-D", "D=64"))
    assert sig.sizes == ["N"], sig.sizes
    sig, = tecc.parse_header(tecc_header("x: f32[B, S]\ny = softmax(x, -1)\n", "my-sm.te"))
    assert sig.name == "my_sm" and sig.sizes == ["B", "S"], sig
    assert sig.outputs[0].dtype == "f32" and sig.outputs[0].role == "output"


generated_header_with_a_bound_size_and_an_implicit_kernel.skip = have_tecc


@test
def build_helper_makes_a_loadable_library():
    te = os.path.join(WORK, "twice.te")
    with open(te, "w") as f:
        f.write("x: f32[N]\ny = x * 2\n")
    so, h = tecc.build(te, os.path.join(WORK, "built"), opt=2, tecc=os.environ["TECC"],
                       nvcc=os.environ["NVCC"])
    lib = tecc.load(so, h)
    assert list(lib.kernels) == ["twice"] and lib.twice.sig.sizes == ["N"]
    e = raises(tecc.TeccError, lib.twice, None, None, N=-1)   # checked before any CUDA call
    assert e.status_name == "TECC_ERROR_INVALID_VALUE", e
    raises(tecc.BuildError, tecc.build, os.path.join(WORK, "missing.te"),
           tecc=os.environ["TECC"], nvcc=os.environ["NVCC"])


build_helper_makes_a_loadable_library.skip = lambda: have_tecc() or (
    "" if os.environ.get("NVCC") else "no $NVCC")


GRAD_HEADER = """
/* kernel rmsnorm(x: bf16[N, D], w: bf16[D]) -> (y: bf16[N, D]) */
tecc_status rmsnorm(const tecc_bf16 *x, const tecc_bf16 *w, tecc_bf16 *y,
                    int64_t N, int64_t D, cudaStream_t stream);

/* kernel rmsnorm_bwd(x: bf16[N, D], w: bf16[D], dy: bf16[N, D]) -> (dx: bf16[N, D], dw: bf16[D]) */
/* gradient of rmsnorm */
tecc_status rmsnorm_bwd(const tecc_bf16 *x, const tecc_bf16 *w, const tecc_bf16 *dy,
                        tecc_bf16 *dx, tecc_bf16 *dw, int64_t N, int64_t D, cudaStream_t stream);

/* kernel rmsnorm_dw(x: bf16[N, D], w: bf16[D], dy: bf16[N, D]) -> (dw: bf16[D]) */
/* gradient of rmsnorm */
tecc_status rmsnorm_dw(const tecc_bf16 *x, const tecc_bf16 *w, const tecc_bf16 *dy,
                       tecc_bf16 *dw, int64_t N, int64_t D, cudaStream_t stream);
"""


def grad_sigs(text=GRAD_HEADER):
    return {s.name: s for s in tecc.parse_header(text)}


@test
def gradient_comment_pairs_kernels():
    """abi.md section 1: `/* gradient of K */` after the signature comment."""
    f = grad_sigs()
    assert f["rmsnorm"].grad_of is None
    assert f["rmsnorm_bwd"].grad_of == "rmsnorm" and f["rmsnorm_dw"].grad_of == "rmsnorm"
    assert tecc.gradient_inputs(f["rmsnorm"], f["rmsnorm_bwd"]) == (0, 1)
    assert tecc.gradient_inputs(f["rmsnorm"], f["rmsnorm_dw"]) == (1,)
    paired = tecc.gradients(list(f.values()))
    assert list(paired) == ["rmsnorm"], paired
    assert [(g.sig.name, g.inputs) for g in paired["rmsnorm"]] == [
        ("rmsnorm_bwd", (0, 1)), ("rmsnorm_dw", (1,))], paired
    # a gradient kernel whose forward is elsewhere is a kernel like any other
    assert tecc.gradients([f["rmsnorm_bwd"]]) == {}
    # the fixture's kernels are no one's gradients
    assert all(s.grad_of is None for s in fixture().values())
    assert tecc.gradients(list(fixture().values())) == {}


def mismatch(fwd_proto, grad_proto):
    """The HeaderError message for a gradient kernel that does not fit."""
    sigs = tecc.parse_header(fwd_proto + "\n/* gradient of k */\n" + grad_proto)
    e = raises(tecc.HeaderError, tecc.gradients, sigs)
    return str(e)


@test
def gradient_signatures_that_do_not_fit_are_rejected():
    k = ("/* kernel k(x: f32[N], i: i32[N]) -> (y: f32[N], n: i64[N]) */\n"
         "tecc_status k(const float *x, const int32_t *i, float *y, int64_t *n, int64_t N,"
         " cudaStream_t s);")

    def g(sig, proto):
        return "/* kernel g%s */\ntecc_status g(%s, int64_t N, cudaStream_t s);" % (sig, proto)

    ok = g("(x: f32[N], i: i32[N], dy: f32[N]) -> (dx: f32[N])",
           "const float *x, const int32_t *i, const float *dy, float *dx")
    sigs = tecc.parse_header(k + "\n/* gradient of k */\n" + ok)
    assert tecc.gradients(sigs)["k"][0].inputs == (0,)
    e = mismatch(k, g("(x: f32[N], i: i32[N], dy: f32[N], dn: i64[N]) -> (dx: f32[N])",
                      "const float *x, const int32_t *i, const float *dy, const int64_t *dn,"
                      " float *dx"))
    assert e.startswith("g (gradient of k): has 4 inputs; a gradient of k has 3"), e
    e = mismatch(k, g("(x: f32[N], j: i32[N], dy: f32[N]) -> (dx: f32[N])",
                      "const float *x, const int32_t *j, const float *dy, float *dx"))
    assert "input j: i32[N] does not match k's input i: i32[N]" in e, e
    e = mismatch(k, g("(x: f32[N], i: i32[N], dz: f32[N]) -> (dx: f32[N])",
                      "const float *x, const int32_t *i, const float *dz, float *dx"))
    assert "dz: f32[N] is not the cotangent dy of k's output y: f32[N]" in e, e
    e = mismatch(k, g("(x: f32[N], i: i32[N], dy: f32[N]) -> (gx: f32[N])",
                      "const float *x, const int32_t *i, const float *dy, float *gx"))
    assert "output gx is not d<input> for an input of k (x, i)" in e, e
    e = mismatch(k, g("(x: f32[N], i: i32[N], dy: f32[N]) -> (di: i32[N])",
                      "const float *x, const int32_t *i, const float *dy, int32_t *di"))
    assert "output di: i32[N] is not the gradient of k's input i: i32[N]" in e, e
    e = mismatch(k, g("(x: f32[N], i: i32[N], dy: f32[N]) -> (dx: f64[N])",
                      "const float *x, const int32_t *i, const float *dy, double *dx"))
    assert "output dx: f64[N] is not the gradient of k's input x: f32[N]" in e, e
    e = mismatch(k, g("(x: f32[N], i: i32[N], dy: f32[N]) -> (dx: f32[N], dx: f32[N])",
                      "const float *x, const int32_t *i, const float *dy, float *dx, float *dx2"))
    assert "is not the gradient of k's input x" in e, e


class StandIn:
    """What plan_ops needs of a tecc.Library: kernels with a .sig."""

    def __init__(self, text):
        class K:
            def __init__(self, sig):
                self.sig = sig
        self.kernels = {s.name: K(s) for s in tecc.parse_header(text)}


@test
def plan_ops_registers_the_gradient_kernels_too():
    lib = StandIn(GRAD_HEADER)
    names, schemas, paired = tecc.plan_ops(lib, ["rmsnorm"])
    assert names == ["rmsnorm", "rmsnorm_bwd", "rmsnorm_dw"], names
    assert schemas["rmsnorm_bwd"] == "(Tensor x, Tensor w, Tensor dy) -> (Tensor, Tensor)"
    assert [g.sig.name for g in paired["rmsnorm"]] == ["rmsnorm_bwd", "rmsnorm_dw"]
    names, _, paired = tecc.plan_ops(lib, ["rmsnorm_dw"])
    assert names == ["rmsnorm_dw"] and paired == {}, (names, paired)
    names, _, _ = tecc.plan_ops(lib)
    assert names == ["rmsnorm", "rmsnorm_bwd", "rmsnorm_dw"], names
    e = raises(KeyError, tecc.plan_ops, lib, ["rmsnrom"])
    assert "no kernel rmsnrom" in str(e), e
    head, _, tail = GRAD_HEADER.replace("-> (dw: bf16[D]) */", "-> (dw: f32[D]) */"
                                        ).rpartition("tecc_bf16 *dw")
    bad = head + "float *dw" + tail  # rmsnorm_dw's dw: f32, not bf16
    e = raises(tecc.HeaderError, tecc.plan_ops, StandIn(bad), ["rmsnorm"])
    assert "rmsnorm_dw (gradient of rmsnorm): output dw: f32[D]" in str(e), e


@test
def the_narrowest_gradient_kernel_is_chosen():
    f = grad_sigs()
    fwd, grads = f["rmsnorm"], tecc.gradients(list(f.values()))["rmsnorm"]
    bwd, dw = grads

    def chosen(needed, among=grads):
        return [g.sig.name for g in tecc.choose_gradients(fwd, among, needed)]

    assert chosen([0, 1]) == ["rmsnorm_bwd"]
    assert chosen([1]) == ["rmsnorm_dw"]
    assert chosen([0]) == ["rmsnorm_bwd"]
    assert chosen([1], [dw, bwd]) == ["rmsnorm_dw"]
    e = raises(RuntimeError, tecc.choose_gradients, fwd, [dw], [0, 1])
    assert str(e) == ("rmsnorm: autograd needs the gradient of x, but no gradient kernel of "
                      "rmsnorm computes dx (rmsnorm_dw computes dw); add `kernel rmsnorm_bwd "
                      "= grad(rmsnorm)` to the .te file"), e
    # no single kernel computes both: the one that adds the most (the
    # narrowest of those), then the rest
    dx = tecc.Gradient(bwd.sig, (0,))
    three = tecc.parse_header(
        "/* kernel k(a: f32[N], b: f32[N], c: f32[N]) -> (y: f32[N]) */\n"
        "tecc_status k(const float *a, const float *b, const float *c, float *y, int64_t N,"
        " cudaStream_t s);")[0]
    ab, bc, c = (tecc.Gradient(dx.sig, (0, 1)), tecc.Gradient(dx.sig, (1, 2)),
                 tecc.Gradient(dx.sig, (2,)))
    assert tecc.choose_gradients(three, [ab, bc, c], [0, 2]) == [c, ab]
    assert tecc.choose_gradients(three, [c, ab, bc], [1, 2]) == [bc]


GRAD_PROGRAM = """kernel rmsnorm(x: bf16[N, D], w: bf16[D]) -> (y: bf16[N, D]) {
    xf = f32(x)
    y = bf16(xf * rsqrt(mean(xf * xf, -1) + 1e-6) * f32(w))
}
kernel rmsnorm_bwd = grad(rmsnorm)
kernel rmsnorm_dx = grad(rmsnorm, x)
kernel k(x: f32[N, D], s: f32, ids: i64[N, 1], int: f32[D]) -> (y: f32[N, D], am: i64[N], t: f32) {
    y = x * s * int + f32(ids)
    am = argmax(x, 1)
    t = sum(x * x) * s
}
kernel k_bwd = grad(k)
kernel k_ds = grad(k, s, x)
kernel k_bwd2 = grad(k_bwd, int)
"""


@test
def gradient_kernels_from_tecc():
    """The headers tecc writes for grad statements (language.md section 13.2):
    cotangents of float outputs only, a rank-0 cotangent by value, renamed C
    parameters (int is u_int) paired by their .te names."""
    f = {s.name: s for s in tecc.parse_header(tecc_header(GRAD_PROGRAM, "grads.te"))}
    assert [f[n].grad_of for n in f] == [None, "rmsnorm", "rmsnorm", None, "k", "k", "k_bwd"]
    paired = tecc.gradients(list(f.values()))
    assert {n: [(g.sig.name, g.inputs) for g in gs] for n, gs in paired.items()} == {
        "rmsnorm": [("rmsnorm_bwd", (0, 1)), ("rmsnorm_dx", (0,))],
        "k": [("k_bwd", (0, 1, 3)), ("k_ds", (1, 0))],
        "k_bwd": [("k_bwd2", (3,))]}, paired
    kb = f["k_bwd"]
    assert [(p.name, p.te_name, p.by_value) for p in kb.inputs] == [
        ("x", "x", False), ("s", "s", True), ("ids", "ids", False), ("u_int", "int", False),
        ("dy", "dy", False), ("dt", "dt", True)], kb.inputs
    assert [(p.name, p.te_name, p.shape) for p in kb.outputs] == [
        ("dx", "dx", ("N", "D")), ("ds", "ds", ()), ("dint", "dint", ("D",))], kb.outputs
    assert tecc.op_schema(kb) == ("(Tensor x, float s, Tensor ids, Tensor u_int, Tensor dy, "
                                  "float dt) -> (Tensor, Tensor, Tensor)"), tecc.op_schema(kb)
    names, _, _ = tecc.plan_ops(StandIn(tecc_header(GRAD_PROGRAM, "grads.te")), ["k"])
    assert names == ["k", "k_bwd", "k_ds", "k_bwd2"], names


gradient_kernels_from_tecc.skip = have_tecc


STAND_IN_HEADER = """
/* kernel k(x: f32[N], s: f32, ids: i64[N]) -> (y: f32[N], am: i64[N], t: f32) */
tecc_status k(const float *x, float s, const int64_t *ids, float *y, int64_t *am, float *t,
              int64_t N, cudaStream_t stream);

/* kernel k_bwd(x: f32[N], s: f32, ids: i64[N], dy: f32[N], dt: f32) -> (dx: f32[N], ds: f32) */
/* gradient of k */
tecc_status k_bwd(const float *x, float s, const int64_t *ids, const float *dy, float dt,
                  float *dx, float *ds, int64_t N, cudaStream_t stream);

/* kernel k_dx(x: f32[N], s: f32, ids: i64[N], dy: f32[N], dt: f32) -> (dx: f32[N]) */
/* gradient of k */
tecc_status k_dx(const float *x, float s, const int64_t *ids, const float *dy, float dt,
                 float *dx, int64_t N, cudaStream_t stream);
"""


class FakeTensor:
    """A 1-D or 0-D list of numbers with what the backward uses of a tensor."""

    def __init__(self, values, shape, dtype="float32", contiguous=True):
        self.values, self.shape, self.dtype = list(values), tuple(shape), dtype
        self.device, self.is_contig = "cuda:0", contiguous

    def to(self, dtype):
        return self if dtype == self.dtype else FakeTensor(self.values, self.shape, dtype)

    def contiguous(self):
        return self if self.is_contig else FakeTensor(self.values, self.shape, self.dtype)

    def __mul__(self, other):
        assert other.shape == (), "only scaling by a 0-dim tensor is expected"
        return FakeTensor([v * other.values[0] for v in self.values], self.shape, self.dtype)

    def __add__(self, other):
        assert other.shape == self.shape and other.dtype == self.dtype
        return FakeTensor([a + b for a, b in zip(self.values, other.values)], self.shape,
                          self.dtype)


def fake_torch():
    """A module standing in for torch: custom_op and register_autograd
    record what they are given; the operators call the Python kernels."""
    import types

    class Op:
        def __init__(self, name, fn, mutates_args, schema):
            self.name, self.fn, self.schema = name, fn, schema

        def __call__(self, *args):
            return self.fn(*args)

        def register_fake(self, fn):
            self.fake = fn

        def register_autograd(self, backward, setup_context):
            self.backward, self.setup_context = backward, setup_context

    torch = types.ModuleType("torch")
    torch.Tensor = FakeTensor
    torch.float32, torch.float64 = "float32", "float64"
    torch.zeros = lambda shape, dtype, device: FakeTensor([0.0] * (shape[0] if shape else 1),
                                                          shape, dtype)
    torch.library = types.SimpleNamespace(custom_op=Op)
    return torch


class FakeCtx:
    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def set_materialize_grads(self, value):
        self.materialize = value


@test
def backward_with_a_stand_in_torch():
    """register_ops' backward without PyTorch: a module standing in for torch
    and Python kernels for k(x, s, ids) -> (y = x*s + ids, am, t = sum(x*x)*s)
    and its gradients.  The narrowest gradient kernel runs; a missing
    cotangent is zeros (0.0 by value); a rank-0 output's cotangent, by value
    in the gradient kernel, is applied by linearity (the kernel with 1.0,
    scaled); cotangents are made contiguous; by-value and integer inputs
    get None."""
    calls = []

    def k(x, s, ids):
        y = FakeTensor([a * s + b for a, b in zip(x.values, ids.values)], x.shape)
        return y, FakeTensor([0] * len(x.values), x.shape, "int64"), FakeTensor(
            [sum(a * a for a in x.values) * s], ())

    def k_grads(name):
        def kernel(x, s, ids, dy, dt):
            assert dy.is_contig and isinstance(dt, float), (dy.is_contig, dt)
            calls.append((name, list(dy.values), dt))
            dx = FakeTensor([g * s + dt * 2 * a * s for a, g in zip(x.values, dy.values)],
                            x.shape)
            ds = FakeTensor([sum(a * g for a, g in zip(x.values, dy.values)) +
                             dt * sum(a * a for a in x.values)], ())
            return (dx, ds) if name == "k_bwd" else dx
        return kernel

    class Lib:
        kernels = {}

    for sig in tecc.parse_header(STAND_IN_HEADER):
        fn = k if sig.name == "k" else k_grads(sig.name)
        fn.sig = sig
        Lib.kernels[sig.name] = fn
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake_torch()
    try:
        ops = tecc.register_ops(Lib(), "stand_in", ["k"])
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    assert sorted(ops) == ["k", "k_bwd", "k_dx"], ops
    op = ops["k"]
    assert not hasattr(ops["k_dx"], "backward")  # gradient kernels of their own: none
    x, ids, s = FakeTensor([1.0, 2.0, 3.0], (3,)), FakeTensor([5, 6, 7], (3,), "int64"), 0.5
    outputs = op(x, s, ids)

    def backward(needs, dy, dam, dt):
        ctx = FakeCtx(needs)
        op.setup_context(ctx, (x, s, ids), outputs)
        assert ctx.materialize is False and ctx.saved_tensors == (x, ids)
        del calls[:]
        return op.backward(ctx, dy, dam, dt)

    dy = FakeTensor([1.0, -1.0, 2.0], (3,), contiguous=False)
    got = backward((True, False, False), dy, None, None)
    assert got[1:] == (None, None) and got[0].values == [0.5, -0.5, 1.0], got
    assert calls == [("k_dx", [1.0, -1.0, 2.0], 0.0)], calls
    got = backward((True, False, False), None, None, FakeTensor([3.0], ()))
    assert calls == [("k_dx", [0.0, 0.0, 0.0], 1.0)], calls        # dy: zeros
    assert got[0].values == [3.0 * 2 * a * s for a in x.values], got[0].values
    got = backward((True, False, False), dy, None, FakeTensor([3.0], ()))
    assert calls == [("k_dx", [1.0, -1.0, 2.0], 0.0), ("k_dx", [0.0, 0.0, 0.0], 1.0)], calls
    assert got[0].values == [g * s + 3.0 * 2 * a * s for a, g in zip(x.values, dy.values)]
    assert got[0].dtype == "float32"
    assert backward((False, False, False), dy, None, None) == (None, None, None) and not calls


def main():
    os.makedirs(WORK, exist_ok=True)
    return taprun.run(results, lambda fn: getattr(fn, "skip", lambda: "")())


sys.exit(main())
