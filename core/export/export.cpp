#include "export/export.h"

#include <iterator>

#include "export/export_internal.h"
#include "import/hlo_writer.h"

namespace cfp {

namespace {

constexpr std::string_view kFormatNames[] = {"jax", "dtensor", "megatron", "hlo-sharding", "trace", "hlo"};

}  // namespace

Result<ExportFormat> parseExportFormat(std::string_view name) {
    for (size_t i = 0; i < std::size(kFormatNames); ++i)
        if (name == kFormatNames[i]) return static_cast<ExportFormat>(i);
    std::string valid;
    for (auto n : kFormatNames) valid += (valid.empty() ? "" : ", ") + std::string(n);
    return makeError("export.bad_format", "unknown export format '" + std::string(name) + "'; expected one of " + valid);
}

std::vector<std::string> exportFormatNames() { return {std::begin(kFormatNames), std::end(kFormatNames)}; }

std::string_view exportFormatName(ExportFormat format) {
    const auto i = static_cast<size_t>(format);
    return i < std::size(kFormatNames) ? kFormatNames[i] : std::string_view("unknown");
}

std::string_view exportFormatExtension(ExportFormat format) {
    switch (format) {
        case ExportFormat::Jax:
        case ExportFormat::DTensor: return ".py";
        case ExportFormat::Megatron:
        case ExportFormat::HloSharding: return ".txt";
        case ExportFormat::Trace: return ".json";
        case ExportFormat::HloModule: return ".hlo";
    }
    return ".txt";
}

std::string parameterPath(const Op& op) {
    if (op.scope.empty() || op.name == op.scope) return op.name;
    if (op.name.size() > op.scope.size() && op.name.compare(0, op.scope.size(), op.scope) == 0 &&
        op.name[op.scope.size()] == '.')
        return op.name;
    return op.scope + "." + op.name;
}

Result<std::string> hloShardingText(const TensorSharding& sharding, const Mesh& mesh) {
    if (sharding.isPartial())
        return makeError("export.bad_plan",
                         "HloSharding cannot express a pending partial sum (" + sharding.toString() + ")");
    const auto& axes = mesh.axes();
    std::vector<size_t> tileOrder;     // mesh axis index per tile position, major to minor
    std::vector<int64_t> tileDims;
    std::vector<bool> used(axes.size(), false);
    bool anySplit = false;
    for (const auto& dimAxes : sharding.dims()) {
        int64_t product = 1;
        for (const auto& a : dimAxes) {
            const auto idx = mesh.axisIndex(a);
            if (!idx) return makeError("export.bad_plan", "mesh " + mesh.toString() + " has no axis '" + a + "'");
            const auto i = static_cast<size_t>(*idx);
            used[i] = true;
            tileOrder.push_back(i);
            product *= axes[i].size;
            anySplit = anySplit || axes[i].size > 1;
        }
        tileDims.push_back(product);
    }
    if (!anySplit) return std::string("{replicated}");
    int64_t replicated = 1;
    for (size_t i = 0; i < axes.size(); ++i)
        if (!used[i] && axes[i].size > 1) {
            tileOrder.push_back(i);
            replicated *= axes[i].size;
        }
    if (replicated > 1) tileDims.push_back(replicated);

    // Row-major device numbering: stride of axis i = product of the sizes of the axes after it.
    std::vector<int64_t> stride(axes.size(), 1);
    for (size_t i = axes.size(); i-- > 1;) stride[i - 1] = stride[i] * axes[i].size;

    std::string out = "{devices=[";
    for (size_t i = 0; i < tileDims.size(); ++i) out += (i ? "," : "") + std::to_string(tileDims[i]);
    out += "]";
    // Tile positions in row-major order (the last tile axis fastest), decoded as mixed-radix numbers.
    int64_t tiles = 1;
    for (size_t i : tileOrder) tiles *= axes[i].size;
    for (int64_t n = 0; n < tiles; ++n) {
        int64_t rest = n, device = 0;
        for (size_t k = tileOrder.size(); k-- > 0;) {
            const size_t axis = tileOrder[k];
            device += (rest % axes[axis].size) * stride[axis];
            rest /= axes[axis].size;
        }
        out += (n ? "," : "") + std::to_string(device);
    }
    if (replicated > 1) out += " last_tile_dim_replicate";
    return out + "}";
}

Result<std::string> exportPlan(const Graph& graph, const Plan& plan, ExportFormat format,
                               std::span<const TimelineEvent> timeline, const ModelConfig* model,
                               const ExportOptions& options, std::vector<std::string>* notes) {
    using namespace exporting;
    if (format == ExportFormat::Trace) return exportTrace(graph, plan, timeline, options.traceEveryDevice);
    // A pipelined plan's mesh is one stage's; these formats would place every layer on it.
    if (plan.pipeline && format != ExportFormat::Megatron)
        return makeError("export.unsupported",
                         "the plan has " + std::to_string(plan.pipeline->stages) + " pipeline stages and the " + std::string(exportFormatName(format)) +
                             " export has no stage split yet (it would place every layer on one stage's devices); export it as megatron or trace");
    if (format == ExportFormat::HloModule) {
        // The training step as HLO text, every instruction with the plan's layout.
        if (plan.tensors.size() != static_cast<size_t>(graph.size()))
            return makeError("export.bad_plan", "the plan has " + std::to_string(plan.tensors.size()) + " tensor entries for " +
                                                    std::to_string(graph.size()) + " ops");
        std::vector<std::string> shardings;
        for (const TensorPlan& t : plan.tensors) {
            auto text = hloShardingText(t.result, plan.mesh);
            if (!text) return text.error().withContext(graph.op(t.op).name);
            shardings.push_back(std::move(*text));
        }
        return writeHloText(graph, shardings);
    }
    auto ctx = makeContext(graph, plan);
    if (!ctx) return ctx.error();
    ctx->model = model;
    ctx->notes = notes;
    // Megatron-LM's flags name no parameters; the others speak the convention's names.
    if (format != ExportFormat::Megatron)
        CFP_TRY(applyNameConvention(*ctx, resolveNameConvention(options.names, plan, model)));
    switch (format) {
        case ExportFormat::Jax: return exportJax(*ctx);
        case ExportFormat::DTensor: return exportDTensor(*ctx);
        case ExportFormat::Megatron: return exportMegatron(*ctx);
        case ExportFormat::HloSharding: return exportHloSharding(*ctx);
        case ExportFormat::Trace:
        case ExportFormat::HloModule: break;
    }
    return makeError("export.bad_format", "unknown export format");
}

}  // namespace cfp
