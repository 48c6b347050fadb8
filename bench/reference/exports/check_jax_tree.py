# The JAX export's tree helpers, run for real on 8 host devices: a parameter pytree of nested dicts
# (the plan's dotted names split at the dots), the same under Flax's {'params': ...}, an
# optax.adamw state and the data inputs are placed with tree_shardings / optimizer_shardings /
# input_shardings; every local shard must have the shape its spec gives, and a jitted update
# must keep the parameters' shardings.
import importlib.util, sys, jax, jax.numpy as jnp, optax
spec = importlib.util.spec_from_file_location("plan", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
mesh = m.make_mesh()
def nest(flat):
    tree = {}
    for path, shape in flat.items():
        node = tree
        parts = path.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = jnp.zeros(shape, jnp.float32)
    return tree
def local_ok(x, spec):
    want = list(x.shape)
    for d, axes in enumerate(spec):
        for a in (axes if isinstance(axes, tuple) else (axes,) if axes else ()):
            want[d] //= mesh.shape[a]
    return all(list(s.data.shape) == want for s in x.addressable_shards)
params = nest(m.PARAM_SHAPES)
placed = jax.device_put(params, m.tree_shardings(params, mesh))
flat = {".".join(str(getattr(k, "key", k)) for k in path): leaf for path, leaf in jax.tree_util.tree_leaves_with_path(placed)}
bad = [p for p, x in flat.items() if not local_ok(x, m.PARTITION_SPECS[p])]
flax_tree = jax.device_put({"params": params}, m.tree_shardings({"params": params}, mesh))
opt = optax.adamw(1e-3)
state = opt.init(placed)
state = jax.device_put(state, m.optimizer_shardings(state, mesh))
moments = [x for x in jax.tree_util.tree_leaves(state) if getattr(x, "ndim", 0) > 0]
inputs = {n: jax.device_put(jnp.zeros((8, 64), jnp.int32), s) for n, s in m.input_shardings(mesh).items()}
@jax.jit
def update(p, s):
    g = jax.tree_util.tree_map(jnp.ones_like, p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s
new, _ = update(placed, state)
kept = all(a.sharding.is_equivalent_to(b.sharding, a.ndim) for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(placed)))
print(sys.argv[1], "jax", jax.__version__, "| parameters placed:", len(flat), "local shapes wrong:", len(bad), bad[:2],
      "| flax tree placed:", len(jax.tree_util.tree_leaves(flax_tree)), "| optimizer leaves placed:", len(moments),
      "| inputs:", {n: str(x.sharding.spec) for n, x in inputs.items()}, "| jitted AdamW update keeps shardings:", kept)
try:
    m.tree_shardings({"not": {"in": {"plan": jnp.zeros((4, 4))}}}, mesh)
    print("unknown leaf: no error (wrong)")
except KeyError as e:
    print("unknown leaf ->", e)
