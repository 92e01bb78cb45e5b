"""GPU tests of python/tecc's PyTorch path, against fixture.cu (hand-written
entry points following abi.md) and kernels tecc builds: grad_ops.te's
kernels with their gradient kernels (autograd, torch.compile, CUDA graphs)
and the examples in examples/torch.  Prints TAP; skips without torch or a
GPU.

usage: test_tecc_gpu.py TOP_SRCDIR WORKDIR   (env: NVCC, TECC)
"""

import json
import os
import subprocess
import sys
import time

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))
HERE = os.path.join(TOP, "tests", "python")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402

torch = taprun.torch_on_gpu()

import tecc  # noqa: E402

tests = []


def test(fn):
    tests.append(fn)
    return fn


def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("%s not raised" % exc.__name__)


def build():
    so = os.path.join(WORK, "fixture_gpu.so")
    nvcc = os.environ.get("NVCC") or tecc.find_nvcc()
    subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-I", HERE, "-o", so,
                    os.path.join(HERE, "fixture.cu")], check=True)
    return tecc.load(so, os.path.join(HERE, "fixture.h"))


LIB = []


def lib():
    if not LIB:
        LIB.append(build())
    return LIB[0]


def cuda(*a, **k):
    return torch.randn(*a, device="cuda", **k)


@test
def tensors_in_and_allocated_out():
    x = cuda(1000)
    y = lib().scale2(x)
    torch.cuda.synchronize()
    assert y.shape == (1000,) and y.dtype == torch.float32
    assert torch.equal(y, 2 * x)
    z = torch.empty_like(x)
    assert lib().scale2(x, z) is None
    assert torch.equal(z, 2 * x)


@test
def sizes_inferred_and_checked():
    x = cuda(4, 8).to(torch.bfloat16)
    w = cuda(8)
    y, m = lib().ln(x, w, 0.5)
    torch.cuda.synchronize()
    assert y.shape == (4, 8) and y.dtype == torch.bfloat16 and m.shape == (4,)
    ref = (x.float() * w + 0.5).to(torch.bfloat16)
    assert torch.equal(y, ref), (y, ref)
    assert torch.allclose(m, x.float().mean(-1), rtol=1e-5, atol=1e-6)
    e = raises(ValueError, lib().ln, x, cuda(9), 0.5)
    assert "D" in str(e), e
    raises(ValueError, lib().ln, x, w, 0.5, N=5)


@test
def dtype_device_contiguity_rank_are_checked():
    x = cuda(16)
    raises(TypeError, lib().scale2, x.double())
    raises(ValueError, lib().scale2, x.cpu())
    raises(ValueError, lib().scale2, cuda(32)[::2])
    raises(ValueError, lib().scale2, cuda(4, 4))
    raises(TypeError, lib().scale2, x, 3)
    raises(ValueError, lib().total, cuda(5, 4, dtype=torch.float64))


@test
def rank0_output_and_literal_dims():
    x = cuda(7, 3, dtype=torch.float64)
    s = lib().total(x)
    torch.cuda.synchronize()
    assert s.shape == () and abs(float(s) - float(x.sum())) < 1e-9


@test
def status_becomes_exception():
    x = torch.arange(8, dtype=torch.int32, device="cuda")
    e = raises(tecc.TeccError, lib().addc, x[:6], 1, x[2:])
    assert e.status_name == "TECC_ERROR_ALIASING", e
    y = lib().addc(x, -3)
    torch.cuda.synchronize()
    assert torch.equal(y, x - 3)


@test
def current_stream_is_used_and_graph_capture_works():
    x = cuda(1 << 20)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(1000000)
        y = lib().scale2(x)
    s.synchronize()
    assert torch.equal(y, 2 * x)
    y2 = torch.empty_like(x)
    g = torch.cuda.CUDAGraph()
    lib().scale2(x, y2)  # warm-up outside the capture
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        lib().scale2(x, y2)
    x.copy_(cuda(1 << 20))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(y2, 2 * x)


@test
def raw_device_pointers():
    x = cuda(100)
    y = torch.empty_like(x)
    lib().scale2(x.data_ptr(), y.data_ptr(), N=100)
    torch.cuda.synchronize()
    assert torch.equal(y, 2 * x)


OPS = []


def ops():
    """The fixture's kernels as torch.ops.tecc_test.* (registered once)."""
    if not OPS:
        # fixture.h's `flags` has no .te signature comment: all or nothing
        e = raises(tecc.HeaderError, tecc.register_ops, lib(), "tecc_test")
        assert str(e).startswith("flags: "), e
        assert not hasattr(torch.ops.tecc_test, "scale2")
        names = [n for n in lib().kernels if n != "flags"]
        OPS.append(tecc.register_ops(lib(), "tecc_test", names))
    return OPS[0]


@test
def custom_ops_run_check_and_trace():
    if not hasattr(torch.library, "custom_op"):
        print("# custom_ops_run_check_and_trace: PyTorch %s has no torch.library.custom_op"
              % torch.__version__)
        return
    ops()
    x, w = cuda(4, 8).to(torch.bfloat16), cuda(8)
    y, m = torch.ops.tecc_test.ln(x, w, 0.5)
    ref_y, ref_m = lib().ln(x, w, 0.5)
    torch.cuda.synchronize()
    assert torch.equal(y, ref_y) and torch.equal(m, ref_m)
    ym, mm = torch.ops.tecc_test.ln(x.to("meta"), w.to("meta"), 0.5)
    assert ym.device.type == "meta" and ym.shape == (4, 8) and ym.dtype == torch.bfloat16
    assert mm.shape == (4,) and mm.dtype == torch.float32
    raises(TypeError, torch.ops.tecc_test.scale2, cuda(16).double())
    raises(ValueError, torch.ops.tecc_test.scale2, cuda(32)[::2])
    raises(ValueError, torch.ops.tecc_test.ln, x.to("meta"), cuda(9).to("meta"), 0.5)
    torch.library.opcheck(torch.ops.tecc_test.scale2.default, (cuda(16),))
    compiled = torch.compile(lambda t: torch.ops.tecc_test.scale2(t) + 1, fullgraph=True)
    t = cuda(64)
    assert torch.equal(compiled(t), 2 * t + 1)


@test
def rmsnorm_module_example():
    """examples/torch: tecc's RMSNorm as a custom op in an nn.Module, under
    torch.compile(fullgraph=True) and CUDA graph replay, bitwise equal to
    the direct call, with no graph break."""
    if not hasattr(torch.library, "custom_op"):
        print("# rmsnorm_module_example: PyTorch %s has no torch.library.custom_op"
              % torch.__version__)
        return
    import importlib.util
    path = os.path.join(TOP, "examples", "torch", "rmsnorm_module.py")
    spec = importlib.util.spec_from_file_location("rmsnorm_module", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    results = example.run(os.path.join(WORK, "rmsnorm"), rows=1000, d=1024)
    for passed, what in results:
        print("# %s - %s" % ("ok" if passed else "FAILED", what))
    assert all(passed for passed, _ in results), results


def train_example_path():
    return os.path.join(TOP, "examples", "torch", "train.py")


@test
def train_example():
    """examples/torch/train.py: a block whose RMSNorm, SwiGLU and
    cross-entropy are tecc kernels with gradient kernels, trained for 20
    SGD steps, against the same block in PyTorch; one step under
    torch.compile(fullgraph=True), backward included."""
    if not hasattr(torch.library, "custom_op"):
        print("# train_example: PyTorch %s has no torch.library.custom_op" % torch.__version__)
        return
    import importlib.util
    spec = importlib.util.spec_from_file_location("train_example", train_example_path())
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    results = example.run(os.path.join(WORK, "train"))
    for passed, what in results:
        print("# %s - %s" % ("ok" if passed else "FAILED", what))
    assert all(passed for passed, _ in results), [w for p, w in results if not p]


GRAD = []


def grad_lib():
    """tests/python/grad_ops.te built with tecc.build and registered as
    torch.ops.tecc_grad_test.*, the gradient kernels paired with their
    forwards; returns (library, operators, calls), calls the list each
    kernel call appends its name to."""
    if not GRAD:
        so, h = tecc.build(os.path.join(HERE, "grad_ops.te"), out_dir=os.path.join(WORK, "grad"),
                           nvcc=os.environ.get("NVCC") or tecc.find_nvcc())
        lib = tecc.load(so, h)
        calls = []
        for name, kernel in lib.kernels.items():
            def recording(values, name=name, call_c=kernel.call_c):
                calls.append(name)
                return call_c(values)
            kernel.call_c = recording
        GRAD.append((lib, tecc.register_ops(lib, "tecc_grad_test"), calls))
    return GRAD[0]


def no_custom_op():
    return "" if hasattr(torch.library, "custom_op") else (
        "PyTorch %s has no torch.library.custom_op" % torch.__version__)


def leaf(t):
    return t.detach().clone().requires_grad_()


def same(what, got, want):
    """got is want, bitwise; else an AssertionError saying by how much not."""
    if got is None or not torch.equal(got, want):
        diff = "None" if got is None else "max |difference| %.3g" % float(
            (got.double() - want.double()).abs().max())
        raise AssertionError("%s: not the direct call's result (%s)" % (what, diff))


def close(what, got, want, rtol, atol):
    if not torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol):
        err = ((got.double() - want.double()).abs() - atol) / want.double().abs()
        raise AssertionError("%s: max |difference| %.3g, max relative %.3g (rtol %g, atol %g)"
                             % (what, float((got.double() - want.double()).abs().max()),
                                float(err.max()), rtol, atol))


@test
def backward_runs_the_gradient_kernel():
    """loss.backward() through an operator with gradient kernels gives what a
    direct call of the gradient kernel gives, and what torch's autograd of
    the same formula gives in float64."""
    lib, ops, calls = grad_lib()
    x, w = leaf(cuda(64, 256)), leaf(torch.rand(256, device="cuda") + 0.5)
    g = cuda(64, 256)
    del calls[:]
    y = ops["rmsnorm"](x, w)
    assert y.requires_grad and y.grad_fn is not None, y
    (y * g).sum().backward()
    torch.cuda.synchronize()
    assert calls == ["rmsnorm", "rmsnorm_bwd"], calls
    dx, dw = lib.rmsnorm_bwd(x.detach(), w.detach(), g)
    torch.cuda.synchronize()
    same("x.grad", x.grad, dx)
    same("w.grad", w.grad, dw)
    x64, w64 = leaf(x.double()), leaf(w.double())
    y64 = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6) * w64
    (y64 * g.double()).sum().backward()
    close("x.grad against float64 autograd", x.grad, x64.grad, 1e-4, 1e-5)
    close("w.grad against float64 autograd", w.grad, w64.grad, 1e-4, 1e-4)


backward_runs_the_gradient_kernel.skip = no_custom_op


@test
def needs_input_grad_picks_the_narrowest_gradient_kernel():
    """Only x needs a gradient: rmsnorm_dx = grad(rmsnorm, x) runs, not
    rmsnorm_bwd; only w: rmsnorm_bwd (the one that computes dw); a gradient
    no kernel computes (mul has grad(mul, x) alone) is an error that says
    what to add."""
    lib, ops, calls = grad_lib()
    x, w, g = cuda(64, 256), torch.rand(256, device="cuda") + 0.5, cuda(64, 256)
    xl = leaf(x)
    del calls[:]
    (ops["rmsnorm"](xl, w) * g).sum().backward()
    torch.cuda.synchronize()
    assert calls == ["rmsnorm", "rmsnorm_dx"], calls
    same("x.grad (rmsnorm_dx)", xl.grad, lib.rmsnorm_dx(x, w, g))
    close("rmsnorm_dx against rmsnorm_bwd's dx", xl.grad, lib.rmsnorm_bwd(x, w, g)[0],
          1e-5, 1e-6)
    wl = leaf(w)
    del calls[:]
    (ops["rmsnorm"](x, wl) * g).sum().backward()
    torch.cuda.synchronize()
    assert calls == ["rmsnorm", "rmsnorm_bwd"], calls
    same("w.grad", wl.grad, lib.rmsnorm_bwd(x, w, g)[1])
    a, b = leaf(cuda(100)), leaf(cuda(100))
    y = ops["mul"](a, b)
    e = raises(RuntimeError, y.sum().backward)
    assert "no gradient kernel of mul computes dw" in str(e), e
    a = leaf(cuda(100))
    del calls[:]
    ops["mul"](a, b.detach()).sum().backward()
    torch.cuda.synchronize()
    assert calls == ["mul", "mul_dx"], calls
    same("mul's x.grad", a.grad, b.detach())


needs_input_grad_picks_the_narrowest_gradient_kernel.skip = no_custom_op


@test
def integer_and_rank0_outputs_and_by_value_inputs():
    """stats(x, s, bias) -> (y, am, t): the integer output am needs no
    gradient; the by-value s and the integer bias get none; t's cotangent,
    which stats_bwd takes by value, is applied by linearity (the kernel
    with 1.0, scaled by the cotangent tensor) so that the backward never
    reads the GPU from the host."""
    lib, ops, calls = grad_lib()
    x, s = cuda(32, 100), 0.75
    bias = torch.randint(-3, 4, (32, 1), device="cuda")
    ones, zeros = torch.ones_like(x), torch.zeros_like(x)

    def backward(loss_of):
        xl = leaf(x)
        y, am, t = ops["stats"](xl, s, bias)
        assert am.dtype == torch.int64 and not am.requires_grad, am
        assert t.shape == () and t.requires_grad and y.requires_grad
        del calls[:]
        loss_of(y, t).backward()
        torch.cuda.synchronize()
        return xl.grad, list(calls)

    grad, ran = backward(lambda y, t: y.sum())
    assert ran == ["stats_bwd"], ran
    same("y.sum(): x.grad", grad, lib.stats_bwd(x, s, bias, ones, 0.0)[0])
    grad, ran = backward(lambda y, t: 3 * t)
    assert ran == ["stats_bwd"], ran
    close("3 t: x.grad", grad, lib.stats_bwd(x, s, bias, zeros, 3.0)[0], 1e-6, 1e-6)
    close("3 t: x.grad against 6 s x", grad, 6 * s * x, 1e-6, 1e-6)
    grad, ran = backward(lambda y, t: y.sum() + t)
    assert ran == ["stats_bwd", "stats_bwd"], ran
    close("y.sum() + t: x.grad", grad, lib.stats_bwd(x, s, bias, ones, 1.0)[0], 1e-6, 1e-6)


integer_and_rank0_outputs_and_by_value_inputs.skip = no_custom_op


@test
def compiled_forward_and_backward():
    """torch.compile(fullgraph=True): AOTAutograd traces the backward through
    the gradient operators' fake implementations; the compiled backward runs
    the gradient kernels and gives the eager gradients."""
    lib, ops, calls = grad_lib()
    x, w, g = cuda(64, 256), torch.rand(256, device="cuda") + 0.5, cuda(64, 256)

    def loss_fn(x, w, g):
        return (torch.ops.tecc_grad_test.rmsnorm(x, w) * g).sum()

    explanation = torch._dynamo.explain(loss_fn)(leaf(x), leaf(w), g)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1, explanation
    xe, we = leaf(x), leaf(w)
    loss_fn(xe, we, g).backward()
    xc, wc = leaf(x), leaf(w)
    compiled = torch.compile(loss_fn, fullgraph=True)
    loss = compiled(xc, wc, g)
    del calls[:]
    loss.backward()
    torch.cuda.synchronize()
    assert calls == ["rmsnorm_bwd"], calls
    close("compiled x.grad", xc.grad, xe.grad, 1e-6, 1e-7)
    close("compiled w.grad", wc.grad, we.grad, 1e-6, 1e-6)

    def stats_loss(x, bias):  # s a constant of the graph, not an input
        y, am, t = torch.ops.tecc_grad_test.stats(x, 0.5, bias)
        return y.sum() + 2 * t

    bias = torch.randint(-3, 4, (64, 1), device="cuda")
    xe, xc = leaf(x), leaf(x)
    stats_loss(xe, bias).backward()
    torch.compile(stats_loss, fullgraph=True)(xc, bias).backward()
    torch.cuda.synchronize()
    close("compiled stats x.grad (a rank-0 cotangent)", xc.grad, xe.grad, 1e-6, 1e-6)


compiled_forward_and_backward.skip = no_custom_op


@test
def cuda_graph_of_forward_and_backward():
    """The forward and loss.backward() captured in one CUDA graph and
    replayed on new inputs give the gradient kernel's results for them."""
    lib, ops, calls = grad_lib()
    x, w = leaf(cuda(64, 256)), leaf(torch.rand(256, device="cuda") + 0.5)
    g = cuda(64, 256)

    def step():
        (ops["rmsnorm"](x, w) * g).sum().backward()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up outside the capture
            x.grad = w.grad = None
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    x.grad = w.grad = None  # allocated from the graph's pool in the capture
    with torch.cuda.graph(graph):
        step()
    with torch.no_grad():
        x.copy_(cuda(64, 256))
        w.copy_(torch.rand(256, device="cuda") + 0.5)
        g.copy_(cuda(64, 256))
    del calls[:]
    graph.replay()
    torch.cuda.synchronize()
    assert calls == [], calls  # the replay runs no Python
    dx, dw = lib.rmsnorm_bwd(x.detach(), w.detach(), g)
    torch.cuda.synchronize()
    same("replayed x.grad", x.grad, dx)
    same("replayed w.grad", w.grad, dw)


cuda_graph_of_forward_and_backward.skip = no_custom_op


@test
def second_derivative_through_a_gradient_of_a_gradient():
    """cube_bwd2 = grad(cube_bwd): create_graph=True and a second backward
    run tecc's kernels all the way (d2/dx2 of x^3 is 6x)."""
    lib, ops, calls = grad_lib()
    x = leaf(cuda(1000))
    del calls[:]
    y = ops["cube"](x)
    gx, = torch.autograd.grad(y.sum(), x, create_graph=True)
    close("first derivative", gx, 3 * x.detach() ** 2, 1e-5, 1e-6)
    gx.sum().backward()
    torch.cuda.synchronize()
    assert calls == ["cube", "cube_bwd", "cube_bwd2"], calls
    close("second derivative", x.grad, 6 * x.detach(), 1e-5, 1e-6)


second_derivative_through_a_gradient_of_a_gradient.skip = no_custom_op


@test
def opcheck_with_gradients():
    """torch.library.opcheck with inputs that need gradients: the schema,
    the fake implementation and the autograd registration, eager against
    AOTAutograd with dynamic shapes."""
    lib, ops, calls = grad_lib()
    x, w = leaf(cuda(8, 32)), leaf(torch.rand(32, device="cuda") + 0.5)
    torch.library.opcheck(torch.ops.tecc_grad_test.rmsnorm.default, (x, w))
    bias = torch.randint(-3, 4, (8, 1), device="cuda")
    torch.library.opcheck(torch.ops.tecc_grad_test.stats.default, (leaf(cuda(8, 32)), 0.5, bias))


opcheck_with_gradients.skip = no_custom_op


@test
def build_follows_the_device_and_caches():
    """tecc.build() with no arch: nvcc's -arch and tecc's --arch are the
    device's sm_XY; a second build comes from the cache, without nvcc."""
    te = os.path.join(WORK, "twice_gpu.te")
    with open(te, "w") as f:
        f.write("x: f32[N]\ny = x * 2\n")
    arch = "sm_%d%d" % torch.cuda.get_device_capability()
    so, h = tecc.build(te, nvcc=os.environ.get("NVCC") or tecc.find_nvcc())
    with open(os.path.join(os.path.dirname(so), "recipe.json")) as f:
        recipe = json.load(f)
    assert recipe["arch"] == arch and "--arch=" + arch in recipe["tecc_options"], recipe
    assert "-arch=" + arch in recipe["nvcc_flags"], recipe
    before = os.stat(so).st_mtime_ns
    started = time.perf_counter()
    again = tecc.build(te, nvcc=os.environ.get("NVCC") or tecc.find_nvcc())
    seconds = time.perf_counter() - started
    assert again == (so, h) and os.stat(so).st_mtime_ns == before, again
    print("# second build, from the cache: %.1f ms" % (seconds * 1e3))
    x = cuda(1000)
    assert torch.equal(tecc.load(so, h).twice_gpu(x), 2 * x)


def main():
    os.makedirs(WORK, exist_ok=True)
    return taprun.run(tests, lambda fn: getattr(fn, "skip", lambda: "")())


sys.exit(main())
