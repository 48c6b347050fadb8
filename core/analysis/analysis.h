#pragma once
// The CFP analysis pipeline in one call: ParallelBlocks on a mesh, the independent block checker,
// repeated segments, and the search-space report. Used by `cfp analyze`, tests and the GUI.
//
//   auto mesh = parseMesh("dp=2,tp=4", 8);
//   auto report = analyzeGraph(graph, *mesh);
//   report->check.pass, report->cover.types.size(), report->space.blockLevelLog10 …

#include <nlohmann/json.hpp>

#include "blocks/block_checker.h"
#include "blocks/blocks.h"
#include "segments/search_space.h"
#include "segments/segments.h"

namespace cfp {

struct AnalysisOptions {
    CoverOptions cover;
    int threads = 0;  // workers for the independent block check (0: util/parallel.h's default)
    // The independent block check and the search-space report (opStrategyCounts, space) verify and
    // describe the analysis; the planner uses neither (its own independent check is the plan
    // evaluator) and leaves them out unless asked (PlannerOptions::checkBlocks).
    bool check = true;
    bool searchSpace = true;
    // The mesh axis matmuls may also split their input's sequence over (context parallelism;
    // findParallelBlocks' sequenceAxis). Empty: none.
    std::string sequenceAxis;
};

struct AnalysisReport {
    BlockAnalysis blocks;
    BlockCheckReport check;     // check.checked is false when AnalysisOptions::check was off
    SegmentCover cover;
    SearchSpaceReport space;
    std::vector<int64_t> opStrategyCounts;  // per op: communication-free strategies on the mesh
    double coverage = 0;                    // (ops in blocks + resolved later with a reason) / ops
    double seconds = 0;                     // wall time of the whole analysis
    // Wall time of each stage: block discovery, independent check, segment cover, search space.
    double blocksSeconds = 0, checkSeconds = 0, segmentsSeconds = 0, spaceSeconds = 0;
};

// Communication-free strategies of one op on the mesh, Alpa-style: each mesh axis either splits
// one shardable factor of the op's rule whose size it divides, or is unused; the product over
// axes. Ops without a rule count 1. This is what the op-level search space multiplies.
int64_t opStrategyCount(const Graph& graph, const Op& op, const Mesh& mesh);

Result<AnalysisReport> analyzeGraph(const Graph& graph, const Mesh& mesh, const AnalysisOptions& options = {});

// The `cfp analyze --json` document (documented in docs/analysis-format.md).
nlohmann::ordered_json analysisToJson(const Graph& graph, const AnalysisReport& report);

}  // namespace cfp
