# Training steps as JAX lowers them: a GPT with lax.scan over its layers and an optax AdamW update,
# a 12-layer BERT-style MLM step (layers unrolled), and a bf16 GPT layer stack with cuDNN fused
# attention (lowered on a GPU: the cuDNN custom-calls need one). Writes NAME.mlir (StableHLO, as
# `jax.jit(f).lower(...).as_text()`), NAME.hlo (the same as HLO text) and NAME.gpu_opt.hlo (XLA's
# optimised module) into the directory given. The files in tests/data/jax came from
#   python3 generate.py OUTDIR      (jax 0.11.2, optax 0.2.8, on an NVIDIA H200, 2026-11-27)
import os, sys, time, jax, jax.numpy as jnp, optax
out = sys.argv[1]
print("jax", jax.__version__, "optax", optax.__version__, jax.devices())
def ln(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + eps) * g + b
def attention(x, p, heads, causal, impl=None):
    B, S, D = x.shape; hd = D // heads
    qkv = x @ p["qkv_w"] + p["qkv_b"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    q, k, v = (t.reshape(B, S, heads, hd) for t in (q, k, v))
    if impl is not None:
        o = jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation=impl)
    else:
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd).astype(x.dtype)
        if causal:
            mask = jnp.tril(jnp.ones((S, S), bool)); s = jnp.where(mask, s, jnp.finfo(s.dtype).min)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v)
    return o.reshape(B, S, D) @ p["proj_w"] + p["proj_b"]
def mlp(x, p):
    return jax.nn.gelu(x @ p["fc1_w"] + p["fc1_b"]) @ p["fc2_w"] + p["fc2_b"]
def layer_params(key, D, F, dtype, L=None):
    ks = jax.random.split(key, 4); pre = () if L is None else (L,)
    n = lambda k, s: (0.02 * jax.random.normal(k, pre + s)).astype(dtype)
    z = lambda s: jnp.zeros(pre + s, dtype); o = lambda s: jnp.ones(pre + s, dtype)
    return {"ln1_g": o((D,)), "ln1_b": z((D,)), "qkv_w": n(ks[0], (D, 3 * D)), "qkv_b": z((3 * D,)),
            "proj_w": n(ks[1], (D, D)), "proj_b": z((D,)), "ln2_g": o((D,)), "ln2_b": z((D,)),
            "fc1_w": n(ks[2], (D, F)), "fc1_b": z((F,)), "fc2_w": n(ks[3], (F, D)), "fc2_b": z((D,))}
def xent(logits, targets):
    lp = jax.nn.log_softmax(logits.astype(jnp.float32), -1)
    return -jnp.take_along_axis(lp, targets[..., None], -1).mean()
def dump(name, step, args):
    t = time.time(); lowered = jax.jit(step).lower(*args)
    open(f"{out}/{name}.mlir", "w").write(lowered.as_text())
    open(f"{out}/{name}.hlo", "w").write(lowered.as_text(dialect="hlo"))
    try:
        open(f"{out}/{name}.gpu_opt.hlo", "w").write(lowered.compile().as_text())
    except Exception as e:
        print(name, "compile failed", repr(e)[:300])
    print(name, "lowered in %.1f s" % (time.time() - t), os.path.getsize(f"{out}/{name}.mlir"), "bytes of StableHLO")
opt = optax.adamw(3e-4, weight_decay=0.1)
def make_step(loss):
    def step(params, opt_state, *batch):
        l, g = jax.value_and_grad(loss)(params, *batch)
        updates, opt_state = opt.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, l
    return step
key = jax.random.PRNGKey(0)
# 1. GPT-2-style, 2 layers stacked and scanned.
V, D, H, L, S, B = 512, 128, 4, 2, 64, 8
gpt = {"wte": 0.02 * jax.random.normal(key, (V, D)), "wpe": 0.01 * jax.random.normal(key, (S, D)),
       "layers": layer_params(key, D, 4 * D, jnp.float32, L), "lnf_g": jnp.ones(D), "lnf_b": jnp.zeros(D)}
def gpt_loss(p, tokens, targets):
    x = p["wte"][tokens] + p["wpe"][None, :tokens.shape[1]]
    def body(x, lp):
        x = x + attention(ln(x, lp["ln1_g"], lp["ln1_b"]), lp, H, True)
        return x + mlp(ln(x, lp["ln2_g"], lp["ln2_b"]), lp), None
    x, _ = jax.lax.scan(body, x, p["layers"])
    return xent(ln(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T, targets)
tok = jnp.zeros((B, S), jnp.int32)
dump("jax_gpt2_scan_adamw", make_step(gpt_loss), (gpt, opt.init(gpt), tok, tok))
# 2. BERT-style: 12 post-LN layers unrolled, MLM head tied to the token embedding, AdamW.
V, D, H, L, S, B = 30522, 768, 12, 12, 128, 8
bert = {"tok": 0.02 * jax.random.normal(key, (V, D)), "pos": 0.02 * jax.random.normal(key, (512, D)),
        "typ": 0.02 * jax.random.normal(key, (2, D)), "emb_g": jnp.ones(D), "emb_b": jnp.zeros(D),
        "layers": [layer_params(jax.random.fold_in(key, i), D, 4 * D, jnp.float32) for i in range(L)],
        "head_w": 0.02 * jax.random.normal(key, (D, D)), "head_b": jnp.zeros(D), "head_g": jnp.ones(D),
        "head_beta": jnp.zeros(D), "out_b": jnp.zeros(V)}
def bert_loss(p, tokens, types, labels, weights):
    x = p["tok"][tokens] + p["pos"][None, :tokens.shape[1]] + p["typ"][types]
    x = ln(x, p["emb_g"], p["emb_b"])
    for lp in p["layers"]:
        x = ln(x + attention(x, lp, H, False), lp["ln1_g"], lp["ln1_b"])
        x = ln(x + mlp(x, lp), lp["ln2_g"], lp["ln2_b"])
    h = ln(jax.nn.gelu(x @ p["head_w"] + p["head_b"]), p["head_g"], p["head_beta"])
    logits = h @ p["tok"].T + p["out_b"]
    lp_ = jax.nn.log_softmax(logits, -1)
    nll = -jnp.take_along_axis(lp_, labels[..., None], -1)[..., 0]
    return (nll * weights).sum() / jnp.maximum(weights.sum(), 1.0)
tok = jnp.zeros((B, S), jnp.int32)
dump("jax_bert12_adamw", make_step(bert_loss), (bert, opt.init(bert), tok, tok, tok, jnp.ones((B, S))))
# 3. bf16 GPT layer stack with cuDNN fused attention (GPU only).
V, D, H, L, S, B = 512, 256, 4, 2, 256, 4
g2 = {"wte": (0.02 * jax.random.normal(key, (V, D))).astype(jnp.bfloat16),
      "layers": layer_params(key, D, 4 * D, jnp.bfloat16, L)}
def cudnn_loss(p, tokens, targets):
    x = p["wte"][tokens]
    def body(x, lp):
        x = x + attention(ln(x, lp["ln1_g"], lp["ln1_b"]), lp, H, True, impl="cudnn")
        return x + mlp(ln(x, lp["ln2_g"], lp["ln2_b"]), lp), None
    x, _ = jax.lax.scan(body, x, p["layers"])
    return xent(x @ p["wte"].T, targets)
tok = jnp.zeros((B, S), jnp.int32)
try:
    dump("jax_gpt_cudnn_attention", make_step(cudnn_loss), (g2, opt.init(g2), tok, tok))
except Exception as e:
    print("cudnn dump failed", repr(e)[:500])
