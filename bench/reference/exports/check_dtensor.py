# The DTensor export, run for real under torchrun (gloo, CPU): every parameter distributed with its
# PLACEMENTS on the plan's mesh; shapes from the JAX export (graph layout, transposed for LINEAR_WEIGHTS).
import importlib.util, sys, torch, torch.distributed as dist
from torch.distributed.tensor import distribute_tensor
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
dt, jx = load("plan_dt", sys.argv[1]), load("plan_jax", sys.argv[2])
dist.init_process_group("gloo")
mesh = dt.make_device_mesh("cpu")
n = 0
for path, placements in dt.PLACEMENTS.items():
    shape = jx.PARAM_SHAPES[path]
    if path in dt.LINEAR_WEIGHTS:
        shape = tuple(reversed(shape))
    t = distribute_tensor(torch.zeros(shape), mesh, placements)
    n += 1
if dist.get_rank() == 0:
    print("torch", torch.__version__, "dtensor: distributed", n, "parameters on", tuple(mesh.shape), "ranks", dist.get_world_size(),
          "parallelize_plan", {k: type(v).__name__ for k, v in dt.PARALLELIZE_PLAN.items()})
dist.destroy_process_group()
