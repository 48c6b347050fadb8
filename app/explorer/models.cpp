#include "models.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>

#include <algorithm>
#include <set>

namespace cfp::explorer {

namespace {

// Internal ids: the top two bits say what a row is, the rest where it is.
constexpr quintptr kLevelShift = 62;
constexpr quintptr kSegmentLevel = 0, kBlockLevel = 1, kMemberLevel = 2, kLaterLevel = 3;
constexpr quintptr kMemberBits = 24;
constexpr quintptr kMask = (quintptr{1} << kLevelShift) - 1;

quintptr levelOf(quintptr id) { return id >> kLevelShift; }
quintptr make(quintptr level, quintptr value) { return (level << kLevelShift) | (value & kMask); }

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString combinationText(const AnalysisReport& report, int firstBlock, const std::vector<int32_t>& combination) {
    QStringList parts;
    for (size_t k = 0; k < combination.size(); ++k) {
        if (combination[k] < 0) {
            parts << QStringLiteral("*");
            continue;
        }
        parts << qs(report.blocks.blocks[static_cast<size_t>(firstBlock) + k].strategies[static_cast<size_t>(combination[k])].label);
    }
    return parts.join(QStringLiteral(" | "));
}

int64_t blockOpCount(const ParallelBlock& b) { return static_cast<int64_t>(b.members.size()); }

}  // namespace

QColor blockColor(int positionInSegment) {
    static const QColor kPalette[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
                                      QColor(0xb0, 0x7a, 0xa1), QColor(0xed, 0xc9, 0x48), QColor(0x76, 0xb7, 0xb2),
                                      QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f), QColor(0xe1, 0x57, 0x59),
                                      QColor(0xba, 0xb0, 0xac)};
    return kPalette[static_cast<size_t>(std::max(0, positionInSegment)) % std::size(kPalette)];
}

// ---------------------------------------------------------------------------------------------
// Strategy glossary

namespace {

// One axis assignment ("x:rows") in the terms people use. `devices`: " (8 devices)" or empty.
// Block strategies are made in blocks.cpp (BlockFinder::enumerateStrategies): per mesh axis one
// factor of the block's entry matmul — a batch factor ("batch", "batch<i>" when it has several),
// the outermost free factor of its input ("rows"), that of its weight ("cols"), a contracted factor
// ("contract", "contract<i>"), or none ("-").
QString termText(const QString& axis, const QString& choice, const QString& devices) {
    const QString over = QObject::tr("over mesh axis %1%2").arg(axis, devices);
    if (choice == QLatin1String("rows"))
        return QObject::tr("the matmul's input rows — its outermost free dimension, in practice the batch of sequences (else the "
                           "sequence) — split %1: data parallel (each device its share of the sequences, weight gradients "
                           "all-reduced); sequence parallel when the rows are the sequence")
            .arg(over);
    if (choice == QLatin1String("cols"))
        return QObject::tr("the output columns (the weight's output features) split %1: tensor parallel, column-parallel linear "
                           "(Megatron's ColumnParallelLinear, DTensor's ColwiseParallel; the input gradient is all-reduced)")
            .arg(over);
    if (choice.startsWith(QLatin1String("contract")))
        return QObject::tr("the contracted dimension%1 (the weight's input features) split %2: tensor parallel, row-parallel "
                           "linear (Megatron's RowParallelLinear, DTensor's RowwiseParallel); partial sums all-reduced or reduce-scattered")
            .arg(choice.size() > 8 ? QObject::tr(" %1").arg(choice.mid(8)) : QString(), over);
    if (choice.startsWith(QLatin1String("batch")))
        return QObject::tr("batch dimension%1 of a batched matmul split %2: data parallel where it is the batch of sequences "
                           "(usually batch0), tensor parallel where it is the attention heads (heads split, as in Megatron)")
            .arg(choice.size() > 5 ? QObject::tr(" %1").arg(choice.mid(5)) : QString(), over);
    if (choice == QLatin1String("-")) return QObject::tr("mesh axis %1 unused: the block is replicated over it%2").arg(axis, devices);
    return QObject::tr("factor %1 of the block's matmul split %2").arg(choice, over);
}

QString recomputeText() {
    return QObject::tr("+recompute — the block's forward activations are recomputed in the backward pass instead of kept "
                       "(activation checkpointing): less memory, more compute");
}

}  // namespace

QString strategyGlossary(const QString& label, const Mesh* mesh) {
    static const QRegularExpression term(QStringLiteral("([A-Za-z_][A-Za-z0-9_]*):(rows|cols|contract\\d*|batch\\d*|-)"));
    QStringList lines;
    std::set<QString> seen;
    for (auto it = term.globalMatch(label); it.hasNext();) {
        const auto m = it.next();
        if (!seen.insert(m.captured(0)).second) continue;
        const QString axis = m.captured(1);
        QString devices;
        if (mesh)
            if (const MeshAxis* a = mesh->findAxis(axis.toStdString())) devices = QObject::tr(" (%1 devices)").arg(a->size);
        lines << m.captured(0) + QStringLiteral(" — ") + termText(axis, m.captured(2), devices);
    }
    if (label.contains(QLatin1String("+recompute"))) lines << recomputeText();
    if (lines.size() > 1 && label.contains(QLatin1Char(',')))
        lines << QObject::tr("Assignments to several axes compose (e.g. data parallel over one, tensor parallel over another).");
    return lines.join(QLatin1Char('\n'));
}

QString strategyGlossaryHtml() {
    QString h = QObject::tr("<p><b>Strategy labels</b> name how a block splits over each mesh axis (axis:choice):</p><ul>");
    const QString x = QStringLiteral("x");
    for (const char* choice : {"rows", "cols", "contract", "batch0", "-"})
        h += QStringLiteral("<li><b>x:%1</b> — %2</li>").arg(QString::fromLatin1(choice), termText(x, QString::fromLatin1(choice), {}).toHtmlEscaped());
    const QString rc = recomputeText();
    const qsizetype dash = rc.indexOf(QStringLiteral(" — "));
    h += QStringLiteral("<li><b>%1</b>%2</li>").arg(rc.left(dash).toHtmlEscaped(), rc.mid(dash).toHtmlEscaped());
    h += QObject::tr("<li>Several axes (<b>x:rows,y:cols</b>) compose: e.g. data parallel over x and tensor parallel over y.</li></ul>");
    return h;
}

// ---------------------------------------------------------------------------------------------
// Cost hints

std::vector<std::vector<StrategyCost>> strategyCosts(const PlanData& plan, const std::vector<int32_t>& segments) {
    std::vector<std::vector<StrategyCost>> out;
    const PlanProblem* problem = plan.outcome ? plan.outcome->problem.get() : nullptr;
    if (!problem || segments.empty()) return out;
    const Assignment& base = plan.assignment();
    if (!problem->checkAssignment(base)) return out;
    const auto& cover = problem->analysis().cover;
    for (int32_t s : segments)
        if (s < 0 || static_cast<size_t>(s) >= cover.segments.size()) return out;
    const Segment& first = cover.segments[static_cast<size_t>(segments.front())];
    const int64_t limit = plan.plan().memoryLimitBytes;
    Assignment a = base;
    for (int k = 0; k < first.blockCount; ++k) {
        const int b0 = first.firstBlock + k;
        const size_t strategies = problem->analysis().blocks.blocks[static_cast<size_t>(b0)].strategies.size();
        std::vector<StrategyCost> row;
        for (size_t st = 0; st < strategies; ++st) {
            for (int32_t s : segments) {
                const Segment& seg = cover.segments[static_cast<size_t>(s)];
                if (k >= seg.blockCount) continue;
                const int b = seg.firstBlock + k;
                // The plan's recomputation for this block where the strategy offers it, else what it offers.
                const BlockAssignment* pick = nullptr;
                for (const BlockAssignment& c : problem->choices(b)) {
                    if (c.strategy != static_cast<int32_t>(st)) continue;
                    if (!pick || c.recompute == base[static_cast<size_t>(b)].recompute) pick = &c;
                    if (c.recompute == base[static_cast<size_t>(b)].recompute) break;
                }
                if (pick) a[static_cast<size_t>(b)] = *pick;
            }
            StrategyCost c;
            c.strategy = static_cast<int32_t>(st);
            c.recompute = a[static_cast<size_t>(b0)].recompute;
            c.stepSeconds = problem->objective(a);
            c.memoryBytes = problem->memory(a);
            c.fits = limit <= 0 || c.memoryBytes <= limit;
            c.current = base[static_cast<size_t>(b0)].strategy == c.strategy;
            row.push_back(c);
        }
        for (int32_t s : segments) {  // back to the plan for the next block
            const Segment& seg = cover.segments[static_cast<size_t>(s)];
            if (k < seg.blockCount) a[static_cast<size_t>(seg.firstBlock + k)] = base[static_cast<size_t>(seg.firstBlock + k)];
        }
        const bool anyFits = std::any_of(row.begin(), row.end(), [](const StrategyCost& c) { return c.fits; });
        StrategyCost* fastest = nullptr;
        for (StrategyCost& c : row)
            if ((c.fits || !anyFits) && (!fastest || c.stepSeconds < fastest->stepSeconds)) fastest = &c;
        if (fastest) fastest->fastest = true;
        out.push_back(std::move(row));
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// StructureModel

StructureModel::StructureModel(QObject* parent) : QAbstractItemModel(parent) {}

void StructureModel::setAnalysis(std::shared_ptr<const AnalysisData> analysis) {
    beginResetModel();
    m_analysis = std::move(analysis);
    m_plan.reset();
    m_blockSeconds.clear();
    endResetModel();
}

void StructureModel::setPlan(std::shared_ptr<const PlanData> plan) {
    // The rows stay; every plan column may change, expanded branches included.
    emit layoutAboutToBeChanged();
    m_plan = std::move(plan);
    m_blockSeconds.clear();
    if (m_plan && m_analysis && planMatches(*m_plan, *m_analysis)) {
        // The evaluator's per-block rollup (blocks past its end hold no ops).
        m_blockSeconds.assign(m_analysis->report->blocks.blocks.size(), 0.0);
        const auto& blockCost = m_plan->outcome->evaluation.blockCost;
        for (size_t b = 0; b < m_blockSeconds.size() && b < blockCost.size(); ++b) m_blockSeconds[b] = blockCost[b].total();
    } else {
        m_plan.reset();
    }
    emit layoutChanged();
}

int StructureModel::columnCount(const QModelIndex&) const { return ColCount; }

int StructureModel::rowCount(const QModelIndex& parent) const {
    if (!m_analysis) return 0;
    const AnalysisReport& r = *m_analysis->report;
    if (!parent.isValid())
        return static_cast<int>(r.cover.segments.size()) + (r.blocks.resolvedLater.empty() ? 0 : 1);
    if (parent.column() != 0) return 0;
    const quintptr id = parent.internalId();
    switch (levelOf(id)) {
    case kSegmentLevel: {
        const size_t s = id & kMask;
        if (s == r.cover.segments.size()) return static_cast<int>(r.blocks.resolvedLater.size());
        return r.cover.segments[s].blockCount;
    }
    case kBlockLevel: return static_cast<int>(r.blocks.blocks[id & kMask].members.size());
    default: return 0;
    }
}

QModelIndex StructureModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, make(kSegmentLevel, static_cast<quintptr>(row)));
    const AnalysisReport& r = *m_analysis->report;
    const quintptr id = parent.internalId();
    if (levelOf(id) == kSegmentLevel) {
        const size_t s = id & kMask;
        if (s == r.cover.segments.size()) return createIndex(row, column, make(kLaterLevel, static_cast<quintptr>(row)));
        return createIndex(row, column, make(kBlockLevel, static_cast<quintptr>(r.cover.segments[s].firstBlock + row)));
    }
    if (levelOf(id) == kBlockLevel)
        return createIndex(row, column, make(kMemberLevel, ((id & kMask) << kMemberBits) | static_cast<quintptr>(row)));
    return {};
}

QModelIndex StructureModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || !m_analysis) return {};
    const quintptr id = child.internalId();
    const AnalysisReport& r = *m_analysis->report;
    switch (levelOf(id)) {
    case kSegmentLevel: return {};
    case kBlockLevel: {
        const int seg = m_analysis->segmentOfBlock[id & kMask];
        return createIndex(seg, 0, make(kSegmentLevel, static_cast<quintptr>(seg)));
    }
    case kMemberLevel: {
        const quintptr block = (id & kMask) >> kMemberBits;
        const int seg = m_analysis->segmentOfBlock[block];
        const int row = static_cast<int>(block) - r.cover.segments[static_cast<size_t>(seg)].firstBlock;
        return createIndex(row, 0, make(kBlockLevel, block));
    }
    case kLaterLevel: {
        const int row = static_cast<int>(r.cover.segments.size());
        return createIndex(row, 0, make(kSegmentLevel, static_cast<quintptr>(row)));
    }
    }
    return {};
}

Selection StructureModel::selectionAt(const QModelIndex& index) const {
    if (!index.isValid() || !m_analysis) return {};
    const AnalysisReport& r = *m_analysis->report;
    const quintptr id = index.internalId();
    switch (levelOf(id)) {
    case kSegmentLevel:
        if ((id & kMask) == r.cover.segments.size()) return {};
        return {Selection::Kind::Segment, static_cast<int32_t>(id & kMask)};
    case kBlockLevel: return {Selection::Kind::Block, static_cast<int32_t>(id & kMask)};
    case kMemberLevel: {
        const quintptr block = (id & kMask) >> kMemberBits;
        const quintptr member = id & ((quintptr{1} << kMemberBits) - 1);
        return {Selection::Kind::Op, r.blocks.blocks[block].members[member]};
    }
    case kLaterLevel: return {Selection::Kind::Op, r.blocks.resolvedLater[id & kMask].op};
    }
    return {};
}

QModelIndex StructureModel::indexFor(const Selection& sel) const {
    if (!m_analysis || sel.kind == Selection::Kind::None) return {};
    const AnalysisReport& r = *m_analysis->report;
    switch (sel.kind) {
    case Selection::Kind::Segment:
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.cover.segments.size()) return {};
        return index(sel.id, 0);
    case Selection::Kind::Block: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blocks.size()) return {};
        const int seg = m_analysis->segmentOfBlock[static_cast<size_t>(sel.id)];
        return index(sel.id - r.cover.segments[static_cast<size_t>(seg)].firstBlock, 0, index(seg, 0));
    }
    case Selection::Kind::Op: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blockOf.size()) return {};
        const int32_t block = r.blocks.blockOf[static_cast<size_t>(sel.id)];
        if (block >= 0) {
            const QModelIndex bi = indexFor({Selection::Kind::Block, block});
            const int64_t member = r.blocks.blocks[static_cast<size_t>(block)].memberIndex(sel.id);
            return member < 0 ? bi : index(static_cast<int>(member), 0, bi);
        }
        const auto& later = r.blocks.resolvedLater;
        auto it = std::lower_bound(later.begin(), later.end(), sel.id, [](const UnassignedOp& u, OpId op) { return u.op < op; });
        if (it == later.end() || it->op != sel.id) return {};
        return index(static_cast<int>(it - later.begin()), 0, index(static_cast<int>(r.cover.segments.size()), 0));
    }
    default: return {};
    }
}

QVariant StructureModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case ColName: return tr("Segment / block / op");
    case ColOps: return tr("Ops");
    case ColStrategy: return tr("Plan");
    case ColTime: return tr("Time/step");
    }
    return {};
}

QVariant StructureModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_analysis) return {};
    const AnalysisReport& r = *m_analysis->report;
    const Graph& g = m_analysis->graph();
    const quintptr id = index.internalId();
    const int col = index.column();
    const Plan* plan = m_plan ? &m_plan->plan() : nullptr;
    if (role == SelectionRole) return QVariant::fromValue(selectionAt(index));
    if (role == Qt::TextAlignmentRole && col == ColTime) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    auto opRow = [&](OpId op) -> QVariant {
        const Op& o = g.op(op);
        if (role == Qt::ToolTipRole) return qs(o.scope);
        if (role != Qt::DisplayRole) return {};
        switch (col) {
        case ColName: return qs(o.name);
        case ColOps: return qs(std::string(opKindName(o.kind))) + QLatin1Char(' ') + qs(o.type.toString());
        case ColStrategy: return plan ? qs(plan->tensors[static_cast<size_t>(op)].result.toString()) : QVariant();
        case ColTime:
            if (!m_plan) return {};
            return formatSeconds(m_plan->outcome->evaluation.opCost[static_cast<size_t>(op)].total());
        }
        return {};
    };
    switch (levelOf(id)) {
    case kSegmentLevel: {
        const size_t s = id & kMask;
        if (s == r.cover.segments.size()) {
            if (role == Qt::ToolTipRole) {
                const OpDecisionCounts& d = m_analysis->decisions;
                QString opaque;
                for (const auto& [target, n] : d.opaqueByTarget)
                    opaque += (opaque.isEmpty() ? QString() : QStringLiteral(", ")) + qs(target) + QLatin1Char(' ') + QString::number(n);
                return tr("Of %1 ops: %2 in blocks, %3 follow a block, %4 pulled by a consumer, %5 constant-folded, "
                          "%6 fixed (%7 replicated).\nOpaque ops (no sharding rule, block boundaries): %8")
                    .arg(g.size())
                    .arg(d.inBlocks)
                    .arg(d.follow)
                    .arg(d.pulled)
                    .arg(d.constantFolded)
                    .arg(d.fixedFollowing + d.replicated)
                    .arg(d.replicated)
                    .arg(opaque.isEmpty() ? tr("none") : opaque);
            }
            if (role != Qt::DisplayRole) return {};
            if (col == ColName) return tr("outside blocks (resolved after the plan)");
            if (col == ColOps) return QString::number(r.blocks.resolvedLater.size());
            return {};
        }
        const Segment& seg = r.cover.segments[s];
        if (role == Qt::DecorationRole && col == ColName) return {};
        if (role == Qt::ToolTipRole) {
            if (col == ColStrategy && plan) return strategyGlossary(combinationText(r, seg.firstBlock, plan->segments[s].combination), &plan->mesh);
            return tr("Segment %1 of type T%2: blocks %3–%4").arg(s).arg(seg.type).arg(seg.firstBlock).arg(seg.firstBlock + seg.blockCount - 1);
        }
        if (role != Qt::DisplayRole) return {};
        switch (col) {
        case ColName:
            return QStringLiteral("#%1 %2 (T%3)").arg(s).arg(qs(m_analysis->typeNames[static_cast<size_t>(seg.type)])).arg(seg.type);
        case ColOps: {
            int64_t ops = 0;
            for (int k = 0; k < seg.blockCount; ++k) ops += blockOpCount(r.blocks.blocks[static_cast<size_t>(seg.firstBlock + k)]);
            return tr("%1 blocks · %2 ops").arg(seg.blockCount).arg(ops);
        }
        case ColStrategy:
            if (!plan) return {};
            return combinationText(r, seg.firstBlock, plan->segments[s].combination);
        case ColTime: return plan ? formatSeconds(plan->segments[s].cost.total()) : QVariant();
        }
        return {};
    }
    case kBlockLevel: {
        const size_t b = id & kMask;
        const ParallelBlock& block = r.blocks.blocks[b];
        const int seg = m_analysis->segmentOfBlock[b];
        const int pos = static_cast<int>(b) - r.cover.segments[static_cast<size_t>(seg)].firstBlock;
        if (role == Qt::DecorationRole && col == ColName) return blockColor(pos);
        if (role == Qt::ToolTipRole) {
            if (col == ColStrategy && plan)
                return strategyGlossary(qs(plan->blocks[b].label) + (plan->blocks[b].recompute ? QStringLiteral(" +recompute") : QString()), &plan->mesh);
            return tr("Block %1, entry %2 (%3 strategies)").arg(b).arg(qs(g.op(block.entry).name)).arg(block.strategies.size());
        }
        if (role != Qt::DisplayRole) return {};
        switch (col) {
        case ColName: return QStringLiteral("b%1 %2").arg(b).arg(qs(g.op(block.entry).scope));
        case ColOps: return tr("%1 ops").arg(block.members.size());
        case ColStrategy:
            if (!plan) return {};
            return qs(plan->blocks[b].label) + (plan->blocks[b].recompute ? tr(" +recompute") : QString()) +
                   (plan->blocks[b].pinned ? tr(" (pinned)") : QString());
        case ColTime: return m_blockSeconds.empty() ? QVariant() : formatSeconds(m_blockSeconds[b]);
        }
        return {};
    }
    case kMemberLevel: {
        const quintptr block = (id & kMask) >> kMemberBits;
        const quintptr member = id & ((quintptr{1} << kMemberBits) - 1);
        return opRow(r.blocks.blocks[block].members[member]);
    }
    case kLaterLevel: return opRow(r.blocks.resolvedLater[id & kMask].op);
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// PlanModel

PlanModel::PlanModel(QObject* parent) : QAbstractItemModel(parent) {}

void PlanModel::setData(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanData> previous,
                        const std::vector<Pin>& pins) {
    beginResetModel();
    m_plan = std::move(plan);
    m_previous = std::move(previous);
    m_pins = pins;
    m_segmentsOfType.clear();
    if (m_plan) {
        const auto& cover = m_plan->analysis->report->cover;
        m_segmentsOfType.resize(cover.types.size());
        for (size_t s = 0; s < cover.segments.size(); ++s)
            m_segmentsOfType[static_cast<size_t>(cover.segments[s].type)].push_back(static_cast<int32_t>(s));
    }
    endResetModel();
}

void PlanModel::setPins(const std::vector<Pin>& pins) {
    m_pins = pins;
    const int rows = rowCount();
    if (rows == 0) return;
    emit dataChanged(index(0, 0), index(rows - 1, ColCount - 1));
    for (int t = 0; t < rows; ++t) {
        const QModelIndex parent = index(t, 0);
        const int n = rowCount(parent);
        if (n > 0) emit dataChanged(index(0, 0, parent), index(n - 1, ColCount - 1, parent));
    }
}

PlanModel::Row PlanModel::rowOf(const QModelIndex& index) const {
    const quintptr id = index.internalId();
    return {levelOf(id) == 0, static_cast<int>(id & kMask)};
}

QModelIndex PlanModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, make(0, static_cast<quintptr>(row)));
    const Row p = rowOf(parent);
    return createIndex(row, column, make(1, static_cast<quintptr>(m_segmentsOfType[static_cast<size_t>(p.id)][static_cast<size_t>(row)])));
}

QModelIndex PlanModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || !m_plan) return {};
    const Row r = rowOf(child);
    if (r.isType) return {};
    const int type = m_plan->analysis->report->cover.segments[static_cast<size_t>(r.id)].type;
    return createIndex(type, 0, make(0, static_cast<quintptr>(type)));
}

int PlanModel::rowCount(const QModelIndex& parent) const {
    if (!m_plan) return 0;
    if (!parent.isValid()) return static_cast<int>(m_segmentsOfType.size());
    if (parent.column() != 0) return 0;
    const Row r = rowOf(parent);
    return r.isType ? static_cast<int>(m_segmentsOfType[static_cast<size_t>(r.id)].size()) : 0;
}

int PlanModel::columnCount(const QModelIndex&) const { return ColCount; }

QModelIndex PlanModel::segmentIndex(int segment, int column) const {
    if (!m_plan || segment < 0 || static_cast<size_t>(segment) >= m_plan->plan().segments.size()) return {};
    const int type = m_plan->analysis->report->cover.segments[static_cast<size_t>(segment)].type;
    const auto& list = m_segmentsOfType[static_cast<size_t>(type)];
    const int row = static_cast<int>(std::find(list.begin(), list.end(), segment) - list.begin());
    return index(row, column, index(type, 0));
}

QModelIndex PlanModel::typeIndex(int type, int column) const { return index(type, column); }

std::vector<int32_t> PlanModel::combinationOf(const Row& row) const {
    const Plan& p = m_plan->plan();
    const int seg = row.isType ? m_segmentsOfType[static_cast<size_t>(row.id)].front() : row.id;
    return p.segments[static_cast<size_t>(seg)].combination;
}

const Pin* PlanModel::pinFor(const std::string& target) const {
    // The last pin for a target is the one the user set most recently.
    for (auto it = m_pins.rbegin(); it != m_pins.rend(); ++it)
        if (it->target() == target) return &*it;
    return nullptr;
}

std::vector<int32_t> PlanModel::pinnedCombination(const std::string& target, const Row& row) const {
    const Pin* pin = pinFor(target);
    const auto& report = *m_plan->analysis->report;
    const int seg = row.isType ? m_segmentsOfType[static_cast<size_t>(row.id)].front() : row.id;
    const Segment& s = report.cover.segments[static_cast<size_t>(seg)];
    std::vector<int32_t> out(static_cast<size_t>(s.blockCount), -1);
    if (!pin || pin->strategies.size() != out.size()) return out;
    for (size_t k = 0; k < out.size(); ++k) {
        if (!pin->strategies[k]) continue;
        const auto& st = report.blocks.blocks[static_cast<size_t>(s.firstBlock) + k].strategies;
        for (size_t i = 0; i < st.size(); ++i)
            if (st[i].label == *pin->strategies[k] || std::to_string(i) == *pin->strategies[k]) out[k] = static_cast<int32_t>(i);
    }
    return out;
}

QVariant PlanModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ColCombination: return tr("Strategy of each block of the segment; double-click to choose one by hand (pins it)");
        case ColPinned: return tr("Pinned: the search keeps this combination");
        case ColDelta: return tr("Change of the predicted time against the previous plan");
        }
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
    case ColSegment: return tr("Segment");
    case ColCombination: return tr("Combination (per block)");
    case ColTime: return tr("Time/step");
    case ColMemory: return tr("Memory/device");
    case ColPinned: return tr("Pin");
    case ColDelta: return tr("Δ vs previous");
    }
    return {};
}

Qt::ItemFlags PlanModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == ColCombination) f |= Qt::ItemIsEditable;
    if (index.column() == ColPinned) f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant PlanModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_plan) return {};
    const Row row = rowOf(index);
    const Plan& p = m_plan->plan();
    const auto& report = *m_plan->analysis->report;
    const std::string target = row.isType ? "T" + std::to_string(row.id) : std::to_string(row.id);
    const int firstSeg = row.isType ? m_segmentsOfType[static_cast<size_t>(row.id)].front() : row.id;
    const int firstBlock = report.cover.segments[static_cast<size_t>(firstSeg)].firstBlock;
    const std::vector<int32_t>* segments = row.isType ? &m_segmentsOfType[static_cast<size_t>(row.id)] : nullptr;
    const int col = index.column();

    if (role == CombinationRole) {
        auto c = combinationOf(row);
        return QVariant::fromValue(QList<int>(c.begin(), c.end()));
    }
    if (role == FirstBlockRole) return firstBlock;
    if (role == PinTargetRole) return qs(target);

    const Pin* pin = pinFor(target);
    const Pin* typePin = row.isType ? nullptr : pinFor("T" + std::to_string(report.cover.segments[static_cast<size_t>(row.id)].type));
    if (role == Qt::CheckStateRole && col == ColPinned)
        return pin ? Qt::Checked : (typePin ? Qt::PartiallyChecked : Qt::Unchecked);
    if (role == Qt::TextAlignmentRole && (col == ColTime || col == ColMemory || col == ColDelta))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);

    // Per-row figures: a type row shows the sum over its segments; a segment row its own.
    auto segTime = [&](int s) { return p.segments[static_cast<size_t>(s)].cost.total(); };
    double seconds = 0;
    int64_t bytes = 0;
    std::vector<int> rows = segments ? std::vector<int>(segments->begin(), segments->end()) : std::vector<int>{row.id};
    for (int s : rows) {
        seconds += segTime(s);
        bytes += p.segments[static_cast<size_t>(s)].memoryBytes;
    }
    std::optional<double> delta;
    if (m_previous && m_previous->plan().segments.size() == p.segments.size()) {
        double before = 0;
        for (int s : rows) before += m_previous->plan().segments[static_cast<size_t>(s)].cost.total();
        delta = seconds - before;
    }

    if (role == Qt::ToolTipRole) {
        if (col == ColCombination) {
            const QString glossary = strategyGlossary(data(index, Qt::DisplayRole).toString(), &p.mesh);
            if (pin) return tr("Pinned by %1").arg(qs(pin->toString())) + (glossary.isEmpty() ? QString() : QStringLiteral("\n\n") + glossary);
            return glossary.isEmpty() ? QVariant() : QVariant(glossary);
        }
        if (col == ColTime) {
            const CostBreakdown* c = segments ? nullptr : &p.segments[static_cast<size_t>(row.id)].cost;
            if (c)
                return tr("compute %1, collectives %2, resharding %3 (%4)")
                    .arg(formatSeconds(c->computeSeconds), formatSeconds(c->collectiveSeconds), formatSeconds(c->reshardSeconds),
                         provenanceText(c->provenance));
        }
        return {};
    }
    if (role == Qt::FontRole && pin) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::ForegroundRole && col == ColDelta && delta && *delta != 0)
        return QColor(*delta > 0 ? QColor(0xc0, 0x30, 0x30) : QColor(0x20, 0x80, 0x30));
    if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
    switch (col) {
    case ColSegment:
        if (row.isType)
            return QStringLiteral("T%1 %2 × %3").arg(row.id).arg(qs(m_plan->analysis->typeNames[static_cast<size_t>(row.id)])).arg(rows.size());
        return QStringLiteral("#%1").arg(row.id);
    case ColCombination: {
        std::vector<int32_t> c = combinationOf(row);
        bool mixed = false;
        if (segments)
            for (int s : *segments)
                if (p.segments[static_cast<size_t>(s)].combination != c) mixed = true;
        QString text = mixed ? tr("mixed (first: %1)").arg(combinationText(report, firstBlock, c)) : combinationText(report, firstBlock, c);
        if (pin) {
            const auto pinned = pinnedCombination(target, row);
            if (pinned != c) text += tr("  → pinned %1, re-search").arg(combinationText(report, firstBlock, pinned));
        }
        return text;
    }
    case ColTime: return segments ? tr("%1 (Σ)").arg(formatSeconds(seconds)) : formatSeconds(seconds);
    case ColMemory: return formatBytes(static_cast<double>(bytes));
    case ColPinned: return pin ? tr("pinned") : (typePin ? tr("by type") : QString());
    case ColDelta:
        if (!delta) return {};
        if (*delta == 0) return QStringLiteral("=");
        return formatDelta(*delta);
    }
    return {};
}

bool PlanModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || !m_plan) return false;
    const Row row = rowOf(index);
    const QString target = row.isType ? QStringLiteral("T%1").arg(row.id) : QString::number(row.id);
    if (index.column() == ColPinned && role == Qt::CheckStateRole) {
        if (value.value<Qt::CheckState>() == Qt::Checked) {
            auto c = combinationOf(row);
            emit pinRequested(target, QList<int>(c.begin(), c.end()));
        } else {
            emit unpinRequested(target);
        }
        return true;
    }
    if (index.column() == ColCombination && role == Qt::EditRole) {
        const QList<int> combo = value.value<QList<int>>();
        const int firstSeg = row.isType ? m_segmentsOfType[static_cast<size_t>(row.id)].front() : row.id;
        const auto& report = *m_plan->analysis->report;
        const Segment& seg = report.cover.segments[static_cast<size_t>(firstSeg)];
        if (combo.size() != seg.blockCount) return false;
        for (int k = 0; k < seg.blockCount; ++k)
            if (combo[k] < 0 || static_cast<size_t>(combo[k]) >= report.blocks.blocks[static_cast<size_t>(seg.firstBlock + k)].strategies.size())
                return false;
        emit pinRequested(target, combo);
        return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// CombinationDelegate

namespace {

// The popup's items: a strategy's label and its cost hint (the closed box shows the label only,
// so the editor stays as wide as the labels).
class CostHintItemDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        const QString hint = index.data(CombinationDelegate::CostHintRole).toString();
        if (!hint.isEmpty()) option->text += QStringLiteral("   —   ") + hint;
    }
};

}  // namespace

QWidget* CombinationDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex& index) const {
    auto* model = qobject_cast<const PlanModel*>(index.model());
    if (!model || !model->plan()) return nullptr;
    const PlanData& plan = *model->plan();
    const auto& report = *plan.analysis->report;
    const int firstBlock = index.data(PlanModel::FirstBlockRole).toInt();
    const QList<int> combo = index.data(PlanModel::CombinationRole).value<QList<int>>();
    // The segments the pin would fix: this one, or every segment of the type.
    const QString target = index.data(PlanModel::PinTargetRole).toString();
    std::vector<int32_t> segments;
    if (target.startsWith(QLatin1Char('T'))) {
        const int type = target.mid(1).toInt();
        for (size_t s = 0; s < report.cover.segments.size(); ++s)
            if (report.cover.segments[s].type == type) segments.push_back(static_cast<int32_t>(s));
    } else {
        segments.push_back(target.toInt());
    }
    const auto costs = strategyCosts(plan, segments);
    auto* editor = new QWidget(parent);
    editor->setAutoFillBackground(true);
    auto* layout = new QHBoxLayout(editor);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    for (int k = 0; k < combo.size(); ++k) {
        auto* box = new QComboBox(editor);
        box->setObjectName(QStringLiteral("block%1").arg(k));
        box->setItemDelegate(new CostHintItemDelegate(box));
        const ParallelBlock& b = report.blocks.blocks[static_cast<size_t>(firstBlock + k)];
        const std::vector<StrategyCost>* row = static_cast<size_t>(k) < costs.size() ? &costs[static_cast<size_t>(k)] : nullptr;
        const StrategyCost* current = nullptr;
        if (row)
            for (const StrategyCost& c : *row)
                if (c.current) current = &c;
        for (size_t s = 0; s < b.strategies.size(); ++s) {
            const QString label = qs(b.strategies[s].label);
            box->addItem(label);
            const int i = box->count() - 1;
            const QString glossary = strategyGlossary(label, &plan.plan().mesh);
            if (!row || s >= row->size()) {
                box->setItemData(i, glossary, Qt::ToolTipRole);
                continue;
            }
            const StrategyCost& c = (*row)[s];
            QString hint = tr("step %1").arg(formatSeconds(c.stepSeconds));
            if (current && !c.current) hint += QStringLiteral(" (%1)").arg(formatDelta(c.stepSeconds - current->stepSeconds));
            hint += tr(" · %1/device").arg(formatBytes(static_cast<double>(c.memoryBytes)));
            if (c.recompute && plan.plan().policy.recompute == RecomputePolicy::Auto) hint += tr(" · recomputed");
            if (!c.fits) hint += tr(" · does not fit");
            if (c.current) hint += tr(" · ◀ current");
            if (c.fastest) hint += tr(" · ★ fastest");
            box->setItemData(i, hint, CostHintRole);
            box->setItemData(i, c.stepSeconds, StepSecondsRole);
            box->setItemData(i, QVariant::fromValue<qint64>(c.memoryBytes), MemoryBytesRole);
            box->setItemData(i, label + QStringLiteral(" — ") + hint + QStringLiteral("\n\n") + glossary, Qt::ToolTipRole);
            if (c.current) {
                QFont f = box->font();
                f.setBold(true);
                box->setItemData(i, f, Qt::FontRole);
            }
            if (!c.fits) box->setItemData(i, QColor(0xc0, 0x1f, 0x1f), Qt::ForegroundRole);
        }
        // The popup as wide as its items with their hints (the closed box keeps the label's width).
        box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0) + 24);
        box->setToolTip(tr("Block %1 (%2)%3")
                            .arg(firstBlock + k)
                            .arg(qs(plan.model->graph().op(b.entry).scope))
                            .arg(row ? tr("\nEach strategy with the whole step's time and the memory per device when this block takes it%1, "
                                          "every other block as in the plan.")
                                           .arg(segments.size() > 1 ? tr(" in all %1 segments of the type").arg(segments.size()) : QString())
                                     : QString()));
        layout->addWidget(box);
    }
    return editor;
}

void CombinationDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    const QList<int> combo = index.data(PlanModel::CombinationRole).value<QList<int>>();
    const auto boxes = editor->findChildren<QComboBox*>();
    for (int k = 0; k < boxes.size() && k < combo.size(); ++k) boxes[k]->setCurrentIndex(combo[k]);
}

void CombinationDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const {
    QList<int> combo;
    for (QComboBox* box : editor->findChildren<QComboBox*>()) combo << box->currentIndex();
    if (combo != index.data(PlanModel::CombinationRole).value<QList<int>>()) model->setData(index, QVariant::fromValue(combo), Qt::EditRole);
}

void CombinationDelegate::updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option, const QModelIndex&) const {
    QRect r = option.rect;
    r.setWidth(std::max(r.width(), editor->sizeHint().width()));
    editor->setGeometry(r);
}

// ---------------------------------------------------------------------------------------------
// Properties

namespace {

QString esc(const std::string& s) { return qs(s).toHtmlEscaped(); }

QString costRow(const QString& label, const CostBreakdown& c) {
    return QStringLiteral("<tr><td>%1</td><td align=right><b>%2</b></td><td>compute %3 · collectives %4 · resharding %5 · <i>%6</i></td></tr>")
        .arg(label, formatSeconds(c.total()), formatSeconds(c.computeSeconds), formatSeconds(c.collectiveSeconds),
             formatSeconds(c.reshardSeconds), provenanceText(c.provenance));
}

CostBreakdown sumCosts(const PlanData& plan, int32_t block) {
    CostBreakdown sum;
    const auto& opCost = plan.outcome->evaluation.opCost;
    bool measured = false, modelled = false;
    for (const TensorPlan& t : plan.plan().tensors) {
        if (t.block != block) continue;
        const CostBreakdown& c = opCost[static_cast<size_t>(t.op)];
        sum.computeSeconds += c.computeSeconds;
        sum.collectiveSeconds += c.collectiveSeconds;
        sum.reshardSeconds += c.reshardSeconds;
        (c.provenance == Provenance::Modelled ? modelled : measured) = true;
    }
    sum.provenance = measured ? (modelled ? Provenance::Mixed : Provenance::Measured) : Provenance::Modelled;
    return sum;
}

}  // namespace

QString describeSelection(const AnalysisData& a, const PlanData* plan, const Selection& sel) {
    const AnalysisReport& r = *a.report;
    const Graph& g = a.graph();
    if (plan && !planMatches(*plan, a)) plan = nullptr;
    const Plan* p = plan ? &plan->plan() : nullptr;
    QString h;
    switch (sel.kind) {
    case Selection::Kind::None: {
        const GraphStats& s = a.model->stats;
        h += QStringLiteral("<h3>%1</h3>").arg(esc(g.name()));
        h += QStringLiteral("<table cellspacing=4>");
        h += QStringLiteral("<tr><td>source</td><td>%1</td></tr>").arg(esc(a.model->loaded->spec));
        h += QStringLiteral("<tr><td>ops</td><td>%1 (forward %2, backward %3, optimizer %4)</td></tr>")
                 .arg(s.ops).arg(s.opsByPhase[0]).arg(s.opsByPhase[1]).arg(s.opsByPhase[2]);
        h += QStringLiteral("<tr><td>parameters</td><td>%1 M (%2)</td></tr>")
                 .arg(QString::number(static_cast<double>(s.trainableParams) / 1e6, 'f', 1), formatBytes(static_cast<double>(s.trainableParamBytes)));
        h += QStringLiteral("<tr><td>FLOPs/step</td><td>%1 PFLOP</td></tr>").arg(QString::number(s.flops / 1e15, 'f', 2));
        h += QStringLiteral("<tr><td>mesh</td><td>%1</td></tr>").arg(esc(r.blocks.mesh.toString()));
        h += QStringLiteral("<tr><td>blocks</td><td>%1 (check: %2)</td></tr>").arg(r.blocks.blocks.size()).arg(esc(r.check.summary()));
        h += QStringLiteral("<tr><td>segments</td><td>%1 of %2 types</td></tr>").arg(r.cover.segments.size()).arg(r.cover.types.size());
        h += QStringLiteral("<tr><td>search space</td><td>10^%1 op level, 10^%2 block level, 10^%3 segment level</td></tr>")
                 .arg(r.space.opLevelLog10, 0, 'f', 0).arg(r.space.blockLevelLog10, 0, 'f', 1).arg(r.space.segmentLevelLog10, 0, 'f', 2);
        h += QStringLiteral("</table>");
        if (p) {
            h += QStringLiteral("<h4>Plan</h4><table cellspacing=4>") + costRow(QStringLiteral("step"), p->step);
            h += QStringLiteral("<tr><td>memory</td><td align=right><b>%1</b></td><td>of %2 usable per device</td></tr>")
                     .arg(formatBytes(static_cast<double>(p->memory.total())), formatBytes(static_cast<double>(p->memoryLimitBytes)));
            if (const auto b = planBatch(*p, a.model->graph()))
                h += QStringLiteral("<tr><td>batch</td><td colspan=2>%1</td></tr>").arg(esc(batchText(*b).toStdString()));
            h += QStringLiteral("</table>");
        }
        return h;
    }
    case Selection::Kind::Segment: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.cover.segments.size()) return {};
        const Segment& seg = r.cover.segments[static_cast<size_t>(sel.id)];
        const SegmentType& t = r.cover.types[static_cast<size_t>(seg.type)];
        h += QStringLiteral("<h3>Segment #%1 — %2 (type T%3)</h3>").arg(sel.id).arg(esc(a.typeNames[static_cast<size_t>(seg.type)])).arg(seg.type);
        h += QStringLiteral("<p>%1 blocks (b%2–b%3); the type occurs %4 times; %5 combinations of its blocks' strategies</p>")
                 .arg(seg.blockCount).arg(seg.firstBlock).arg(seg.firstBlock + seg.blockCount - 1).arg(t.occurrences)
                 .arg(t.combinations == INT64_MAX ? QStringLiteral("10^%1").arg(t.combinationsLog10, 0, 'f', 1) : formatCount(t.combinations));
        if (p) {
            const SegmentPlan& sp = p->segments[static_cast<size_t>(sel.id)];
            h += QStringLiteral("<table cellspacing=4>") + costRow(QStringLiteral("time/step"), sp.cost);
            h += QStringLiteral("<tr><td>memory</td><td align=right><b>%1</b></td><td>weights, gradients, optimizer state and kept activations per device</td></tr></table>")
                     .arg(formatBytes(static_cast<double>(sp.memoryBytes)));
            h += QStringLiteral("<p>Combination:</p><ul>");
            for (int k = 0; k < seg.blockCount; ++k) {
                const BlockChoice& bc = p->blocks[static_cast<size_t>(seg.firstBlock + k)];
                h += QStringLiteral("<li>b%1 %2: <b>%3</b>%4%5</li>")
                         .arg(bc.block)
                         .arg(esc(g.op(r.blocks.blocks[static_cast<size_t>(bc.block)].entry).scope), esc(bc.label),
                              bc.recompute ? QStringLiteral(", activations recomputed") : QString(),
                              bc.pinned ? QStringLiteral(" (pinned)") : QString());
            }
            h += QStringLiteral("</ul>");
        }
        return h;
    }
    case Selection::Kind::Block: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blocks.size()) return {};
        const ParallelBlock& b = r.blocks.blocks[static_cast<size_t>(sel.id)];
        const Op& entry = g.op(b.entry);
        h += QStringLiteral("<h3>Block b%1 — %2</h3>").arg(sel.id).arg(esc(entry.scope));
        h += QStringLiteral("<p>entry <b>%1</b> %2 · %3 member ops · segment #%4</p>")
                 .arg(esc(entry.name), esc(entry.type.toString())).arg(b.members.size()).arg(a.segmentOfBlock[static_cast<size_t>(sel.id)]);
        if (p) h += QStringLiteral("<table cellspacing=4>") + costRow(QStringLiteral("time/step"), sumCosts(*plan, sel.id)) + QStringLiteral("</table>");
        h += QStringLiteral("<p>Strategies (entry operands; own collectives):</p><table border=1 cellspacing=0 cellpadding=3>");
        h += QStringLiteral("<tr><th>strategy</th><th>lhs</th><th>rhs</th><th>own collectives</th></tr>");
        for (size_t s = 0; s < b.strategies.size(); ++s) {
            const BlockStrategy& st = b.strategies[s];
            QStringList coll;
            for (const OwnCollective& c : st.ownCollectives) {
                QStringList axes;
                for (const auto& ax : c.axes) axes << qs(ax);
                coll << QStringLiteral("%1 over %2 (%3)").arg(qs(std::string(collectiveKindName(c.kind))), axes.join(QLatin1Char(',')),
                                                             formatBytes(static_cast<double>(c.bytes)));
            }
            const bool chosen = p && p->blocks[static_cast<size_t>(sel.id)].strategy == static_cast<int32_t>(s);
            h += QStringLiteral("<tr><td>%1%2</td><td>%3</td><td>%4</td><td>%5</td></tr>")
                     .arg(chosen ? QStringLiteral("<b>▶ ") : QString(), esc(st.label) + (chosen ? QStringLiteral("</b>") : QString()),
                          st.entryOperands.size() > 0 ? esc(st.entryOperands[0].toString()) : QString(),
                          st.entryOperands.size() > 1 ? esc(st.entryOperands[1].toString()) : QString(),
                          coll.isEmpty() ? QStringLiteral("none") : coll.join(QStringLiteral("; ")));
        }
        h += QStringLiteral("</table>");
        return h;
    }
    case Selection::Kind::Op: {
        if (sel.id < 0 || sel.id >= g.size()) return {};
        const Op& op = g.op(sel.id);
        h += QStringLiteral("<h3>%1</h3>").arg(esc(op.name));
        h += QStringLiteral("<table cellspacing=4>");
        h += QStringLiteral("<tr><td>kind</td><td>%1 (%2)</td></tr>").arg(qs(std::string(opKindName(op.kind))), qs(std::string(phaseName(op.phase))));
        h += QStringLiteral("<tr><td>result</td><td><tt>%1</tt> (%2)</td></tr>").arg(esc(op.type.toString()), formatBytes(static_cast<double>(op.type.bytes())));
        h += QStringLiteral("<tr><td>scope</td><td>%1</td></tr>").arg(esc(op.scope));
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const Op& o = g.op(op.operands[i]);
            h += QStringLiteral("<tr><td>operand %1</td><td>%2 <tt>%3</tt></td></tr>").arg(i).arg(esc(o.name), esc(o.type.toString()));
        }
        const int32_t block = r.blocks.blockOf[static_cast<size_t>(sel.id)];
        if (block >= 0) h += QStringLiteral("<tr><td>block</td><td>b%1</td></tr>").arg(block);
        if (p) {
            const TensorPlan& t = p->tensors[static_cast<size_t>(sel.id)];
            h += QStringLiteral("<tr><td>plan</td><td><tt>%1</tt>, %2 per device</td></tr>").arg(esc(t.result.toString()), formatBytes(static_cast<double>(localResultBytes(g, *p, sel.id))));
            h += QStringLiteral("</table><table cellspacing=4>") + costRow(QStringLiteral("time/step"), plan->outcome->evaluation.opCost[static_cast<size_t>(sel.id)]);
        }
        h += QStringLiteral("</table>");
        if (block >= 0) {
            const ParallelBlock& b = r.blocks.blocks[static_cast<size_t>(block)];
            const int64_t m = b.memberIndex(sel.id);
            h += QStringLiteral("<p>Sharding of the result under each strategy of b%1:</p><table border=1 cellspacing=0 cellpadding=3>").arg(block);
            for (size_t s = 0; s < b.strategies.size(); ++s) {
                const bool chosen = p && p->blocks[static_cast<size_t>(block)].strategy == static_cast<int32_t>(s);
                h += QStringLiteral("<tr><td>%1</td><td><tt>%2</tt></td></tr>")
                         .arg((chosen ? QStringLiteral("▶ ") : QString()) + esc(b.strategies[s].label),
                              m >= 0 ? esc(r.blocks.sharding(b, s, static_cast<size_t>(m)).toString()) : QString());
            }
            h += QStringLiteral("</table>");
        } else {
            for (const UnassignedOp& u : r.blocks.resolvedLater)
                if (u.op == sel.id) h += QStringLiteral("<p>Outside blocks: %1. %2</p>").arg(qs(std::string(unassignedReasonName(u.reason))), esc(u.detail));
        }
        return h;
    }
    }
    return h;
}

}  // namespace cfp::explorer
