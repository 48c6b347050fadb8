# The DTensor export with Hugging Face names, run for real: torchrun, gloo ranks on the CPU, a
# transformers LlamaForCausalLM built from the config the plan was made for. Every PLACEMENTS name
# must be a parameter of the model; parallelize() (tensor parallelism, then FSDP2) must give the
# single-process loss and gradients; the tensor-parallel placements must be PLACEMENTS'.
import importlib.util, json, sys, time, torch, torch.distributed as dist
from transformers import LlamaConfig, LlamaForCausalLM
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
plan = load("plan", sys.argv[1]); cfg = json.load(open(sys.argv[2])); B, S = int(sys.argv[3]), int(sys.argv[4])
dist.init_process_group("gloo"); rank = dist.get_rank()
def say(*a):
    if rank == 0: print(*a, flush=True)
config = LlamaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
config._attn_implementation = "eager"
torch.manual_seed(0)
ref = LlamaForCausalLM(config).float()
model = LlamaForCausalLM(config).float(); model.load_state_dict(ref.state_dict())
names = dict(model.named_parameters())
missing = [p for p in plan.PLACEMENTS if p not in names]; unplanned = [n for n in names if n not in plan.PLACEMENTS]
say(sys.argv[1], "names: %d planned, %d missing from the model %s, %d model parameters unplanned %s" % (len(plan.PLACEMENTS), len(missing), missing[:3], len(unplanned), unplanned[:3]))
ids = torch.randint(0, config.vocab_size, (B, S), generator=torch.Generator().manual_seed(1))
ref_loss = ref(input_ids=ids, labels=ids).loss; ref_loss.backward()
mesh = plan.make_device_mesh("cpu")
t = time.time()
try:
    model = plan.parallelize(model, mesh)
except Exception as e:
    say("parallelize FAILED:", repr(e)[:400]); dist.destroy_process_group(); sys.exit(0)
dp = 1; dp_rank = 0
for d in plan.DP_MESH_DIMS:  # row-major over the dp dims
    dp_rank = dp_rank * mesh.size(plan.MESH_DIM_NAMES.index(d)) + mesh.get_local_rank(d); dp *= mesh.size(plan.MESH_DIM_NAMES.index(d))
local = ids[dp_rank * B // dp:(dp_rank + 1) * B // dp]
loss = model(input_ids=local, labels=local).loss
loss.backward()
l = loss.detach().clone(); dist.all_reduce(l); l /= dist.get_world_size()  # ranks of one dp rank hold the same loss
worst = 0.0; wrong_tp = []
tp_index = plan.MESH_DIM_NAMES.index(plan.TP_MESH_DIM) if plan.TP_MESH_DIM else None
for n, p in model.named_parameters():
    g = p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad
    worst = max(worst, (g - ref.get_parameter(n).grad).abs().max().item())
    if tp_index is not None and hasattr(p, "placements"):
        placements = p.placements
        tp_pl = placements[-1] if len(placements) == 1 else placements[tp_index] if len(placements) == len(plan.MESH_DIM_NAMES) else None
        want = plan.PLACEMENTS[n][tp_index]
        if tp_pl is not None and repr(tp_pl) != repr(want) and len(placements) == len(plan.MESH_DIM_NAMES): wrong_tp.append((n, repr(tp_pl), repr(want)))
say("  loss %.6f (single process %.6f, |diff| %.2e); gradients max |diff| %.2e; tp placements differing from PLACEMENTS: %d %s; %.1f s" %
    (l.item(), ref_loss.item(), abs(l.item() - ref_loss.item()), worst, len(wrong_tp), wrong_tp[:2], time.time() - t))
dist.destroy_process_group()
