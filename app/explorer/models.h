#pragma once
// Item models over the explorer's snapshots (snapshots.h) and the text of the properties panel.
//
//   StructureModel  segments → blocks → ops, with op counts, the plan's strategies and costs
//   PlanModel       segment types → segments: chosen combination (editable: sets a pin), pin
//                   check box, time, memory and the change against the previous plan
//
// Both are lazy: rows exist only as indices into the analysis, so a 10^5-op model costs nothing
// until a branch is expanded.

#include <QAbstractItemModel>
#include <QStyledItemDelegate>

#include <memory>

#include "controller.h"

namespace cfp::explorer {

class StructureModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ColName, ColOps, ColStrategy, ColTime, ColCount };
    static constexpr int SelectionRole = Qt::UserRole + 1;  // QVariant<Selection>

    explicit StructureModel(QObject* parent = nullptr);
    void setAnalysis(std::shared_ptr<const AnalysisData> analysis);
    void setPlan(std::shared_ptr<const PlanData> plan);  // refreshes the plan columns
    std::shared_ptr<const AnalysisData> analysis() const { return m_analysis; }

    QModelIndex indexFor(const Selection& selection) const;
    Selection selectionAt(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const AnalysisData> m_analysis;
    std::shared_ptr<const PlanData> m_plan;
    std::vector<double> m_blockSeconds;  // per block: the evaluator's block cost under the plan
};

class PlanModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ColSegment, ColCombination, ColTime, ColMemory, ColPinned, ColDelta, ColCount };
    static constexpr int CombinationRole = Qt::UserRole + 2;  // QList<int>: strategy per block
    static constexpr int FirstBlockRole = Qt::UserRole + 3;   // int: first block of the row's segment
    static constexpr int PinTargetRole = Qt::UserRole + 4;    // QString: "3" or "T1"

    explicit PlanModel(QObject* parent = nullptr);
    void setData(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanData> previous,
                 const std::vector<Pin>& pins);
    void setPins(const std::vector<Pin>& pins);
    std::shared_ptr<const PlanData> plan() const { return m_plan; }
    QModelIndex segmentIndex(int segment, int column = 0) const;
    QModelIndex typeIndex(int type, int column = 0) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // The user chose a combination (pin it) or toggled a pin; the panel turns these into undoable
    // pin changes. `target` is "3" (segment) or "T1" (type).
    void pinRequested(const QString& target, const QList<int>& combination);
    void unpinRequested(const QString& target);

private:
    struct Row {
        bool isType = false;
        int id = 0;  // type id or segment index
    };
    Row rowOf(const QModelIndex& index) const;
    std::vector<int32_t> combinationOf(const Row& row) const;     // the plan's (first segment for a type)
    std::vector<int32_t> pinnedCombination(const std::string& target, const Row& row) const;  // -1 = free
    const Pin* pinFor(const std::string& target) const;

    std::shared_ptr<const PlanData> m_plan, m_previous;
    std::vector<Pin> m_pins;
    std::vector<std::vector<int32_t>> m_segmentsOfType;
};

// What one block would cost under each of its strategies, every other block as in the plan: the
// whole step's time and the per-device memory (PlanProblem::objective / memory, the numbers of the
// combinations chart: for one segment they equal segmentAlternatives' rows that change only that
// block). `segments`: the segment a pin targets, or every segment of a type (the block then takes
// the strategy in all of them). The block keeps the plan's recomputation where the strategy has
// that choice. Empty when the plan has no problem to price with.
struct StrategyCost {
    int32_t strategy = 0;
    bool recompute = false;
    double stepSeconds = 0;
    int64_t memoryBytes = 0;
    bool fits = true;
    bool current = false;  // the plan's strategy (of the first segment)
    bool fastest = false;  // the fastest that fits (of all, where none fits); ties: the lowest index
};
std::vector<std::vector<StrategyCost>> strategyCosts(const PlanData& plan, const std::vector<int32_t>& segments);

// Editor for PlanModel's combination column: one combo box per block of the segment. Each item is
// a strategy with its cost hint (strategyCosts): the label shows in the closed box, the popup and
// the item's tooltip add "step 6.0 ms (+154 µs) · 861.1 MiB/device", the current ("◀ current")
// and the fastest that fits ("★ fastest") marked, those over the limit red.
class CombinationDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    static constexpr int CostHintRole = Qt::UserRole + 10;     // QString: "step 5.8 ms · 861.8 MiB/device · ◀ current · ★ fastest"
    static constexpr int StepSecondsRole = Qt::UserRole + 11;  // double: the step with this strategy
    static constexpr int MemoryBytesRole = Qt::UserRole + 12;  // qint64: memory per device with it
    using QStyledItemDelegate::QStyledItemDelegate;
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
    void updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

// Our strategy labels in the terms people use, one line per axis assignment: "x:rows — the
// matmul's input rows (the batch …) split over mesh axis x (8 devices): data parallel …". Takes a
// block's label ("dp:rows,tp:cols", with " +recompute"), or a combination ("x:rows | x:cols"),
// each term explained once. `mesh` (may be null) adds the axes' sizes. The one source of the
// strategy glossary: the plan table, the combination editor and the structure tree use it.
QString strategyGlossary(const QString& label, const Mesh* mesh = nullptr);
// The same terms as an HTML list (for Help › Glossary).
QString strategyGlossaryHtml();

// HTML for the properties panel: shapes, dtypes, the sharding under each block strategy, and the
// plan's costs with their provenance.
QString describeSelection(const AnalysisData& analysis, const PlanData* plan, const Selection& selection);

// Block colour (by position within its segment, so equal blocks of repeated layers share it).
QColor blockColor(int positionInSegment);

}  // namespace cfp::explorer
