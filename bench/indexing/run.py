"""bench/indexing/run.py — the cases of positions, labels and layouts
(language.md §9.6-§9.9) against the same functions in PyTorch, eager and
torch.compile: cross-entropy with int64 labels (forward, and forward +
backward through `grad`), a causal softmax from positions beside one that
reads its mask, rotary embeddings from tables and from positions, and an
embedding lookup.

    python3 bench/indexing/run.py [--lib K.so --header K.h] [--out DIR]

Each case is checked against PyTorch, then timed as bench/peers.py says
(CUDA events against the ceiling, and kernel time).  Without --lib the
library is built from kernels.te with tecc.build().
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from peers import Case, close, run  # noqa: E402


def cases(torch, lib):
    F = torch.nn.functional
    dev = "cuda"
    out = []

    def gen(seed):
        return torch.Generator(device=dev).manual_seed(seed)

    # cross-entropy with labels: forward, forward + backward
    def ce_torch(l, t):
        return F.cross_entropy(l.float(), t[:, 0], reduction="none")

    for n, v in [(4096, 128256), (16384, 32000)]:
        def make(n=n, v=v):
            g = gen(n)
            return (torch.randn(n, v, device=dev, generator=g).mul_(3).to(torch.bfloat16),
                    torch.randint(0, v, (n, 1), device=dev, generator=g))
        out.append(Case("ce_labels fwd", "%dx%d" % (n, v), n * v * 2 + n * 8 + n * 4, make,
                        lambda l, t: lib.ce(l, t)[:, 0], ce_torch,
                        lambda a, b: close(a, b, 1e-3, 1e-3)))

        def tecc_step(l, t, dl):
            loss = lib.ce(l, t)
            return loss, lib.ce_bwd(l, t, dl)

        def torch_step(l, t, dl, fwd=ce_torch):
            x = l.detach().requires_grad_()
            loss = fwd(x, t)
            (g,) = torch.autograd.grad(loss, x, dl[:, 0])
            return loss, g

        def make_step(n=n, v=v, make=make):
            l, t = make()
            return l, t, torch.rand(n, 1, device=dev, generator=gen(n + 1))

        def check_step(a, b):
            ok1, w1 = close(a[0].view(-1), b[0], 1e-3, 1e-3)
            ok2, w2 = close(a[1], b[1], 2e-3, 1e-2)
            return ok1 and ok2, max(w1, w2)

        out.append(Case("ce_labels fwd+bwd", "%dx%d" % (n, v), 3 * n * v * 2 + 2 * n * 8 + 3 * n * 4,
                        make_step, tecc_step, torch_step, check_step, compile_fn="step"))

    # softmax with a causal mask: from positions, and read from memory
    b, s = 32, 2048

    def causal_torch(x):
        i = torch.arange(x.shape[-1], device=x.device)
        return torch.softmax(x.float().masked_fill(i[None, :] > i[:, None], float("-inf")), -1).to(x.dtype)

    def make_scores():
        return (torch.randn(b, s, s, device=dev, generator=gen(3)).to(torch.bfloat16),)

    out.append(Case("causal_softmax", "%dx%dx%d" % (b, s, s), 2 * b * s * s * 2, make_scores,
                    lambda x: lib.causal_softmax(x), causal_torch, lambda a, c: close(a, c, 1e-2, 1e-2)))

    def make_masked():
        (x,) = make_scores()
        m = torch.full((s, s), float("-inf"), device=dev).triu(1).to(torch.bfloat16)
        return x, m

    out.append(Case("masked_softmax", "%dx%dx%d" % (b, s, s), 2 * b * s * s * 2 + s * s * 2, make_masked,
                    lambda x, m: lib.masked_softmax(x, m),
                    lambda x, m: torch.softmax(x.float() + m.float(), -1).to(x.dtype),
                    lambda a, c: close(a, c, 1e-2, 1e-2)))

    # rotary embeddings of q and k [B, S, H, D]
    B, S, H, D = 8, 4096, 32, 128

    def rotate_half(x):
        return torch.cat((-x[..., D // 2:], x[..., :D // 2]), -1)

    def rope_torch(q, k, cos, sin):  # HF's apply_rotary_pos_emb, tables [S, 1, D]
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin

    def make_qk():
        g = gen(5)
        return (torch.randn(B, S, H, D, device=dev, generator=g).to(torch.bfloat16),
                torch.randn(B, S, H, D, device=dev, generator=g).to(torch.bfloat16))

    def tables():
        j = torch.arange(D, device=dev) % (D // 2)
        ang = torch.arange(S, device=dev)[:, None] * torch.exp(-2.0 * j / D * torch.log(torch.tensor(10000.0)))
        return ang.cos()[:, None, :].to(torch.bfloat16), ang.sin()[:, None, :].to(torch.bfloat16)

    def make_rope():
        return make_qk() + tables()

    def check_pair(a, c):
        r = [close(x, y, 2e-2, 2e-2) for x, y in zip(a, c)]
        return all(ok for ok, _ in r), max(w for _, w in r)

    qk_bytes = 4 * B * S * H * D * 2
    out.append(Case("rope tables", "%dx%dx%dx%d" % (B, S, H, D), qk_bytes + 2 * S * D * 2, make_rope,
                    lambda q, k, c, s_: lib.rope(q, k, c, s_), rope_torch, check_pair))

    def rope_pos_torch(q, k):
        j = torch.arange(D, device=q.device) % (D // 2)
        ang = torch.arange(S, device=q.device)[:, None, None] * torch.exp(-2.0 * j / D * 9.210340371976184)
        c, s_ = ang.cos(), ang.sin()
        qf, kf = q.float(), k.float()
        return ((qf * c + rotate_half(qf) * s_).to(q.dtype), (kf * c + rotate_half(kf) * s_).to(k.dtype))

    out.append(Case("rope positions", "%dx%dx%dx%d" % (B, S, H, D), qk_bytes, make_qk,
                    lambda q, k: lib.rope_pos(q, k), rope_pos_torch, check_pair))

    # embedding lookup
    V, DE = 128256, 4096
    table = torch.randn(V, DE, device=dev, generator=gen(7)).to(torch.bfloat16)
    for n in (8192, 32768):
        def make_ids(n=n):
            return table, torch.randint(0, V, (n, 1), device=dev, generator=gen(n + 7))
        out.append(Case("embedding", "%d of %dx%d" % (n, V, DE), 2 * n * DE * 2 + n * 8, make_ids,
                        lambda tb, ids: lib.embedding(tb, ids), lambda tb, ids: F.embedding(ids[:, 0], tb),
                        lambda a, c: (bool(torch.equal(a, c)), 0.0)))
    return out


def compiled(torch, case):
    if case.compile_fn == "step":  # forward + backward through AOTAutograd
        fwd = torch.compile(lambda l, t: torch.nn.functional.cross_entropy(l.float(), t[:, 0], reduction="none"),
                            dynamic=False)

        def step(l, t, dl):
            x = l.detach().requires_grad_()
            loss = fwd(x, t)
            (g,) = torch.autograd.grad(loss, x, dl[:, 0])
            return loss, g
        return step
    return torch.compile(case.eager, dynamic=False)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:], HERE, cases, compiled, "indexing"))
