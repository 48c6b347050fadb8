# The JAX export, run for real: 8 host devices, every parameter placed with its NamedSharding.
import importlib.util, sys
import jax, jax.numpy as jnp
spec = importlib.util.spec_from_file_location("plan", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print("jax", jax.__version__, "devices", len(jax.devices()))
mesh = m.make_mesh()
sh = m.named_shardings(mesh)
placed = 0
for path, shape in m.PARAM_SHAPES.items():
    x = jax.device_put(jnp.zeros(shape, jnp.bfloat16), sh[path])
    local = x.addressable_shards[0].data.shape
    spec_ = m.PARTITION_SPECS[path]
    expect = list(shape)
    for d, part in enumerate(tuple(spec_) + (None,) * (len(shape) - len(tuple(spec_)))):
        axes = () if part is None else (part if isinstance(part, tuple) else (part,))
        for a in axes:
            expect[d] //= dict(zip(m.MESH_AXIS_NAMES, m.MESH_SHAPE))[a]
    assert tuple(local) == tuple(expect), (path, local, expect)
    placed += 1
print("jax: placed", placed, "parameters; local shapes as the specs say")
try:
    m.make_mesh(jax.devices()[:4])
except ValueError as e:
    print("jax: 4 devices ->", e)
