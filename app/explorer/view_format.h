#pragma once
// Formatting and plain helpers shared by the explorer's views.

#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "plan/pin.h"
#include "plan/plan.h"

namespace cfp::explorer {

QString formatSeconds(double seconds);           // "129.4 ms", "1.62 s", "85 µs"
// The step time of a folded run of segments: "24.6 ms each" when they cost the same (within
// 0.5%), else "24.6–95.0 ms each, 4.21 s in all" (a mixed plan's run is not its first segment).
QString runCostText(const std::vector<double>& segmentSeconds);
QString formatBytes(double bytes);               // "34.1 GiB", "512 MiB"
QString formatCount(int64_t n);                  // "8,503,056"
// "64 sequences per step = 4 rounds of 16 (micro-batch 2 per data-parallel rank, 8 ways)"
QString batchText(const PlanBatch& batch);
QString provenanceText(Provenance p);
// A priced configuration (runEstimate's plan and its round graph) as rich text: step time, memory
// per device against the usable memory and whether it fits, the breakdown, the batch; with
// `planSeconds` > 0 how much faster the plan is.
// The simulated step's split (plan/step_sim.h): "compute 499 ms · exposed communication 3.4 ms ·
// contention 2.4 ms · 26 ms of communication overlapped"; empty without a simulation.
QString stepSplitText(const Plan& plan);
// "pipeline: 2 stages × 2 chunks per rank, 6 layers per chunk, interleaved, 16 micro-batches · bubble …"; empty without one.
QString pipelineText(const Plan& plan);
QString estimateText(const QString& config, const Plan& estimate, const Graph& roundGraph, double planSeconds);
// The pin that fixes a segment ("3") or a segment type ("T1") to a combination (strategy index
// per block of the segment starting at firstBlock), with the strategies' labels.
Pin segmentPin(const std::string& target, const AnalysisReport& report, int32_t firstBlock, const std::vector<int32_t>& combination);
// Bytes one device holds of op's result under the plan.
int64_t localResultBytes(const Graph& graph, const Plan& plan, OpId op);

}  // namespace cfp::explorer
