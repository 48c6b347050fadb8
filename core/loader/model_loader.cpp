#include "loader/model_loader.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/graph_json.h"

namespace cfp {

std::string_view modelSourceKindName(ModelSourceKind k) {
    switch (k) {
        case ModelSourceKind::Builtin: return "builtin";
        case ModelSourceKind::HfConfig: return "config";
        case ModelSourceKind::NativeGraph: return "graph";
    }
    return "?";
}

namespace {

// Native graph files declare "format": "cfp-graph" near the top; a cheap textual sniff of the first
// kilobytes avoids parsing large files twice.
bool looksLikeNativeGraph(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    return head.find("\"cfp-graph\"") != std::string::npos;
}

}  // namespace

Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    LoadedModel out;
    out.spec = spec;
    constexpr std::string_view kBuiltin = "builtin:";
    std::optional<ModelConfig> config;
    if (spec.rfind(kBuiltin, 0) == 0) {
        auto preset = presetConfig(std::string_view(spec).substr(kBuiltin.size()));
        if (!preset) return preset.error();
        config = std::move(*preset);
        out.kind = ModelSourceKind::Builtin;
    } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(spec, ec))
            return makeError("load.not_found",
                             "no such model file (use builtin:NAME for a preset, or a config.json / graph .json path)",
                             spec);
        if (looksLikeNativeGraph(spec)) {
            auto graph = readGraphFile(spec);
            if (!graph) return graph.error();
            out.graph = std::move(*graph);
            out.kind = ModelSourceKind::NativeGraph;
            out.loadSeconds = elapsed();
            return out;
        }
        auto hf = readHfConfig(spec);
        if (!hf) return hf.error();
        config = std::move(*hf);
        out.kind = ModelSourceKind::HfConfig;
    }
    auto built = buildTrainingStep(*config, options);
    if (!built) return built.error();
    out.graph = std::move(built->graph);
    out.config = std::move(built->config);
    out.options = built->options;
    out.loadSeconds = elapsed();
    return out;
}

}  // namespace cfp
