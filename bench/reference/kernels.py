#!/usr/bin/env python3
"""Outside reference for `cfp profile --kernels`: the same kernels timed with PyTorch on the same GPU.

`cfp profile MODEL --kernels --json > cases.json` lists the kernels of MODEL's training step on one
GPU (every distinct GEMM shape of a layer and of the head, forward and backward; streaming copies;
the attention core as one flash kernel, forward and backward), each with the cost model's price and,
where the profiler has such a kernel, its own measurement (cuBLASLt GEMMs, its memory kernel). This
script times each case as PyTorch runs it:

  matmul          torch.matmul on bf16 operands [batch,] m x k and k x n
  copy            dst.copy_(src), src and dst of half the bytes each
  sdpa_forward    torch.nn.functional.scaled_dot_product_attention on [b, h, s, d], with the flash
                  backend (SDPBackend.FLASH_ATTENTION, FlashAttention-2) and cuDNN's
                  (SDPBackend.CUDNN_ATTENTION); the row's `backend` is the one compared (cudnn for
                  --attention flash, flash for flash2); the same shape without the mask beside it
  sdpa_backward   forward plus backward (out.backward) less the forward

Times are CUDA-event medians over rounds of back-to-back launches after warm-ups. It prints the table
(model, cfp's measurement, PyTorch's, and model / PyTorch) and writes it with --json.

With --attention-sweep it times scaled_dot_product_attention alone (flash and cuDNN backends,
causal and not, forward and backward) over sequence lengths at a fixed 16384 tokens, 32 heads of
128, and writes effective TFLOP/s (the causal ones counting half the s x s work).

Usage: python3 bench/reference/kernels.py --cases cases.json [--json out.json] [--rounds 5] [--runs 10]
       python3 bench/reference/kernels.py --attention-sweep [--json out.json]
Needs a CUDA GPU and torch >= 2.3 (torch.nn.attention.sdpa_kernel).
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, rounds, runs, warmups=3):
    """Median over `rounds` of the mean seconds of `runs` back-to-back calls of fn()."""
    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(runs):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / runs)
    return statistics.median(samples)


DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "fp32": torch.float32}


def time_matmul(g, rounds, runs):
    dt = DTYPES.get(g["dtype"], torch.bfloat16)
    shape_a = (g["batch"], g["m"], g["k"]) if g["batch"] > 1 else (g["m"], g["k"])
    shape_b = (g["batch"], g["k"], g["n"]) if g["batch"] > 1 else (g["k"], g["n"])
    a = torch.randn(shape_a, device="cuda", dtype=dt)
    b = torch.randn(shape_b, device="cuda", dtype=dt)
    out = torch.empty(shape_a[:-1] + (g["n"],), device="cuda", dtype=dt)
    t = timed(lambda: torch.matmul(a, b, out=out), rounds, runs)
    del a, b, out
    return t


def time_copy(nbytes, rounds, runs):
    n = nbytes // 2 // 4
    src = torch.randn(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src), rounds, runs)
    del src, dst
    return t


def time_sdpa(a, backend, causal, rounds, runs):
    """(forward seconds, backward seconds) of one backend, or None where it does not run."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dt = DTYPES.get(a["dtype"], torch.bfloat16)
    shape_q = (a["batch"], a["heads"], a["seq"], a["head_dim"])
    shape_k = (a["batch"], a["heads"], a["key_seq"], a["head_dim"])
    q = torch.randn(shape_q, device="cuda", dtype=dt, requires_grad=True)
    k = torch.randn(shape_k, device="cuda", dtype=dt, requires_grad=True)
    v = torch.randn(shape_k, device="cuda", dtype=dt, requires_grad=True)
    grad = torch.randn(shape_q, device="cuda", dtype=dt)
    chosen = getattr(SDPBackend, backend)
    try:
        with sdpa_kernel([chosen]):
            def forward():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            def both():
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                out.backward(grad)

            fwd = timed(forward, rounds, runs)
            total = timed(both, rounds, runs)
    except RuntimeError as e:
        print(f"  {backend} does not run {shape_q}: {str(e).splitlines()[0]}", file=sys.stderr)
        return None
    finally:
        del q, k, v, grad
    return fwd, max(0.0, total - fwd)


def attention_sweep(args):
    if not torch.cuda.is_available():
        sys.exit("kernels.py: no CUDA device")
    rows = []
    print(f"scaled_dot_product_attention on {torch.cuda.get_device_name(0)}, torch {torch.__version__}: 16384 tokens, 32 heads")
    print(f"{'d':>4} {'s':>6} {'b':>3} {'backend':8} {'mask':7} {'fwd ms':>8} {'bwd ms':>8} {'fwd TF/s':>9} {'bwd TF/s':>9}")
    for d in (128, 64):
        for s in ((1024, 2048, 4096, 8192, 16384) if d == 128 else (2048, 8192)):
            b = 16384 // s
            a = {"batch": b, "heads": 32, "seq": s, "key_seq": s, "head_dim": d, "dtype": "bf16"}
            full = 4.0 * b * 32 * s * s * d  # Q.K^T and P.V
            for backend in ("FLASH_ATTENTION", "CUDNN_ATTENTION"):
                for causal in (True, False):
                    t = time_sdpa(a, backend, causal, args.rounds, args.runs)
                    work = full * (0.5 if causal else 1.0)
                    row = dict(a, backend=backend, causal=causal, forward_seconds=None if t is None else t[0],
                               backward_seconds=None if t is None else t[1])
                    rows.append(row)
                    if t is None:
                        continue
                    print(f"{d:>4} {s:>6} {b:>3} {backend.split('_')[0].lower():8} {'causal' if causal else 'none':7} {t[0] * 1e3:8.3f} "
                          f"{t[1] * 1e3:8.3f} {work / t[0] / 1e12:9.1f} {2.5 * work / t[1] / 1e12:9.1f}")
                    torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", help="JSON from `cfp profile MODEL --kernels --json`")
    ap.add_argument("--attention-sweep", action="store_true", help="time SDPA alone over sequence lengths")
    ap.add_argument("--json", help="write the table here")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    if args.attention_sweep:
        return attention_sweep(args)
    if not args.cases:
        ap.error("--cases or --attention-sweep")
    with open(args.cases) as f:
        cases = json.load(f)
    if not torch.cuda.is_available():
        sys.exit("kernels.py: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.cuda.get_device_name(0)
    print(f"{cases['model']} kernels, model '{cases['hardware_spec']}' vs cfp ({cases['devices']}) vs PyTorch {torch.__version__} on {device}")

    sdpa_cache = {}
    rows = []
    for c in cases["kernels"]:
        row = {k: c.get(k) for k in ("group", "name", "shape", "reference", "predicted_seconds", "measured_seconds", "flops", "bytes")}
        row["torch_seconds"] = None
        try:
            if c["reference"] == "matmul":
                row["torch_seconds"] = time_matmul(c["gemm"], args.rounds, args.runs)
            elif c["reference"] == "copy":
                row["torch_seconds"] = time_copy(c["copy_bytes"], args.rounds, args.runs)
            elif c["reference"] in ("sdpa_forward", "sdpa_backward"):
                a = c["attention"]
                key = json.dumps(a, sort_keys=True)
                if key not in sdpa_cache:
                    timings = {}
                    for backend in ("FLASH_ATTENTION", "CUDNN_ATTENTION"):
                        for causal in sorted({a["causal"], False}, reverse=True):
                            timings[(backend, causal)] = time_sdpa(a, backend, causal, args.rounds, args.runs)
                    sdpa_cache[key] = timings
                timings = sdpa_cache[key]
                part = 0 if c["reference"] == "sdpa_forward" else 1
                for (backend, causal), t in timings.items():
                    name = backend.split("_")[0].lower() + ("" if causal == a["causal"] else "_no_mask")
                    row[f"torch_{name}_seconds"] = None if t is None else t[part]
                # The backend the row's kernel stands for: cudnn for --attention flash (the default
                # on Hopper), flash (FlashAttention-2) for --attention flash2.
                chosen = timings[("CUDNN_ATTENTION" if c.get("backend") == "cudnn" else "FLASH_ATTENTION", a["causal"])]
                row["torch_seconds"] = None if chosen is None else chosen[part]
        except RuntimeError as e:
            row["error"] = str(e).splitlines()[0]
        rows.append(row)
        torch.cuda.empty_cache()

    def ms(v):
        return "-" if v is None else f"{v * 1e3:.4f}"

    print(f"{'group':10} {'kernel':58} {'shape':34} {'model ms':>10} {'cfp ms':>10} {'torch ms':>10} {'model/torch':>11}")
    ratios = []
    for r in rows:
        t = r["torch_seconds"]
        ratio = "-" if not t else f"{r['predicted_seconds'] / t:.2f}"
        if t:
            ratios.append((r["predicted_seconds"] / t, r["name"] + " " + r["shape"]))
        print(f"{r['group']:10} {r['name'][:58]:58} {r['shape'][:34]:34} {ms(r['predicted_seconds']):>10} "
              f"{ms(r['measured_seconds']):>10} {ms(t):>10} {ratio:>11}")
        extra = {k: v for k, v in r.items() if k.startswith("torch_") and k != "torch_seconds"}
        if extra:
            print(" " * 11 + "  ".join(f"{k[6:-8]} {ms(v)} ms" for k, v in extra.items()))
    if ratios:
        errors = sorted(abs(x - 1) for x, _ in ratios)
        worst = max(ratios, key=lambda p: abs(p[0] - 1))
        print(f"model vs PyTorch ({len(ratios)} kernels): median error {100 * statistics.median(errors):.1f}%, "
              f"worst {100 * abs(worst[0] - 1):.1f}% ({worst[1]}: model/torch {worst[0]:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "model": cases["model"], "hardware_spec": cases["hardware_spec"],
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
