"""GPU tests of python/tecc's PyTorch path, against fixture.cu (hand-written
entry points following abi.md).  Prints TAP; skips without torch or a GPU.

usage: test_tecc_gpu.py TOP_SRCDIR WORKDIR   (env: NVCC)
"""

import json
import os
import subprocess
import sys
import time

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))
HERE = os.path.join(TOP, "tests", "python")

try:
    import torch
except ImportError:
    print("1..0 # SKIP python3 has no torch")
    sys.exit(0)
if not torch.cuda.is_available():
    print("1..0 # SKIP torch sees no GPU")
    sys.exit(0)

import tecc  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402

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
    return taprun.run(tests)


sys.exit(main())
