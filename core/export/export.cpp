#include "export/export.h"

#include <iterator>

#include "export/export_internal.h"
#include "import/hlo_writer.h"

namespace cfp {

namespace {

constexpr std::string_view kFormatNames[] = {"jax", "dtensor", "megatron", "hlo-sharding", "trace", "hlo", "torchtitan"};

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
        case ExportFormat::Torchtitan: return ".toml";
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

Result<std::string> exportPlan(const Graph& graph, const Plan& plan, ExportFormat format,
                               std::span<const TimelineEvent> timeline, const ModelConfig* model,
                               const ExportOptions& options, std::vector<std::string>* notes) {
    using namespace exporting;
    if (format == ExportFormat::Trace) return exportTrace(graph, plan, timeline, options.traceEveryDevice);
    // A pipelined plan's mesh is one stage's; these formats would place every layer on it.
    if (plan.pipeline && format != ExportFormat::Megatron && format != ExportFormat::Torchtitan)
        return makeError("export.unsupported",
                         "the plan has " + std::to_string(plan.pipeline->stages) + " pipeline stages and the " + std::string(exportFormatName(format)) +
                             " export has no stage split yet (it would place every layer on one stage's devices); export it as megatron, torchtitan or trace");
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
    ctx->scheduleCsvName = options.scheduleCsvName;
    if (notes) notes->insert(notes->end(), ctx->stackNotes.begin(), ctx->stackNotes.end());
    // Megatron-LM's flags and torchtitan's config name no parameters; the others speak the
    // convention's names.
    if (format != ExportFormat::Megatron && format != ExportFormat::Torchtitan)
        CFP_TRY(applyNameConvention(*ctx, resolveNameConvention(options.names, plan, model)));
    switch (format) {
        case ExportFormat::Jax: return exportJax(*ctx);
        case ExportFormat::DTensor: return exportDTensor(*ctx);
        case ExportFormat::Megatron: return exportMegatron(*ctx);
        case ExportFormat::Torchtitan: return exportTorchtitan(*ctx);
        case ExportFormat::HloSharding: return exportHloSharding(*ctx);
        case ExportFormat::Trace:
        case ExportFormat::HloModule: break;
    }
    return makeError("export.bad_format", "unknown export format");
}

}  // namespace cfp
