#pragma once
// Internal to core/export (not installed, not included elsewhere): what every format's file shares —
// the plan indexed for export (Context: tensors by op, users, trainable parameters with their
// paths), locale-independent text helpers, and each format's entry point, which exportPlan
// (export.cpp) dispatches to. One file per format: export_jax.cpp, export_dtensor.cpp,
// export_megatron.cpp, export_torchtitan.cpp, export_hlo_sharding.cpp, export_trace.cpp.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "export/export.h"

namespace cfp::exporting {

struct ParamEntry {
    const Op* op = nullptr;
    std::string path;                        // under the export's name convention
    const TensorSharding* sharding = nullptr;
    std::vector<int64_t> dims;               // global shape in the graph's layout ([in, out] for a linear weight)
    bool conv1d = false;                     // the target stores it [in, out] (GPT-2's Conv1D), not [out, in]
    std::string fusedFrom;                   // the graph parameter(s) the entry comes from (split QKV, fused gate/up)
    std::vector<int64_t> storedOrder;        // the target's dim i is the graph's dim storedOrder[i] (empty: graph
                                             // order, or [out, in] for a linear weight as storedTransposed says)
    int64_t stackedRows = 0;                 // a scan's stacked weights, one graph parameter per layer (`<p>[<row>]`)
                                             // exported as the stack `<p>`: its layers (op: layer 0's)
};

struct Context {
    const Graph& graph;
    const Plan& plan;
    std::vector<const TensorPlan*> byOp;       // TensorPlan per op id (nullptr: none)
    std::vector<std::vector<OpId>> users;
    std::vector<ParamEntry> params;            // trainable parameters, op order
    const ModelConfig* model = nullptr;        // the architecture, for builder-made models
    NameConvention names = NameConvention::Cfp;  // of ParamEntry::path
    std::vector<std::string>* notes = nullptr;   // what the caller should tell the user (may be null)
    std::vector<std::string> stackNotes;         // collectParams: stacks whose layers the plan lays out differently
    std::string scheduleCsvName;                 // ExportOptions::scheduleCsvName
};

std::string fixedNumber(double v, int precision);
std::string gib(int64_t bytes);
size_t utf8SequenceLength(std::string_view s, size_t i);
std::string pyEscape(std::string_view s);
std::string pyStr(std::string_view s);
std::string pyTuple(const std::vector<std::string>& items);
std::string joinAxes(const std::vector<std::string>& axes);
Status indexTensors(Context& ctx);
Status collectParams(Context& ctx);
Result<Context> makeContext(const Graph& graph, const Plan& plan);
// Renames ctx.params to the convention's names (export_names.cpp); export.unsupported when a
// parameter has no name there or its layout cannot be said in the target's tensors.
Status applyNameConvention(Context& ctx, NameConvention c);
// A linear weight the target stores as torch.nn.Linear does ([out, in]).
bool storedTransposed(const Context& ctx, const ParamEntry& p);
bool isLinearWeight(const Context& ctx, const Op& param);
std::vector<std::string> effectiveAxes(const std::vector<std::string>& axes, const Mesh& mesh);
std::vector<std::vector<std::string>> effectiveDims(const TensorSharding& s, const Mesh& mesh);
std::string headerText(const Plan& plan, std::string_view title);
std::string pyDocstringLines(const std::string& text);
std::string plainMeshText(const Mesh& mesh);
std::string meshShapeTuple(const Mesh& mesh);
std::string meshNamesTuple(const Mesh& mesh);

// The layout Megatron-LM and torchtitan run (export_megatron.cpp): every transformer layer's
// attention and MLP projections column- then row-parallel over one tensor-parallel axis (or none),
// its norms replicated, every data input split along the batch over all the other axes, the
// tensor-parallel axis innermost; with context parallelism the inputs' sequence split over one more
// axis, between the data-parallel ones and the tensor-parallel one (both frameworks' rank order:
// tensor, context, data). Embeddings, the final norm and the head are not checked
// (vocabularyLayoutNotes says where they differ). Example: mesh dp=2,tp=4 with QKV and fc1 [{},{tp}],
// attn.out and fc2 [{tp},{}], inputs [{dp},{}]: tpAxis "tp" (4), dpAxes {"dp"} (2).
struct LayoutTarget {
    std::string_view name;       // in messages: "Megatron needs …", "torchtitan replicates …"
    std::string_view framework;  // "plan is not a uniform Megatron-LM layout: …"
};
struct UniformLayout {
    std::string tpAxis;                // empty: no tensor parallelism
    int64_t tpSize = 1;
    std::vector<std::string> dpAxes;   // the other axes of size > 1, mesh order
    int64_t dpSize = 1;
    std::string cpAxis;                // context parallelism: the axis the inputs' sequence is split over (empty: none)
    int64_t cpSize = 1;
    bool sequenceParallel = false;     // every layer norm's [batch, seq, …] value split along seq over tpAxis
};
// export.not_uniform naming the first place that breaks the layout; export.bad_plan for an input
// without a sharding of its rank.
Result<UniformLayout> recogniseUniformLayout(const Context& ctx, const LayoutTarget& target);
// Notes (Context::notes, which must be set) for an embedding table or LM head the plan does not
// split over the vocabulary on `tp` as the framework does.
void vocabularyLayoutNotes(const Context& ctx, const std::string& tp, std::string_view framework);
// Whether the plan's blocks (BlockChoice::recompute) recompute none, every or only some of the
// forward blocks inside the transformer layers.
enum class LayerRecompute { None, Every, Some };
LayerRecompute layerBlockRecompute(const Context& ctx);

// The formats.
std::string exportJax(const Context& ctx);
std::string exportDTensor(const Context& ctx);
Result<std::string> exportMegatron(const Context& ctx);
Result<std::string> exportTorchtitan(const Context& ctx);
Result<std::string> exportHloSharding(const Context& ctx);
Result<std::string> exportTrace(const Graph& graph, const Plan& plan, std::span<const TimelineEvent> timeline, bool everyDevice = false);

}  // namespace cfp::exporting
