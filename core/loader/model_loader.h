#pragma once
// One entry point for "a model" as users name it on the command line or in the GUI:
//   builtin:NAME        a preset of the built-in builders (builtin:gpt3-175b, builtin:llama2-7b, …)
//   path/config.json    a Hugging-Face-style config (GPT-2/GPT-NeoX, LLaMA, Mixtral)
//   path/graph.json     a native graph file ("format": "cfp-graph", docs/graph-format.md)
// Builder-based sources produce the full training step with the given build options; native graphs
// are taken as they are (build options do not apply).

#include <optional>
#include <string>

#include "ir/graph.h"
#include "models/models.h"

namespace cfp {

inline constexpr const char* kDefaultModel = "builtin:gpt3-1.3b";

enum class ModelSourceKind : uint8_t { Builtin, HfConfig, NativeGraph };
std::string_view modelSourceKindName(ModelSourceKind k);  // "builtin", "config", "graph"

struct LoadedModel {
    Graph graph;
    std::string spec;                    // as given
    ModelSourceKind kind = ModelSourceKind::Builtin;
    std::optional<ModelConfig> config;   // for builder-based sources
    std::optional<BuildOptions> options; // resolved options for builder-based sources
    double loadSeconds = 0;              // wall time to build or read the graph
};

// Errors: "load.not_found" (no such file), "load.unknown_format", or the reader's/builder's error.
Result<LoadedModel> loadModel(const std::string& spec, const BuildOptions& options);

}  // namespace cfp
