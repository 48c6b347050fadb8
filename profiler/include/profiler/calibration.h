#pragma once
// Calibration: measuring the hardware the analytic model describes, so that the model becomes
// calibrated for it (cost/cost_model.h CostCalibration), and judging the model against the
// measured segments.
//
//   GEMM efficiency table  GEMMs over a grid of shapes in the model's dtype; efficiency =
//                          flops / ((seconds − launch) · peak(dtype)).
//   HBM bandwidth, launch  memory-bound kernels over sizes; a least-squares line
//                          seconds = launch + bytes / bandwidth.
//   α and β                every collective on every mesh axis over message sizes; a line
//                          seconds = steps·α + bytesFactor·b·β with the ring factors of the
//                          collective on that axis (cost_model.h ringFactors).
// Probes are one-item work plans, run with the same protocol and backend as segments.

#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "profiler/work_plan.h"

namespace cfp::profiler {

struct CalibrationGrid {
    std::vector<DType> dtypes{DType::BF16};
    std::vector<int64_t> gemmSizes{512, 2048, 8192};          // m, n and k each take every size
    std::vector<int64_t> memoryBytes{int64_t{1} << 20, int64_t{4} << 20, int64_t{16} << 20, int64_t{64} << 20,
                                     int64_t{256} << 20, int64_t{1} << 30};
    std::vector<int64_t> messageBytes{int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20,
                                      int64_t{256} << 20};
    std::vector<CollectiveKind> collectives{CollectiveKind::AllReduce, CollectiveKind::AllGather,
                                            CollectiveKind::ReduceScatter, CollectiveKind::AllToAll};
};

// One-item work plans (segmentType −1, combinationKey naming the probe), priced by `model`.
SegmentWorkPlan gemmProbe(const GemmShape& shape, const CostModel& model);
SegmentWorkPlan memoryProbe(int64_t bytes, const CostModel& model);        // reads and writes bytes/2 each
SegmentWorkPlan collectiveProbe(CollectiveKind kind, int axis, int64_t messageBytes, const CostModel& model);

// Every probe of the grid on `model`'s mesh: GEMMs, memory kernels, and collectives on every axis
// of size > 1 (only when `withCollectives`).
enum class ProbeCollectives : uint8_t { Skip, Include };
std::vector<SegmentWorkPlan> calibrationProbes(const CalibrationGrid& grid, const CostModel& model, ProbeCollectives collectives);

struct LineFit {
    double intercept = 0;
    double slope = 0;
    int points = 0;
};
// Least squares y = intercept + slope·x; with one point (or all x equal) the line through the mean
// with slope mean(y)/mean(x) and no intercept.
LineFit fitLine(const std::vector<double>& x, const std::vector<double>& y);

// From probes and their measured seconds (parallel vectors), the calibration they imply: the HBM
// line from memory probes, the GEMM table from GEMM probes (using that launch time), one α-β fit
// per (axis link, axis size, collective) from collective probes. Probes of a kind that is absent
// leave that part uncalibrated.
CostCalibration fitCalibration(const std::vector<SegmentWorkPlan>& probes, const std::vector<double>& seconds,
                               const CostModel& model);

struct AccuracyReport {
    int segments = 0;                  // measured combinations compared
    double meanRelativeError = 0;      // mean |predicted − measured| / measured
    double worstRelativeError = 0;
    std::string worst;                 // "T1 x:rows | …"
};

struct PredictedMeasured {
    std::string label;
    double predictedSeconds = 0;
    double measuredSeconds = 0;
};
AccuracyReport accuracyOf(const std::vector<PredictedMeasured>& pairs);

}  // namespace cfp::profiler
