# A JAX user's round trip (jax_roundtrip.sh): `lower` writes the scanned GPT + AdamW step with debug
# info (arguments named by pytree path) to DIR/step.mlir; after cfp plans it and exports DIR/plan_jax.py,
# `check` places the real params, optimizer state and batch with the export's helpers and runs the
# jitted step with those shardings on 8 host devices, against the unsharded step.
#   python3 jax_roundtrip.py lower|check DIR
import os, sys, importlib.util
mode, out = sys.argv[1], sys.argv[2]
if mode == "check":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"; os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, optax
V, D, H, L, S, B = 512, 128, 4, 2, 64, 8
def ln(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + eps) * g + b
def layer(x, p):
    Bx, Sx, Dx = x.shape; hd = Dx // H
    h = ln(x, p["ln1_g"], p["ln1_b"])
    q, k, v = jnp.split(h @ p["qkv_w"] + p["qkv_b"], 3, axis=-1)
    q, k, v = (t.reshape(Bx, Sx, H, hd) for t in (q, k, v))
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd).astype(x.dtype)
    s = jnp.where(jnp.tril(jnp.ones((Sx, Sx), bool)), s, jnp.finfo(s.dtype).min)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(Bx, Sx, Dx)
    x = x + o @ p["proj_w"] + p["proj_b"]
    h = ln(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["fc1_w"] + p["fc1_b"]) @ p["fc2_w"] + p["fc2_b"]
def init(key):
    ks = jax.random.split(key, 6); n = lambda k, s: 0.02 * jax.random.normal(k, s)
    lay = {"ln1_g": jnp.ones((L, D)), "ln1_b": jnp.zeros((L, D)), "qkv_w": n(ks[0], (L, D, 3 * D)), "qkv_b": jnp.zeros((L, 3 * D)),
           "proj_w": n(ks[1], (L, D, D)), "proj_b": jnp.zeros((L, D)), "ln2_g": jnp.ones((L, D)), "ln2_b": jnp.zeros((L, D)),
           "fc1_w": n(ks[2], (L, D, 4 * D)), "fc1_b": jnp.zeros((L, 4 * D)), "fc2_w": n(ks[3], (L, 4 * D, D)), "fc2_b": jnp.zeros((L, D))}
    return {"wte": n(ks[4], (V, D)), "wpe": n(ks[5], (S, D)), "layers": lay, "lnf_g": jnp.ones(D), "lnf_b": jnp.zeros(D)}
def loss(p, tokens, targets):
    x = p["wte"][tokens] + p["wpe"][None, :tokens.shape[1]]
    x, _ = jax.lax.scan(lambda x, lp: (layer(x, lp), None), x, p["layers"])
    lp = jax.nn.log_softmax(ln(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T, -1)
    return -jnp.take_along_axis(lp, targets[..., None], -1).mean()
opt = optax.adamw(3e-4, weight_decay=0.1)
def step(params, opt_state, tokens, targets):
    l, g = jax.value_and_grad(loss)(params, tokens, targets)
    u, opt_state = opt.update(g, opt_state, params)
    return optax.apply_updates(params, u), opt_state, l
params = init(jax.random.PRNGKey(0)); state = opt.init(params)
tokens = jax.random.randint(jax.random.PRNGKey(1), (B, S), 0, V)
if mode == "lower":
    open(out + "/step.mlir", "w").write(jax.jit(step).lower(params, state, tokens, tokens).as_text(debug_info=True))
    print("lowered", os.path.getsize(out + "/step.mlir"), "bytes")
    sys.exit(0)
spec = importlib.util.spec_from_file_location("plan", out + "/plan_jax.py"); plan = importlib.util.module_from_spec(spec); spec.loader.exec_module(plan)
mesh = plan.make_mesh()
ref_params, ref_state, ref_loss = jax.jit(step)(params, state, tokens, tokens)
ps = plan.tree_shardings(params, mesh); ss = plan.optimizer_shardings(state, mesh)
names = list(plan.PARTITION_SPECS)
p = jax.device_put(params, ps); s = jax.device_put(state, ss)
ins = plan.input_shardings(mesh)
tok_sharding = next(iter(ins.values())) if ins else None
t = jax.device_put(tokens, tok_sharding) if tok_sharding is not None else tokens
new_p, new_s, l = jax.jit(step, in_shardings=(ps, ss, tok_sharding, tok_sharding), out_shardings=(ps, ss, None))(p, s, t, t)
diff = max(float(jnp.abs(a - b).max()) for a, b in zip(jax.tree_util.tree_leaves(new_p), jax.tree_util.tree_leaves(ref_params)))
split = sum(1 for x in jax.tree_util.tree_leaves(p) if len(x.sharding.device_set) > 1 and not x.sharding.is_fully_replicated)
print("plan names:", names[:4], "... (%d)" % len(names), "| inputs:", {k: str(v.spec) for k, v in ins.items()})
print("placed %d parameters (%d split), optimizer state by OPTIMIZER_STATE_SPECS; jitted step with the plan's shardings:"
      " loss %.6f vs %.6f unsharded, updated parameters max |diff| %.2e" % (len(jax.tree_util.tree_leaves(p)), split, float(l), float(ref_loss), diff))
