#include "profiler/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace cfp::profiler {

namespace {

SegmentWorkPlan probePlan(WorkItem item, const std::string& key, const CostModel& model) {
    SegmentWorkPlan w;
    w.segmentType = -1;
    w.combinationKey = key;
    w.label = key;
    w.mesh = model.mesh().toString();
    item.predictedSeconds = itemSeconds(item, model);
    w.predictedSeconds = item.predictedSeconds;
    if (item.kind == WorkKind::Collective) w.predictedCommSeconds = item.predictedSeconds;
    switch (item.kind) {
        case WorkKind::Gemm: w.workspaceBytes = item.gemm.bytes(); break;
        case WorkKind::Memory: w.workspaceBytes = item.readBytes + item.writeBytes; break;
        case WorkKind::Collective: w.workspaceBytes = 2 * item.messageBytes; break;
    }
    w.items.push_back(std::move(item));
    return w;
}

}  // namespace

SegmentWorkPlan gemmProbe(const GemmShape& shape, const CostModel& model) {
    WorkItem item;
    item.kind = WorkKind::Gemm;
    item.gemm = shape;
    item.dtype = shape.dtype;
    item.flops = shape.flops();
    item.bytes = static_cast<double>(shape.bytes());
    item.name = "gemm " + std::string(dtypeName(shape.dtype)) + " " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                std::to_string(shape.k);
    const std::string key = "calibration:" + item.name;
    return probePlan(std::move(item), key, model);
}

SegmentWorkPlan memoryProbe(int64_t bytes, const CostModel& model) {
    WorkItem item;
    item.kind = WorkKind::Memory;
    item.readBytes = bytes / 2;
    item.writeBytes = bytes - bytes / 2;
    item.bytes = static_cast<double>(bytes);
    item.dtype = DType::F32;
    // A copy: one fusible op reading and writing the bytes (the model's memory-bound kernel).
    item.parts.push_back({OpKind::Convert, DType::F32, 0.0, static_cast<double>(bytes)});
    item.name = "memory " + std::to_string(bytes) + " B";
    const std::string key = "calibration:" + item.name;
    return probePlan(std::move(item), key, model);
}

SegmentWorkPlan collectiveProbe(CollectiveKind kind, int axis, int64_t messageBytes, const CostModel& model) {
    WorkItem item;
    item.kind = WorkKind::Collective;
    item.collective = kind;
    item.axis = axis;
    const MeshAxis& a = model.mesh().axes().at(static_cast<size_t>(axis));
    item.axisName = a.name;
    item.axisSize = a.size;
    item.messageBytes = messageBytes;
    item.dtype = DType::F32;
    item.name = std::string(collectiveKindName(kind)) + " over " + a.name + " " + std::to_string(messageBytes) + " B";
    const std::string key = "calibration:" + item.name;
    return probePlan(std::move(item), key, model);
}

std::vector<SegmentWorkPlan> calibrationProbes(const CalibrationGrid& grid, const CostModel& model, ProbeCollectives collectives) {
    std::vector<SegmentWorkPlan> out;
    for (int64_t b : grid.memoryBytes) out.push_back(memoryProbe(b, model));
    for (DType dt : grid.dtypes)
        for (int64_t mm : grid.gemmSizes)
            for (int64_t nn : grid.gemmSizes)
                for (int64_t kk : grid.gemmSizes) out.push_back(gemmProbe(GemmShape{1, mm, nn, kk, dt}, model));
    if (collectives == ProbeCollectives::Include) {
        const auto& axes = model.mesh().axes();
        for (size_t a = 0; a < axes.size(); ++a) {
            if (axes[a].size <= 1) continue;
            for (CollectiveKind k : grid.collectives)
                for (int64_t b : grid.messageBytes) {
                    // Messages must split evenly over the axis (and its square, for all-to-all).
                    const int64_t unit = 4 * axes[a].size * axes[a].size;
                    out.push_back(collectiveProbe(k, static_cast<int>(a), std::max(unit, b / unit * unit), model));
                }
        }
    }
    return out;
}

LineFit fitLine(const std::vector<double>& x, const std::vector<double>& y) {
    LineFit f;
    const size_t n = std::min(x.size(), y.size());
    f.points = static_cast<int>(n);
    if (n == 0) return f;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; ++i) {
        mx += x[i];
        my += y[i];
    }
    mx /= static_cast<double>(n);
    my /= static_cast<double>(n);
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (n == 1 || sxx <= 1e-300 * std::max(1.0, mx * mx)) {
        f.intercept = 0;
        f.slope = mx != 0 ? my / mx : 0;
        return f;
    }
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    return f;
}

CostCalibration fitCalibration(const std::vector<SegmentWorkPlan>& probes, const std::vector<double>& seconds, const CostModel& model) {
    CostCalibration c;
    std::vector<double> memX, memY;
    struct GemmPoint {
        const WorkItem* item;
        double seconds;
    };
    std::vector<GemmPoint> gemms;
    std::map<std::tuple<int, int64_t, int>, std::pair<std::vector<double>, std::vector<double>>> coll;  // (link, n, kind) → bytes, seconds
    for (size_t i = 0; i < probes.size() && i < seconds.size(); ++i) {
        if (probes[i].items.size() != 1 || !(seconds[i] > 0)) continue;
        const WorkItem& item = probes[i].items.front();
        switch (item.kind) {
            case WorkKind::Memory:
                memX.push_back(item.bytes);
                memY.push_back(seconds[i]);
                break;
            case WorkKind::Gemm: gemms.push_back({&item, seconds[i]}); break;
            case WorkKind::Collective: {
                const MeshAxis& a = model.mesh().axes().at(static_cast<size_t>(item.axis));
                auto& [xs, ys] = coll[{static_cast<int>(a.link.value_or(LinkClass::IntraNode)), a.size, static_cast<int>(item.collective)}];
                xs.push_back(static_cast<double>(item.messageBytes));
                ys.push_back(seconds[i]);
                break;
            }
        }
    }
    double launch = model.launchSeconds();
    if (!memX.empty()) {
        const LineFit f = fitLine(memX, memY);
        if (f.slope > 0) {
            c.hbmBytesPerSecond = 1.0 / f.slope;
            c.launchSeconds = std::max(0.0, f.intercept);
            launch = c.launchSeconds;
        }
    }
    for (const GemmPoint& g : gemms) {
        const double peak = model.hardware().peakFlopsFor(g.item->gemm.dtype);
        if (peak <= 0) continue;
        const double compute = g.seconds - launch > 0.1 * g.seconds ? g.seconds - launch : g.seconds;
        c.gemm.push_back({g.item->gemm.dtype, g.item->flops, g.item->bytes, std::clamp(g.item->flops / (compute * peak), 1e-6, 1.0)});
    }
    for (const auto& [key, xy] : coll) {
        const auto& [link, devices, kind] = key;
        const AlphaBetaFactors f = ringFactors(static_cast<CollectiveKind>(kind), static_cast<double>(devices));
        if (f.steps <= 0 || f.bytesFactor <= 0) continue;
        const LineFit line = fitLine(xy.first, xy.second);
        if (!(line.slope > 0)) continue;
        c.collectives.push_back(CollectiveFit{static_cast<LinkClass>(link), devices, static_cast<CollectiveKind>(kind),
                                              std::max(0.0, line.intercept) / f.steps, line.slope / f.bytesFactor});
    }
    return c;
}

AccuracyReport accuracyOf(const std::vector<PredictedMeasured>& pairs) {
    AccuracyReport r;
    double sum = 0;
    for (const PredictedMeasured& p : pairs) {
        if (!(p.measuredSeconds > 0)) continue;
        const double e = std::abs(p.predictedSeconds - p.measuredSeconds) / p.measuredSeconds;
        sum += e;
        ++r.segments;
        if (e > r.worstRelativeError || r.segments == 1) {
            r.worstRelativeError = std::max(r.worstRelativeError, e);
            if (e >= r.worstRelativeError) r.worst = p.label;
        }
    }
    if (r.segments > 0) r.meanRelativeError = sum / r.segments;
    return r;
}

}  // namespace cfp::profiler
