#include "view_format.h"
#include "plan/pipeline_plan.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace cfp::explorer {

namespace {

// A number with `decimals` digits and no sign when it rounds to zero ("-0 ns" reads as a loss).
QString unsignedZero(double v, int decimals) {
    QString t = QString::number(v, 'f', decimals);
    if (t.startsWith(QLatin1Char('-')) && t.count(QLatin1Char('0')) + t.count(QLatin1Char('.')) == t.size() - 1) t.remove(0, 1);
    return t;
}

}  // namespace

QString formatSeconds(double s) {
    if (!std::isfinite(s)) return QStringLiteral("–");
    const double a = std::abs(s);
    if (a >= 10.0) return unsignedZero(s, 1) + QStringLiteral(" s");
    if (a >= 1.0) return unsignedZero(s, 2) + QStringLiteral(" s");
    if (a >= 1e-3) return unsignedZero(s * 1e3, a >= 0.1 ? 0 : 1) + QStringLiteral(" ms");
    if (a >= 1e-6 || a == 0) return unsignedZero(s * 1e6, 0) + QStringLiteral(" µs");
    return unsignedZero(s * 1e9, 0) + QStringLiteral(" ns");
}

QString formatBytes(double b) {
    const double a = std::abs(b);
    if (a >= 1024.0 * 1024 * 1024) return QString::number(b / (1024.0 * 1024 * 1024), 'f', a >= 100.0 * (1 << 30) ? 0 : 1) + QStringLiteral(" GiB");
    if (a >= 1024.0 * 1024) return QString::number(b / (1024.0 * 1024), 'f', 1) + QStringLiteral(" MiB");
    if (a >= 1024.0) return QString::number(b / 1024.0, 'f', 1) + QStringLiteral(" KiB");
    return QString::number(b, 'f', 0) + QStringLiteral(" B");
}

QString formatDelta(double seconds) {
    const QString magnitude = formatSeconds(std::abs(seconds));
    if (seconds == 0 || magnitude.startsWith(QStringLiteral("0 "))) return QStringLiteral("±0");
    return (seconds > 0 ? QStringLiteral("+") : QStringLiteral("−")) + magnitude;
}

QString baselineName(const Baseline& b) {
    if (b.name == "data_parallel") return QObject::tr("data parallel");
    if (b.name == "megatron") return QObject::tr("Megatron-style");
    return QString::fromStdString(b.name);
}

QString baselineComparisonText(const Plan& plan) {
    QStringList parts;
    const double step = plan.stepSeconds();
    for (const Baseline& b : plan.baselines) {
        if (!b.feasible) continue;
        if (!b.fits)
            parts << QObject::tr("%1 does not fit (%2)").arg(baselineName(b), formatBytes(static_cast<double>(b.memory.total())));
        else if (step > 0 && std::abs(b.stepSeconds / step - 1) < 0.005)
            parts << QObject::tr("as fast as %1 (%2)").arg(baselineName(b), formatSeconds(b.stepSeconds));
        else if (step > 0 && b.stepSeconds > 0)
            parts << QObject::tr("%1× %2 than %3 (%4)")
                         .arg(b.stepSeconds >= step ? b.stepSeconds / step : step / b.stepSeconds, 0, 'f', 2)
                         .arg(b.stepSeconds >= step ? QObject::tr("faster") : QObject::tr("slower"), baselineName(b), formatSeconds(b.stepSeconds));
    }
    return parts.join(QStringLiteral(", "));
}

QString formatDuration(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("–");
    const auto total = static_cast<int64_t>(std::llround(s));
    if (total < 60) return QStringLiteral("%1 s").arg(total);
    if (total < 3600) return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 h %2 min").arg(total / 3600).arg(total / 60 % 60, 2, 10, QLatin1Char('0'));
}

QString progressText(const PlanProgress& p) {
    QString text;
    if (p.pipelineStages > 0)
        text = (p.pipelineStages == 1 ? QStringLiteral("no stages") : QStringLiteral("pp %1").arg(p.pipelineStages)) +
               QStringLiteral(" (%1 of %2) · ").arg(p.stagesIndex + 1).arg(p.stagesCount);
    if (p.accumulation > 0)
        text += QStringLiteral("%1 round(s) (%2 of %3) · ").arg(p.accumulation).arg(p.accumulationIndex + 1).arg(p.accumulationCount);
    text += QString::fromStdString(p.stage);
    if (p.stage == "baselines") return text;
    text += QStringLiteral(" · ");
    if (p.meshCount > 1) text += QStringLiteral("mesh %1 of %2 ").arg(p.meshIndex + 1).arg(p.meshCount);
    text += QString::fromStdString(p.mesh);
    if (p.pass > 0) text += QStringLiteral(" · pass %1").arg(p.pass);
    return text;
}

QString batchText(const PlanBatch& b) {
    return QStringLiteral("%1 sequences per step = %2 round(s) of %3 (micro-batch %4 per data-parallel rank, %5-way)")
        .arg(b.global())
        .arg(b.accumulation)
        .arg(b.round)
        .arg(b.microBatch())
        .arg(b.dataParallel);
}

QString stepSplitText(const Plan& p) {
    const StepSimulation& s = p.simulated;
    if (s.seconds <= 0) return {};
    QString text = QStringLiteral("compute %1 · exposed communication %2 · contention %3")
                       .arg(formatSeconds(s.computeSeconds), formatSeconds(s.exposedCommSeconds), formatSeconds(s.contentionSeconds));
    if (p.pipeline) text += QStringLiteral(" · pipeline bubble %1").arg(formatSeconds(p.pipeline->bubbleSeconds));
    return text + QStringLiteral(" · %1 of communication overlapped").arg(formatSeconds(s.overlappedCommSeconds));
}

QString pipelineText(const Plan& p) {
    if (!p.pipeline) return {};
    const PipelinePlan& pl = *p.pipeline;
    const PipelineChunk& c = pl.chunks.front();
    const std::string_view schedule = pipeScheduleName(pl.schedule);
    const bool uneven = std::any_of(pl.chunks.begin(), pl.chunks.end(), [&](const PipelineChunk& x) { return x.layers != c.layers; });
    const QString origin = pl.scheduleOrigin.empty() ? QString() : QStringLiteral(" · %1: %2").arg(QString::fromUtf8(schedule.data(), static_cast<qsizetype>(schedule.size())), QString::fromStdString(pl.scheduleOrigin));
    return QStringLiteral("pipeline: %1 stages%2, %3, %4, %5 micro-batches · bubble %6 (rank %7) · transfer %8 in %9%10")
        .arg(pl.stages)
        .arg(QString::fromStdString(pipelineChunksText(pl)))
        .arg(uneven ? QStringLiteral("layers per chunk %1").arg(QString::fromStdString(splitText(pl)))
                    : QStringLiteral("%1 layers per chunk").arg(c.layers))
        .arg(QString::fromUtf8(schedule.data(), static_cast<qsizetype>(schedule.size())))
        .arg(pl.microBatches)
        .arg(formatSeconds(pl.bubbleSeconds))
        .arg(pl.slowestRank)
        .arg(formatBytes(static_cast<double>(pl.transferBytes)), formatSeconds(pl.transferSeconds), origin);
}

QString estimateText(const QString& config, const Plan& e, const Graph& roundGraph, double planSeconds) {
    const MemoryBreakdown& m = e.memory;
    const bool fits = m.total() <= e.memoryLimitBytes;
    QString text = QStringLiteral("<b>%1</b>: %2 per step · %3 of %4 per device: %5<br>")
                       .arg(config.toHtmlEscaped(), formatSeconds(e.stepSeconds()), formatBytes(static_cast<double>(m.total())),
                            formatBytes(static_cast<double>(e.memoryLimitBytes)),
                            fits ? QStringLiteral("fits") : QStringLiteral("<span style='color:#b00'>does not fit</span>"));
    if (const QString split = stepSplitText(e); !split.isEmpty()) text += split.toHtmlEscaped() + QStringLiteral("<br>");
    if (const QString pipe = pipelineText(e); !pipe.isEmpty()) text += pipe.toHtmlEscaped() + QStringLiteral("<br>");
    text += QStringLiteral("weights %1, gradients %2, optimizer %3, activations %4, largest op %5<br>")
                .arg(formatBytes(static_cast<double>(m.weights)), formatBytes(static_cast<double>(m.gradients)),
                     formatBytes(static_cast<double>(m.optimizer)), formatBytes(static_cast<double>(m.activations)),
                     formatBytes(static_cast<double>(m.transient)));
    // The memory policy as priced (keys left out filled in).
    const RecomputePolicy rc = e.policy.recompute;
    text += QStringLiteral("ZeRO stage %1 · recompute %2 · attention %3 · cross-entropy %5 · %6 kernels%4<br>")
                .arg(zeroStageOf(e.policy))
                .arg(rc == RecomputePolicy::Layers         ? QStringLiteral("per layer")
                     : rc == RecomputePolicy::SelectiveOps ? QStringLiteral("per op")
                                                            : QString::fromUtf8(recomputePolicyName(rc).data(), static_cast<qsizetype>(recomputePolicyName(rc).size())))
                .arg(QString::fromUtf8(attentionKernelName(e.policy.attention).data(), static_cast<qsizetype>(attentionKernelName(e.policy.attention).size())))
                .arg(e.policy.sequenceParallelAxis.empty()
                         ? QString()
                         : QStringLiteral(" · sequence parallel over %1").arg(QString::fromStdString(e.policy.sequenceParallelAxis)))
                .arg(QString::fromUtf8(crossEntropyKernelName(e.policy.crossEntropy).data(),
                                       static_cast<qsizetype>(crossEntropyKernelName(e.policy.crossEntropy).size())))
                .arg(QString::fromUtf8(kernelFusionName(e.policy.fusion).data(), static_cast<qsizetype>(kernelFusionName(e.policy.fusion).size())));
    if (const std::string layout = parallelismSummary(e, roundGraph, false); !layout.empty())
        text += QString::fromStdString(layout).toHtmlEscaped() + QStringLiteral("<br>");
    if (auto batch = planBatch(e, roundGraph)) text += batchText(*batch).toHtmlEscaped();
    if (planSeconds > 0 && e.stepSeconds() > 0) {
        const double ratio = e.stepSeconds() / planSeconds;
        text += QStringLiteral("<br>the plan: %1 per step, %2× %3 than this configuration")
                    .arg(formatSeconds(planSeconds))
                    .arg(ratio >= 1 ? ratio : 1 / ratio, 0, 'f', 2)
                    .arg(ratio >= 1 ? QStringLiteral("faster") : QStringLiteral("slower"));
    }
    return text;
}

QString formatCount(int64_t n) {
    QString digits = QString::number(n < 0 ? -n : n);
    for (int i = digits.size() - 3; i > 0; i -= 3) digits.insert(i, QLatin1Char(','));
    return n < 0 ? QStringLiteral("-") + digits : digits;
}

QString provenanceText(Provenance p) { return QString::fromUtf8(provenanceName(p).data(), static_cast<int>(provenanceName(p).size())); }




int64_t localResultBytes(const Graph& graph, const Plan& plan, OpId op) {
    const Op& o = graph.op(op);
    if (static_cast<size_t>(op) >= plan.tensors.size()) return o.type.bytes();
    int64_t split = 1;
    for (const auto& axes : plan.tensors[static_cast<size_t>(op)].result.dims())
        for (const auto& a : axes) split *= plan.mesh.axisSize(a).value_or(1);
    return o.type.bytes() / std::max<int64_t>(split, 1);
}

Pin segmentPin(const std::string& target, const AnalysisReport& report, int32_t firstBlock, const std::vector<int32_t>& combination) {
    Pin pin;
    if (!target.empty() && (target[0] == 'T' || target[0] == 't')) {
        pin.scope = Pin::Scope::SegmentType;
        pin.index = static_cast<int32_t>(std::stol(target.substr(1)));
    } else {
        pin.scope = Pin::Scope::Segment;
        pin.index = static_cast<int32_t>(std::stol(target));
    }
    for (size_t k = 0; k < combination.size(); ++k)
        pin.strategies.emplace_back(report.blocks.blocks[static_cast<size_t>(firstBlock) + k].strategies[static_cast<size_t>(combination[k])].label);
    return pin;
}

}  // namespace cfp::explorer
