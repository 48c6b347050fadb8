#include "loader/model_loader.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "import/hlo_import.h"
#include "import/stablehlo_import.h"
#include "import/onnx_import.h"
#include "io/graph_json.h"

namespace cfp {

std::string_view modelSourceKindName(ModelSourceKind k) {
    switch (k) {
        case ModelSourceKind::Builtin: return "builtin";
        case ModelSourceKind::HfConfig: return "config";
        case ModelSourceKind::NativeGraph: return "graph";
        case ModelSourceKind::HloText: return "hlo";
        case ModelSourceKind::Onnx: return "onnx";
        case ModelSourceKind::StableHlo: return "stablehlo";
    }
    return "?";
}

namespace {

std::string head(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text(4096, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    return text;
}

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void takeImport(LoadedModel& out, ImportedModel&& imported) {
    out.graph = std::move(imported.graph);
    out.notes = std::move(imported.notes);
    out.shardings = std::move(imported.shardings);
    out.hadBackward = imported.hadBackward;
    out.trainingAppended = imported.trainingAppended;
}

}  // namespace

// Native graph files declare "format": "cfp-graph" near the top and HLO text starts with
// `HloModule`: a cheap textual sniff of the first kilobytes avoids parsing large files twice.
ModelSourceKind sniffModelFile(const std::string& path) {
    if (endsWith(path, ".onnx")) return ModelSourceKind::Onnx;
    if (endsWith(path, ".hlo")) return ModelSourceKind::HloText;
    if (endsWith(path, ".mlir") || endsWith(path, ".stablehlo")) return ModelSourceKind::StableHlo;
    const std::string text = head(path);
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text.compare(first, 9, "HloModule") == 0) return ModelSourceKind::HloText;
    if (looksLikeStableHlo(text)) return ModelSourceKind::StableHlo;
    if (text.find("\"cfp-graph\"") != std::string::npos) return ModelSourceKind::NativeGraph;
    return ModelSourceKind::HfConfig;
}

Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options) {
    return loadModel(spec, options, ImportOptions{});
}

Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options, const ImportOptions& importOptions) {
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
                             "no such model file (use builtin:NAME for a preset, or a config.json, graph .json, .hlo, .mlir (StableHLO) or .onnx path)",
                             spec);
        const ModelSourceKind kind = sniffModelFile(spec);
        if (kind == ModelSourceKind::HloText || kind == ModelSourceKind::Onnx || kind == ModelSourceKind::StableHlo) {
            auto imported = kind == ModelSourceKind::HloText     ? importHloFile(spec, importOptions)
                            : kind == ModelSourceKind::StableHlo ? importStableHloFile(spec, importOptions)
                                                                 : importOnnxFile(spec, importOptions);
            if (!imported) return imported.error();
            takeImport(out, std::move(*imported));
            out.kind = kind;
            out.loadSeconds = elapsed();
            return out;
        }
        if (kind == ModelSourceKind::NativeGraph) {
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
