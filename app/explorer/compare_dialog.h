#pragma once
// File > Compare with a saved plan…: the current plan and a plan file side by side — step time and
// its split, memory and its parts, mesh, memory policy, the plan in DP/TP/ZeRO terms, and every
// segment whose strategies or time differ.

#include <QDialog>
#include <QStringList>

#include <vector>

#include "plan/plan.h"

class QTreeWidget;

namespace cfp::explorer {

// One line of the comparison: what, the current plan's value, the saved plan's, whether they differ.
struct CompareRow {
    QString what, current, saved;
    bool differs = false;
};
// The rows for two plans of one model (`graph`: the current plan's round graph; the DP/TP/ZeRO
// line needs the saved plan's tensors to match it, else it is left out). Segments are compared by
// position; a different segment chain (another model or mesh) is one row that says so.
std::vector<CompareRow> comparePlans(const Plan& current, const Plan& saved, const Graph& graph);

class CompareDialog : public QDialog {
    Q_OBJECT
public:
    CompareDialog(const Plan& current, const Plan& saved, const Graph& graph, const QString& savedName, QWidget* parent = nullptr);
    QTreeWidget* table() const { return m_table; }

private:
    QTreeWidget* m_table = nullptr;
};

}  // namespace cfp::explorer
