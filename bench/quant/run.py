"""bench/quant/run.py — quantization to 8 bits and back (language.md §8.4)
against the same functions in PyTorch, eager and torch.compile: fp8 e4m3
per row, per 1 x 128 block and per tensor, a dequantization fused into
the next RMSNorm, and symmetric int8 per row.

    python3 bench/quant/run.py [--lib K.so --header K.h] [--out DIR]

The scales must be within 2 f32 ulp of PyTorch's (tecc divides by 448
where eager PyTorch multiplies by its reciprocal), the 8-bit values within
one step of theirs (x / s is x times 1 / s in tecc, abi.md section 6, so a
value at a rounding tie may go the other way; tecc's casts themselves are
PyTorch's bit for bit, tests/python/casts8_gpu.sh), and the RMSNorm's bf16
output within bf16's rounding.  The check reports how many 8-bit values
differ at all.  Timing as bench/peers.py says (CUDA events against the
ceiling, and kernel time).

The per-tensor case's ceiling counts x read twice: its one scale depends
on every element, and x (64 and 224 MB) does not fit in the L2 cache, so
every implementation reads it once for the scale and once for the cast.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from peers import Case, close, run  # noqa: E402

SHAPES = [(8192, 4096), (8192, 14336)]
E4M3_MAX = 448.0


def cases(torch, lib):
    f8 = torch.float8_e4m3fn
    dev = "cuda"
    out = []

    def within_a_step(a, b, step):
        """(ok, how many differ) of 8-bit values: equal or NaN alike, else
        at most one step apart (step(b): the step at b)."""
        af, bf = a.float().view(-1), b.float().view(-1)
        same = (af == bf) | (af.isnan() & bf.isnan())
        near = (af - bf).abs() <= step(bf.abs())
        return bool((same | near).all()), float((~same).sum())

    def f8_step(m):  # e4m3: 3 mantissa bits; subnormals 2^-9 apart
        return torch.clamp(m, min=2.0 ** -6) * 0.125

    def int_step(m):
        return torch.ones_like(m)

    def make_x(n, d, seed):
        g = torch.Generator(device=dev).manual_seed(seed)
        return (torch.randn(n, d, device=dev, generator=g).to(torch.bfloat16),)

    def quant_torch(x, dim=-1):
        xf = x.float()
        s = xf.abs().amax(dim, keepdim=True) / E4M3_MAX
        return (xf / s).to(f8), s

    def quant_tensor_torch(x):
        xf = x.float()
        s = xf.abs().amax() / E4M3_MAX
        return (xf / s).to(f8), s

    def quant_i8_torch(x):
        xf = x.float()
        s = xf.abs().amax(-1, keepdim=True) / 127.0
        return (xf / s).round().clamp(-128, 127).to(torch.int8), s

    def dequant_rms_torch(q, s, w):
        h = q.float() * s
        return (h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)

    def check_pair(a, b, step=f8_step):
        ok_q, nq = within_a_step(a[0], b[0], step)
        ok_s, _ = close(a[1].reshape(b[1].shape), b[1], 0.0, 2.5e-7)
        return ok_q and ok_s, nq

    def check_i8(a, b):
        return check_pair(a, b, int_step)

    for n, d in SHAPES:
        shape = "%dx%d" % (n, d)
        one_pass = n * d * 2 + n * d + n * 4
        out.append(Case("quant row f8", shape, one_pass, lambda n=n, d=d: make_x(n, d, 1),
                        lambda x: lib.quant_row(x), quant_torch, check_pair))

        g = d // 128

        def make_blocks(n=n, d=d, g=g):
            return (make_x(n, d, 2)[0].view(n, g, 128),)
        out.append(Case("quant block f8", "%dx%dx128" % (n, g), n * d * 2 + n * d + n * g * 4, make_blocks,
                        lambda x: lib.quant_block(x), quant_torch, check_pair))
        out.append(Case("quant tensor f8", shape, 2 * n * d * 2 + n * d + 4, lambda n=n, d=d: make_x(n, d, 3),
                        lambda x: lib.quant_tensor(x), quant_tensor_torch, check_pair))

        def make_deq(n=n, d=d):
            (x,) = make_x(n, d, 4)
            q, s = quant_torch(x)
            w = torch.randn(d, device=dev, generator=torch.Generator(device=dev).manual_seed(5))
            return q, s, w.to(torch.bfloat16)
        out.append(Case("dequant rmsnorm", shape, n * d + n * 4 + d * 2 + n * d * 2, make_deq,
                        lambda q, s, w: lib.dequant_rmsnorm(q, s, w), dequant_rms_torch,
                        lambda a, b: close(a, b, 1e-2, 1e-2)))
        out.append(Case("quant row i8", shape, one_pass, lambda n=n, d=d: make_x(n, d, 6),
                        lambda x: lib.quant_i8(x), quant_i8_torch, check_i8))
    return out


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:], HERE, cases, table="quant"))
