#pragma once
// One entry point for "a model" as users name it on the command line or in the GUI:
//   builtin:NAME        a preset of the built-in builders (builtin:gpt3-175b, builtin:llama2-7b, …)
//   path/config.json    a Hugging-Face-style config (GPT-2/GPT-NeoX, LLaMA, Mixtral)
//   path/graph.json     a native graph file ("format": "cfp-graph", docs/graph-format.md)
//   path/model.hlo      XLA HLO text (.hlo, or any file starting with `HloModule`; docs/importers.md)
//   path/model.onnx     an ONNX model (docs/importers.md; needs the ONNX development files at build time)
// Builder-based sources produce the full training step with the given build options; native graphs
// and imported models are taken as they are (build options do not apply), except that
// ImportOptions::training can turn a forward-only import into a training step.

#include <optional>
#include <string>

#include "import/imported_model.h"
#include "ir/graph.h"
#include "models/models.h"

namespace cfp {

inline constexpr const char* kDefaultModel = "builtin:gpt3-1.3b";

enum class ModelSourceKind : uint8_t { Builtin, HfConfig, NativeGraph, HloText, Onnx, StableHlo };
std::string_view modelSourceKindName(ModelSourceKind k);  // "builtin", "config", "graph", "hlo", "onnx", "stablehlo"

struct LoadedModel {
    Graph graph;
    std::string spec;                    // as given
    ModelSourceKind kind = ModelSourceKind::Builtin;
    std::optional<ModelConfig> config;   // for builder-based sources
    std::optional<BuildOptions> options; // resolved options for builder-based sources
    double loadSeconds = 0;              // wall time to build or read the graph
    // Imported models (HLO, ONNX) only:
    std::vector<ImportNote> notes;                // what the importer approximated or ignored
    std::vector<ShardingAnnotation> shardings;    // sharding annotations found in the source
    bool hadBackward = false;                     // the source already was a training step
    bool trainingAppended = false;                // ImportOptions::training added backward + AdamW
};

// Errors: "load.not_found" (no such file), "load.unknown_format", or the reader's/builder's error.
Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options);
Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options, const ImportOptions& importOptions);

// What loadModel would take `path` for, from its extension and first bytes (no full parse).
ModelSourceKind sniffModelFile(const std::string& path);

}  // namespace cfp
