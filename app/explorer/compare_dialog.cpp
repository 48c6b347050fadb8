#include "compare_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "view_format.h"

namespace cfp::explorer {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The labels of a segment's blocks, "x:rows | x:cols" (+rc where recomputed).
QString segmentLabels(const Plan& p, const SegmentPlan& s) {
    QStringList parts;
    for (int k = 0; k < s.blockCount; ++k) {
        const auto b = static_cast<size_t>(s.firstBlock + k);
        if (b >= p.blocks.size()) break;
        parts << qs(p.blocks[b].label) + (p.blocks[b].recompute ? QStringLiteral(" +rc") : QString());
    }
    return parts.join(QStringLiteral(" | "));
}

QString bytes(int64_t b) { return formatBytes(static_cast<double>(b)); }

}  // namespace

std::vector<CompareRow> comparePlans(const Plan& current, const Plan& saved, const Graph& graph) {
    std::vector<CompareRow> rows;
    auto add = [&rows](const QString& what, const QString& a, const QString& b) { rows.push_back({what, a, b, a != b}); };
    auto seconds = [&rows](const QString& what, double a, double b) {
        // Equal within 0.05%: the same plan priced again may differ in the last digits.
        rows.push_back({what, formatSeconds(a), formatSeconds(b) + (a > 0 ? QStringLiteral(" (%1)").arg(formatDelta(b - a)) : QString()),
                        std::abs(a - b) > 5e-4 * std::max(std::abs(a), std::abs(b))});
    };
    add(QObject::tr("model"), qs(current.model), qs(saved.model));
    add(QObject::tr("cluster"), QStringLiteral("%1 × %2 %3").arg(current.nodes).arg(current.gpusPerNode).arg(qs(current.hardwareName)),
        QStringLiteral("%1 × %2 %3").arg(saved.nodes).arg(saved.gpusPerNode).arg(qs(saved.hardwareName)));
    add(QObject::tr("mesh"), qs(meshShapeText(current.mesh)), qs(meshShapeText(saved.mesh)));
    seconds(QObject::tr("step time"), current.stepSeconds(), saved.stepSeconds());
    add(QObject::tr("step split"), stepSplitText(current), stepSplitText(saved));
    auto memory = [&](const QString& what, int64_t a, int64_t b) { add(what, bytes(a), bytes(b)); };
    memory(QObject::tr("memory per device"), current.memory.total(), saved.memory.total());
    memory(QObject::tr("  weights"), current.memory.weights, saved.memory.weights);
    memory(QObject::tr("  gradients"), current.memory.gradients, saved.memory.gradients);
    memory(QObject::tr("  optimizer state"), current.memory.optimizer, saved.memory.optimizer);
    memory(QObject::tr("  activations"), current.memory.activations, saved.memory.activations);
    auto policy = [](const Plan& p) {
        return QObject::tr("ZeRO-%1, recompute %2, attention %3, cross-entropy %4, %6 kernels%5")
            .arg(zeroStageOf(p.policy))
            .arg(qs(std::string(recomputePolicyName(p.policy.recompute))), qs(std::string(attentionKernelName(p.policy.attention))),
                 qs(std::string(crossEntropyKernelName(p.policy.crossEntropy))),
                 p.policy.sequenceParallelAxis.empty() ? QString() : QObject::tr(", sequence parallel over %1").arg(qs(p.policy.sequenceParallelAxis)))
            .arg(qs(std::string(kernelFusionName(p.policy.fusion))));
    };
    add(QObject::tr("memory policy"), policy(current), policy(saved));
    add(QObject::tr("rounds per step"), QString::number(current.policy.accumulation), QString::number(saved.policy.accumulation));
    const auto ops = static_cast<size_t>(graph.size());
    if (current.tensors.size() == ops && saved.tensors.size() == ops)
        add(QObject::tr("parallelism"), qs(parallelismSummary(current, graph)), qs(parallelismSummary(saved, graph)));
    QStringList pins, savedPins;
    for (const Pin& p : current.pins) pins << qs(p.toString());
    for (const Pin& p : saved.pins) savedPins << qs(p.toString());
    add(QObject::tr("pins"), pins.join(QStringLiteral("  ")), savedPins.join(QStringLiteral("  ")));
    // Segments by position, where both plans cut the model the same way.
    bool sameChain = current.segments.size() == saved.segments.size() && current.blocks.size() == saved.blocks.size();
    for (size_t i = 0; sameChain && i < current.segments.size(); ++i)
        sameChain = current.segments[i].firstBlock == saved.segments[i].firstBlock && current.segments[i].blockCount == saved.segments[i].blockCount;
    if (!sameChain) {
        rows.push_back({QObject::tr("segments"), QObject::tr("%1 segments").arg(current.segments.size()),
                        QObject::tr("%1 segments, cut differently: not compared one by one").arg(saved.segments.size()), true});
        return rows;
    }
    int same = 0;
    for (size_t i = 0; i < current.segments.size(); ++i) {
        const SegmentPlan& a = current.segments[i];
        const SegmentPlan& b = saved.segments[i];
        const QString la = segmentLabels(current, a), lb = segmentLabels(saved, b);
        const double ta = a.cost.total(), tb = b.cost.total();
        if (la == lb && std::abs(ta - tb) <= 5e-4 * std::max(ta, tb)) {
            ++same;
            continue;
        }
        rows.push_back({QObject::tr("segment #%1").arg(a.index), la + QStringLiteral(" · ") + formatSeconds(ta),
                        lb + QStringLiteral(" · ") + formatSeconds(tb), true});
    }
    rows.push_back({QObject::tr("other segments"), QObject::tr("%1 the same in both").arg(same), QString(), false});
    return rows;
}

CompareDialog::CompareDialog(const Plan& current, const Plan& saved, const Graph& graph, const QString& savedName, QWidget* parent)
    : QDialog(parent) {
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare plans"));
    auto* layout = new QVBoxLayout(this);
    auto* caption = new QLabel(tr("The current plan against %1; differences in bold.").arg(savedName), this);
    caption->setWordWrap(true);
    layout->addWidget(caption);
    m_table = new QTreeWidget(this);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setRootIsDecorated(false);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(true);
    m_table->setHeaderLabels({tr("what"), tr("current plan"), tr("saved plan")});
    for (const CompareRow& r : comparePlans(current, saved, graph)) {
        auto* item = new QTreeWidgetItem(m_table, {r.what, r.current, r.saved});
        for (int c = 0; c < 3; ++c) item->setToolTip(c, item->text(c));
        if (r.differs) {
            QFont f = item->font(0);
            f.setBold(true);
            for (int c = 0; c < 3; ++c) item->setFont(c, f);
        }
    }
    m_table->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_table->header()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->header()->setSectionResizeMode(2, QHeaderView::Stretch);
    layout->addWidget(m_table, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(900, 520);
}

}  // namespace cfp::explorer
