#pragma once
// Formatting and plain helpers shared by the explorer's views.

#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "plan/pin.h"
#include "plan/plan.h"
#include "plan/problem.h"

namespace cfp::explorer {

QString formatSeconds(double seconds);           // "129.4 ms", "1.62 s", "85 µs"
QString formatBytes(double bytes);               // "34.1 GiB", "512 MiB"
// A change of step time: "+1.2 ms", "−3.4 ms"; "±0" when it rounds to nothing (never "−0 ns").
QString formatDelta(double seconds);
QString formatDuration(double seconds);          // "40 s", "3 min 20 s", "1 h 05 min"
// A planning progress report as one line: "2 round(s) (1 of 3) · search · mesh 3 of 10 {x=4, y=8},
// sequence parallel over y · pass 2".
QString progressText(const PlanProgress& p);
QString formatCount(int64_t n);                  // "8,503,056"
// "64 sequences per step = 4 rounds of 16 (micro-batch 2 per data-parallel rank, 8 ways)"
QString batchText(const PlanBatch& batch);
QString provenanceText(Provenance p);
QString baselineName(const Baseline& b);  // "data parallel", "Megatron-style"
// The plan against its baselines: "1.56× faster than Megatron-style (100.7 ms), 2.10× faster than
// data parallel (135.6 ms)"; those that do not fit say so; empty without baselines.
QString baselineComparisonText(const Plan& plan);
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
