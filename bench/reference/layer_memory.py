#!/usr/bin/env python3
"""Outside reference for cfp's activation memory and layer time: a Llama-3.1-8B-shaped model in
plain PyTorch (torchtitan's layout: separate wq/wk/wv, RMSNorm, SwiGLU, complex RoPE, grouped KV
repeated before scaled_dot_product_attention, cross-entropy on the fp32 logits), run on one GPU
with three activation-checkpointing policies:

  none  nothing recomputed
  op    per-op selective checkpointing as torchtitan's selective_ac_option="op" runs it: the
        outputs of mm (every second one recomputed, counting per layer from the first) and of the
        flash attention kernel are saved, everything else in the layer is recomputed
  full  each layer checkpointed as a whole (its input kept)

For each policy it builds the model with L1 and L2 layers and measures (torch.cuda memory stats,
after a warm-up step) what the forward leaves allocated and the peak of the step; the difference
per layer is the layer's saved activations, printed in units of s·b·h bytes (Korthikanti et al.'s
unit). The loss's own peak is the step's peak above the activations and gradients. It also times
forward+backward per layer with CUDA events.

Usage: python3 bench/reference/layer_memory.py [--seq 8192] [--batch 2] [--layers 1 4] [--sdpa flash|cudnn|efficient]
       [--policies none op full] [--json F]
Needs a CUDA GPU and torch >= 2.4 (torch.utils.checkpoint.create_selective_checkpoint_contexts).
"""
import argparse
import json
import sys
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


def rope_table(head_dim, seq, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(seq).float()
    return torch.polar(torch.ones(seq, head_dim // 2), torch.outer(t, freqs))


def rope(x, table):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * table.view(1, table.shape[0], 1, table.shape[1])).flatten(3)
    return out.type_as(x)


class Block(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv_heads, h // heads
        self.wq = nn.Linear(h, heads * self.hd, bias=False)
        self.wk = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, h, bias=False)
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)
        self.attention_norm = RMSNorm(h)
        self.ffn_norm = RMSNorm(h)
        self.backend = "flash"

    def attention(self, x, table):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.hd)
        k = self.wk(x).view(b, s, self.kv, self.hd)
        v = self.wv(x).view(b, s, self.kv, self.hd)
        q, k = rope(q, table), rope(k, table)
        rep = self.heads // self.kv
        k = k[:, :, :, None, :].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
        v = v[:, :, :, None, :].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(getattr(SDPBackend, BACKENDS[self.backend])):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(o.transpose(1, 2).contiguous().view(b, s, -1))

    def forward(self, x, table):
        h = x + self.attention(self.attention_norm(x), table)
        n = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(n)) * self.w3(n))


SAVE = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
}
BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION"}


def op_policy_context():
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    count = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            count[key] += 1
        save = func in SAVE and not (func == torch.ops.aten.mm.default and count[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class Model(nn.Module):
    def __init__(self, layers, h, heads, kv_heads, ffn, vocab, seq, policy):
        super().__init__()
        self.tok = nn.Embedding(vocab, h)
        self.layers = nn.ModuleList(Block(h, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(h)
        self.output = nn.Linear(h, vocab, bias=False)
        self.register_buffer("table", rope_table(h // heads, seq), persistent=False)
        self.policy = policy

    def use(self, backend):
        for layer in self.layers:
            layer.backend = backend
        return self

    def bf16(self):
        """bf16 weights; the RoPE table stays complex (a plain .to() would drop its imaginary part)."""
        table = self.table
        self.to(torch.bfloat16)
        self.table = table
        return self

    def forward(self, ids):
        from torch.utils.checkpoint import checkpoint

        x = self.tok(ids)
        for layer in self.layers:
            if self.policy == "none":
                x = layer(x, self.table)
            elif self.policy == "full":
                x = checkpoint(layer, x, self.table, use_reentrant=False, preserve_rng_state=False)
            else:
                x = checkpoint(layer, x, self.table, use_reentrant=False, preserve_rng_state=False,
                               context_fn=op_policy_context)
        return self.output(self.norm(x))


def measure(policy, layers, a):
    torch.manual_seed(0)
    model = Model(layers, a.hidden, a.heads, a.kv_heads, a.ffn, a.vocab, a.seq, policy).cuda().bf16().use(a.sdpa)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    labels = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    out = {}
    times = []
    for step in range(a.steps + 1):
        model.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        pred = model(ids)
        torch.cuda.synchronize()
        after_forward = torch.cuda.memory_allocated() - base
        loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
        del pred
        loss.backward()
        end.record()
        torch.cuda.synchronize()
        if step > 0:
            times.append(start.elapsed_time(end))
        out = {
            "after_forward_bytes": after_forward,
            "peak_bytes": torch.cuda.max_memory_allocated() - base,
            "params_bytes": base,
            "reserved_peak_bytes": torch.cuda.max_memory_reserved(),
        }
    out["step_ms"] = sorted(times)[len(times) // 2]
    del model
    torch.cuda.empty_cache()
    return out


def gemm_table(a):
    """Achieved bf16 TFLOP/s of the layer's GEMMs (tokens x in -> out), forward shapes."""
    m = a.seq * a.batch
    rows = []
    for k, n in ((a.hidden, a.hidden), (a.hidden, a.hidden * a.kv_heads // a.heads), (a.hidden, a.ffn), (a.ffn, a.hidden),
                 (a.hidden, a.vocab)):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            x @ w
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        reps = 20
        start.record()
        for _ in range(reps):
            x @ w
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end) / reps
        rows.append({"m": m, "k": k, "n": n, "ms": ms, "tflops": 2 * m * k * n / ms / 1e9})
        print(f"gemm {m}x{k}x{n}: {ms:.3f} ms, {rows[-1]['tflops']:.0f} TFLOP/s")
        del x, w
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--ffn", type=int, default=14336)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--layers", type=int, nargs=2, default=[1, 4])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--policies", nargs="+", default=["none", "op", "full"])
    p.add_argument("--sdpa", choices=sorted(BACKENDS), default="flash", help="attention backend (torchtitan 2024-12: flash)")
    p.add_argument("--json")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("layer_memory: no CUDA device", file=sys.stderr)
        return 1
    sbh = a.seq * a.batch * a.hidden
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "sdpa": a.sdpa, "seq": a.seq, "batch": a.batch,
              "hidden": a.hidden, "layers": a.layers, "policies": {}}
    print(f"{result['device']}, torch {torch.__version__}, sdpa {a.sdpa}; s={a.seq} b={a.batch} h={a.hidden}, layers {a.layers}")
    print("policy | saved per layer (sbh bytes) | forward left, L1 (GiB) | peak above forward, L1 (GiB) | "
          "fwd+bwd per layer (ms) | step L1 (ms)")
    for policy in a.policies:
        lo, hi = (measure(policy, n, a) for n in a.layers)
        per_layer = (hi["after_forward_bytes"] - lo["after_forward_bytes"]) / (a.layers[1] - a.layers[0])
        layer_ms = (hi["step_ms"] - lo["step_ms"]) / (a.layers[1] - a.layers[0])
        gib = 1 << 30
        row = {"low": lo, "high": hi, "saved_per_layer_bytes": per_layer, "saved_per_layer_sbh": per_layer / sbh,
               "layer_ms": layer_ms}
        result["policies"][policy] = row
        print(f"{policy} | {per_layer / sbh:.2f} | {lo['after_forward_bytes'] / gib:.2f} | "
              f"{(lo['peak_bytes'] - lo['after_forward_bytes']) / gib:.2f} | {layer_ms:.2f} | {lo['step_ms']:.1f}")
    result["gemm"] = gemm_table(a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
