"""GPU test of the 8-bit casts (language.md §9.4) against PyTorch: tecc's
f8e4m3() and f8e5m2() must give the bits of x.to(torch.float8_e4m3fn) and
x.to(torch.float8_e5m2) for every f16 and bf16 bit pattern, 10^8 random f32
bit patterns and the special values (ties, overflow thresholds,
subnormals, infinities, NaNs of both signs), and from f64; f8 -> f32 must
decode every code as PyTorch does; i8() and u8() truncate and saturate a
float (NaN gives 0) and wrap an integer.  Prints TAP; skips without torch,
a GPU, or PyTorch's float8 dtypes.

usage: test_casts8_gpu.py TOP_SRCDIR WORKDIR   (env: NVCC, TECC)
"""

import os
import sys

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402

torch = taprun.torch_on_gpu()
if not hasattr(torch, "float8_e4m3fn"):
    print("1..0 # SKIP this PyTorch has no float8 dtypes")
    sys.exit(0)

import tecc  # noqa: E402

E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
RANDOM_F32 = 10 ** 8
CHUNK = 1 << 25

KERNELS = """
kernel to8(x: f32[N]) -> (a: f8e4m3[N], b: f8e5m2[N], i: i8[N], u: u8[N], ra: f32[N], rb: f32[N]) {
    a = f8e4m3(x)
    b = f8e5m2(x)
    i = i8(x)
    u = u8(x)
    ra = f32(f8e4m3(x))
    rb = f32(f8e5m2(x))
}
kernel to8_bf16(x: bf16[N]) -> (a: f8e4m3[N], b: f8e5m2[N]) {
    a = f8e4m3(x)
    b = f8e5m2(x)
}
kernel to8_f16(x: f16[N]) -> (a: f8e4m3[N], b: f8e5m2[N]) {
    a = f8e4m3(x)
    b = f8e5m2(x)
}
kernel to8_f64(x: f64[N]) -> (a: f8e4m3[N], b: f8e5m2[N]) {
    a = f8e4m3(x)
    b = f8e5m2(x)
}
kernel from8(a: f8e4m3[N], b: f8e5m2[N]) -> (fa: f32[N], fb: f32[N]) {
    fa = f32(a)
    fb = f32(b)
}
kernel wrap8(x: i32[N]) -> (i: i8[N], u: u8[N]) {
    i = i8(x)
    u = u8(x)
}
"""

tests = []
LIB = []


def test(fn):
    tests.append(fn)
    return fn


def lib():
    if not LIB:
        te = os.path.join(WORK, "casts8.te")
        with open(te, "w") as f:
            f.write(KERNELS)
        LIB.append(tecc.load(*tecc.build(te, nvcc=os.environ.get("NVCC") or tecc.find_nvcc())))
    return LIB[0]


def bits(t):
    return t.contiguous().view(-1).view(torch.uint8)


def same(what, got, want, x):
    """got and want bit for bit; the first differing inputs in the message."""
    bad = (bits(got) != bits(want)).nonzero().view(-1)
    if bad.numel():
        j = bad[:5]
        raise AssertionError("%s: %d of %d differ; x %s got %s want %s" % (
            what, bad.numel(), x.numel(), x[j].tolist(), bits(got)[j].tolist(), bits(want)[j].tolist()))


def same_values(what, got, want):
    """Floats equal, NaN where NaN."""
    ok = (got == want) | (got.isnan() & want.isnan())
    if not bool(ok.all()):
        j = (~ok).nonzero().view(-1)[:5]
        raise AssertionError("%s: %d differ; got %s want %s" % (what, int((~ok).sum()), got[j].tolist(),
                                                                 want[j].tolist()))


def saturated(x, lo, hi, dtype):
    """i32()'s rule for a narrower integer: truncate, saturate, NaN 0."""
    return torch.where(x.isnan(), torch.zeros_like(x), x.clamp(lo, hi).trunc()).to(dtype)


def check_f32(x):
    a, b, i, u, ra, rb = lib().to8(x)
    want_a, want_b = x.to(E4), x.to(E5)
    same("f8e4m3(f32)", a, want_a, x)
    same("f8e5m2(f32)", b, want_b, x)
    same("i8(f32)", i, saturated(x.double(), -128, 127, torch.int8), x)
    same("u8(f32)", u, saturated(x.double(), 0, 255, torch.uint8), x)
    same_values("f32(f8e4m3(f32))", ra, want_a.float())
    same_values("f32(f8e5m2(f32))", rb, want_b.float())


def special_f32():
    """Ties and thresholds of both formats, their neighbours, both signs."""
    v = [0.0, 448.0, 464.0, 480.0, 57344.0, 61440.0, 65536.0, 2.0 ** -6, 2.0 ** -9, 2.0 ** -10,
         1.5 * 2.0 ** -9, 2.0 ** -14, 2.0 ** -16, 2.0 ** -17, 3.0 * 2.0 ** -17, 1.0 + 2.0 ** -4,
         1.0 + 3 * 2.0 ** -4, 1.0 + 2.0 ** -3, 1.0 + 2.0 ** -2 + 2.0 ** -3, 127.5, 128.0, 255.5, 256.0,
         -0.5, 1e-45, 1.17549435e-38, 3.4028235e38, float("inf"), float("nan")]
    x = torch.tensor(v, dtype=torch.float32, device="cuda")
    near = torch.cat([x, torch.nextafter(x, torch.full_like(x, float("inf"))),
                      torch.nextafter(x, torch.zeros_like(x))])
    return torch.cat([near, -near])


@test
def f32_specials():
    check_f32(special_f32())


@test
def f32_random_bit_patterns():
    g = torch.Generator(device="cuda").manual_seed(49)
    done = 0
    while done < RANDOM_F32:
        n = min(CHUNK, RANDOM_F32 - done)
        x = torch.randint(-2 ** 31, 2 ** 31, (n,), dtype=torch.int64, device="cuda", generator=g)
        check_f32(x.to(torch.int32).view(torch.float32))
        done += n
    print("# %d random f32 bit patterns" % done)


def every_16bit(dtype):
    return torch.arange(-2 ** 15, 2 ** 15, dtype=torch.int32, device="cuda").to(torch.int16).view(dtype)


def check_every_16bit(dtype, name):
    x = every_16bit(dtype)
    a, b = getattr(lib(), "to8_" + name)(x)
    same("f8e4m3(%s)" % name, a, x.to(E4), x)
    same("f8e5m2(%s)" % name, b, x.to(E5), x)


@test
def every_bf16_pattern():
    check_every_16bit(torch.bfloat16, "bf16")


@test
def every_f16_pattern():
    check_every_16bit(torch.float16, "f16")


@test
def f64_through_f32():
    """PyTorch rounds a double to float first: values just off an f8 tie
    in f64 that f32 rounds onto it."""
    g = torch.Generator(device="cuda").manual_seed(64)
    x = torch.randn(1 << 22, dtype=torch.float64, device="cuda", generator=g) * 100
    ties = special_f32().double()
    x = torch.cat([x, ties, ties + ties.abs() * 2.0 ** -30, ties - ties.abs() * 2.0 ** -30])
    a, b = lib().to8_f64(x)
    same("f8e4m3(f64)", a, x.to(E4), x)
    same("f8e5m2(f64)", b, x.to(E5), x)


@test
def every_code_decodes():
    codes = torch.arange(256, dtype=torch.int32, device="cuda").to(torch.uint8)
    fa, fb = lib().from8(codes.view(E4), codes.view(E5))
    same_values("f32(f8e4m3)", fa, codes.view(E4).float())
    same_values("f32(f8e5m2)", fb, codes.view(E5).float())
    same("f32(f8e4m3) signs", fa.signbit(), codes.view(E4).float().signbit(), codes)


@test
def integers_wrap():
    x = torch.tensor([0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 2 ** 31 - 1, -2 ** 31],
                     dtype=torch.int32, device="cuda")
    i, u = lib().wrap8(x)
    same("i8(i32)", i, x.to(torch.int8), x)
    same("u8(i32)", u, x.to(torch.uint8), x)


def main():
    os.makedirs(WORK, exist_ok=True)
    return taprun.run(tests)


sys.exit(main())
