#pragma once
// A planning request as a user states it, in one type for every front end: `cfp plan` builds it
// from its options, the explorer from its panels, and the explorer's project file is a saved
// request (docs/architecture.md). workflow.h turns it into a plan.
//
//   PlanRequest r;
//   r.model.source = "builtin:llama2-7b";
//   r.model.build.batch = 16;
//   r.nodes = 2;
//   r.mesh = MeshChoice::parse("dp=2,tp=8").value();
//   r.pins = parsePins({"T1=dp:rows,tp:cols;*;*;*"}).value();
//   auto run = runPlan(r);                    // workflow.h
//
// The JSON form ("format": "cfp-plan-request", version 1) is what the explorer saves as a project
// (requestToJson / requestFromJson). Version 1 projects written by earlier explorers
// ("format": "cfp-explorer-project") read the same. Errors: request.syntax, request.format,
// request.version, request.io, located by JSON Pointer and file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/imported_model.h"
#include "loader/model_loader.h"
#include "plan/pin.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "plan/pipeline_plan.h"

namespace cfp {

// Where the model comes from and how it is built.
struct ModelRequest {
    std::string source = kDefaultModel;  // builtin:NAME, config.json, graph.json, .hlo, .onnx
    BuildOptions build;                  // for builder-based sources (built-ins, config.json)
    TrainingMode training = TrainingMode::AsIs;  // AppendTraining: add backward and AdamW to a forward-only import
    bool operator==(const ModelRequest& o) const;
};

// Measurements from a profile DB (profiler/profile_db.h) to plan with.
struct ProfileSource {
    std::string database;     // SQLite file written by `cfp profile`
    std::string fingerprint;  // hardware fingerprint key; empty: the one profiled as the request's hardware
    bool operator==(const ProfileSource&) const = default;
};

struct PlanRequest {
    ModelRequest model;
    std::string hardware = "h100-sxm";        // built-in spec id or a JSON file
    int64_t nodes = 1;
    MeshChoice mesh;                          // auto or one mesh
    std::optional<int64_t> memoryLimitBytes;  // per device; nullopt: the GPU's usable memory
    std::optional<int64_t> memoryReserveBytes;  // nullopt: the hardware spec's reserve
    // Gradient-accumulation steps (micro-batch rounds per step); nullopt: chosen by runPlan.
    // model.build.batch is the global batch; the graph is built for one round (batch / steps).
    // policy.accumulation is set from it by runPlan.
    std::optional<int64_t> accumulation;
    MemoryPolicy policy;
    std::vector<Pin> pins;
    std::optional<ProfileSource> profile;
    Baselines baselines = Baselines::Include;
    BlockCheck blockCheck = BlockCheck::Skip;
    SearchOptions search;                     // algorithm settings and threads (not saved)
    // Pipeline stages (stages > 1): the mesh is one stage's (devices / stages), runPlan plans its
    // program and schedules it (plan/pipeline_plan.h). JSON "pipeline" (optional).
    PipelineSettings pipeline;
    // Also plan each mesh with sequence parallelism over its intra-node axes (PlannerOptions::
    // searchSequenceParallel). JSON "sequence_parallel": "auto" (default) or "off".
    bool searchSequenceParallel = true;
    bool operator==(const PlanRequest& o) const;
};

std::string requestToJson(const PlanRequest& request);
Result<PlanRequest> requestFromJson(std::string_view text, const std::string& origin);
Result<PlanRequest> readRequestFile(const std::string& path);
Status writeRequestFile(const std::string& path, const PlanRequest& request);

}  // namespace cfp
