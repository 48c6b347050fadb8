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
// The JSON form ("format": "cfp-plan-request", version 2) is what the explorer saves as a project
// (requestToJson / requestFromJson), with the last plan it had when it has one (projectToJson
// below: one more key, "last_plan"; requestFromJson reads such a file as its request). Version 1
// projects written by earlier explorers ("format": "cfp-explorer-project") read the same. Errors:
// request.syntax, request.format, request.version, request.io, located by JSON Pointer and file.

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
    // Also plan at ZeRO-2 and ZeRO-3 (from policy's stage up) where the plan at the lower stage is
    // shaped by the memory limit or none fits, keeping the fastest (runPlan). JSON "zero_stage":
    // "auto" (the search from stage 1) or the stage; off under pipeline stages and for estimates.
    bool searchZero = true;
    bool operator==(const PlanRequest& o) const;
};

std::string requestToJson(const PlanRequest& request);
Result<PlanRequest> requestFromJson(std::string_view text, const std::string& origin);
Result<PlanRequest> readRequestFile(const std::string& path);
Status writeRequestFile(const std::string& path, const PlanRequest& request);

// An explorer project: the request, and the last plan the explorer had with the request that
// plan answers (what the search that made it ran with), so that opening the project shows the
// plan again without a search when it still answers the project's request (requestDifferences).
//
//   { "format": "cfp-plan-request", "version": 2, …the request…,
//     "last_plan": {"partial": false,                      // the search was stopped early
//                   "request": {"format": "cfp-plan-request", …},  // what the plan answers
//                   "plan": {"format": "cfp-plan", …}} }            // plan_json.h, as planToText writes it
//
// The plan document is kept as text (ProjectPlan::planText) and read with planFromJson where it
// is used: a plan that no longer reads (or no longer prices the same, restorePlan) costs a search,
// not the project. Writing is deterministic (same request and plan, same bytes).
struct ProjectPlan {
    PlanRequest request;   // what the search that made the plan ran with
    std::string planText;  // the plan document (planToText; read back: compact JSON)
    bool partial = false;  // the search was stopped before every mesh was planned (PlanOutcome::stopped)
};
struct Project {
    PlanRequest request;
    std::optional<ProjectPlan> lastPlan;
};
std::string projectToJson(const PlanRequest& request, const ProjectPlan* lastPlan);
// Errors as requestFromJson's; those of the last plan's request are located under /last_plan/request.
Result<Project> projectFromJson(std::string_view text, const std::string& origin);
Result<Project> readProjectFile(const std::string& path);
Status writeProjectFile(const std::string& path, const PlanRequest& request, const ProjectPlan* lastPlan);

// Where a plan made for `planned` does not answer `request`: the request keys (JSON names:
// "model", "nodes", "pins", …) in which they differ, in file order; empty when it answers it.
// check_blocks is not compared (the block check does not change the plan), nor the search
// options; a plan made under mesh auto answers a request fixed to its own mesh (`planMesh`, the
// plan's), as the explorer fixes the mesh when pins are set.
std::vector<std::string> requestDifferences(const PlanRequest& planned, const PlanRequest& request, const Mesh* planMesh = nullptr);

}  // namespace cfp
