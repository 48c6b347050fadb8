#pragma once
// Step simulator: one device's training step as frameworks run it, with communication overlapped
// where they overlap it. The evaluator (evaluator.h) prices every kernel, collective and
// resharding of a plan; it hands them here as tasks in program order (forward, backward with its
// recomputation, optimizer) and the simulator lays them on one compute stream and one
// communication channel per link class (NVLink/NVSwitch inside a node, the network across):
//
//   - compute tasks run on the compute stream in order;
//   - blocking communication (tensor-parallel collectives, resharding, a partial result's own
//     collectives) runs on the critical path: the compute stream waits for it;
//   - gradient reduction (a trainable weight's gradient over its replicas: all-reduce, or
//     reduce-scatter under ZeRO) is gathered into buckets in backward order (a bucket closes at
//     OverlapPolicy::bucketBytes, as PyTorch DDP and Megatron-LM's distributed optimizer bucket
//     gradients) and a bucket is launched on its channel as soon as its last gradient is computed,
//     while the backward goes on; the optimizer waits for every bucket. Without overlap the
//     buckets run after the backward, on the critical path. Under ZeRO-0/1 the reduction runs in
//     the last micro-batch round only (the others accumulate), under ZeRO-2/3 in every round;
//   - weight all-gathers: under ZeRO-1/2 after the update, in buckets in first-use order; with
//     overlap they run under the next step's forward (Megatron-LM --overlap-param-gather: a
//     forward kernel waits for its weight's bucket), without it after the optimizer. Under ZeRO-3
//     (FSDP) a layer's weights are gathered in one collective before its forward and again before
//     its backward, every round; with overlap the next layer's gather is issued when the current
//     layer starts (FSDP's prefetch of one), without it when the layer is reached;
//   - with OverlapPolicy::overlapTensorParallel (Megatron-LM --tp-comm-overlap), a GEMM's
//     resharding into it and its own collectives on an intra-node axis run beside the GEMM in
//     chunks: the pair takes the GEMM plus what of the communication outlasts it (the hidden part
//     counts as overlapped and slows the GEMM by the contention factor); likewise, under ring
//     context parallelism (MemoryPolicy::contextRing), an attention matmul's keys and values
//     arriving over the context-parallel axis and its gradients' reduction there run beside it
//     (the tasks' `beside` flag, cost/op_cost.h runsBeside);
//   - contention: compute that runs while overlapped communication is in flight is slowed by
//     HardwareSpec::overlapSlowdown × the overlapped time (NCCL's kernels take SMs and HBM
//     bandwidth from the compute kernels).
//
// A channel runs one collective at a time (FIFO in issue order). A bucket's collective is priced
// by the cost model on the bucket's bytes (one latency term per bucket, not per weight); a weight
// whose gradient needs several steps (one per mesh axis) has them in order.
//
// The step is the simulated makespan. Its parts: compute (the kernels), exposed communication
// (time the compute stream is blocked by or waits for communication, and communication after the
// last kernel), contention, and overlapped communication (in flight under compute, not in the
// step). Every micro-batch round is simulated.

#include <cstdint>
#include <vector>

#include "cost/cost_model.h"
#include "cost/step_policy.h"
#include "ir/graph.h"

namespace cfp {

enum class SimTaskKind : uint8_t {
    Compute,       // a kernel
    Blocking,      // communication on the critical path
    GradReduce,    // one step of a gradient's reduction (overlappable, bucketed)
    WeightGather,  // one step of a weight's all-gather (overlappable, bucketed)
};

struct SimTask {
    SimTaskKind kind = SimTaskKind::Compute;
    OpId op = kNoOp;          // the op (a weight gather's: the parameter)
    bool perRound = true;     // runs every micro-batch round; else once per step
    double seconds = 0;       // one run (Compute, Blocking)
    CollectiveKind collective = CollectiveKind::AllReduce;  // GradReduce / WeightGather: the step
    int axis = -1;
    int64_t bytes = 0;        // its message
    // For the timeline: a recomputed forward op's second run; a resharding (Blocking) into `op`
    // from `from` (else a Blocking task is one of op's own collectives, on `axis`).
    bool again = false;
    bool reshard = false;
    OpId from = kNoOp;
    // A Blocking task that runs beside its op's kernel (cost/op_cost.h runsBeside: tensor-parallel
    // communication under --tp-comm-overlap, the context ring into an attention matmul).
    bool beside = false;
};

// Where the simulator put things (simulateStep's `placed`), for the timeline: every task of the
// first and the last micro-batch round and of the optimizer, every gradient bucket and weight
// gather of those rounds, and the rounds between folded into one placement.
struct SimPlacement {
    enum class Kind : uint8_t { Task, Bucket, Gather, Rounds };
    Kind kind = Kind::Task;
    size_t task = 0;          // Task: index into the tasks; Bucket: its last gradient's task
    int64_t members = 0;      // Bucket, Gather: weights in it; Rounds: rounds folded
    int64_t round = 0;
    double start = 0, seconds = 0;
    int axis = -1;            // Bucket, Gather: the step's axis, kind and bytes
    CollectiveKind collective = CollectiveKind::AllReduce;
    int64_t bytes = 0;
    bool overlapped = false;  // ran beside compute
};

struct StepSimulation {
    double seconds = 0;                 // the makespan
    double computeSeconds = 0;          // kernels (without contention)
    double exposedCommSeconds = 0;      // blocking communication, waits and the tail
    double overlappedCommSeconds = 0;   // overlapped communication hidden under compute
    double contentionSeconds = 0;       // compute slowed by concurrent communication
    int64_t gradientBuckets = 0;        // per step
    int64_t gatherCollectives = 0;      // weight all-gathers per step (bucketed)
    bool operator==(const StepSimulation&) const = default;
};

// Simulates the step of `tasks` (program order; WeightGather tasks anywhere, one run each) under
// `policy` (accumulation rounds, ZeRO stage, overlap settings).
// `placed`, when given, receives the placements (above) in time order per track.
StepSimulation simulateStep(const Graph& graph, const std::vector<SimTask>& tasks, const CostModel& model, const MemoryPolicy& policy,
                            std::vector<SimPlacement>* placed = nullptr);

}  // namespace cfp
