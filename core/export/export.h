#pragma once
// Exporters: turn a Plan (plan/plan.h) into files that real training jobs read. docs/exporters.md
// describes every format with an excerpt; the conventions in short:
//
//   jax           Python module: MESH_SHAPE, MESH_AXIS_NAMES, PARTITION_SPECS (PartitionSpec per parameter path),
//                 PARAM_SHAPES, make_mesh(devices=None) and named_shardings(mesh=None) (the mesh is
//                 built on call, so the module imports anywhere).
//   dtensor       Python module for PyTorch: make_device_mesh(), PARALLELIZE_PLAN
//                 (ColwiseParallel/RowwiseParallel/SequenceParallel per module, with the layouts
//                 the plan gives it), HF_TP_PLAN, FSDP2 over the batch's mesh dims (apply_fsdp,
//                 parallelize) and PLACEMENTS (Shard/Replicate per mesh dim for every parameter,
//                 PyTorch's [out, in] layout for linear weights).
//   megatron      one line of Megatron-LM flags when every transformer layer follows the Megatron
//                 tensor-parallel pattern; otherwise the error export.not_uniform says where not.
//   hlo-sharding  one line per parameter: "<path> {devices=[…]…}" in XLA HloSharding text syntax.
//   trace         Chrome Trace Event Format JSON of the predicted step (opens in Perfetto).
//   hlo           the training step as XLA HLO text with every instruction's sharding={…} from the
//                 plan (the HLO importer reads it back: a round trip).
//   torchtitan    a torchtitan job-config TOML ([model], [training], [parallelism],
//                 [activation_checkpoint]) for a Llama plan in the layout megatron recognises;
//                 export.not_uniform or export.unsupported (what torchtitan cannot run) otherwise.
//
// Parameter path: every trainable parameter (ParamRole::Trainable) is named by its dotted module
// path. The built-in models already name parameters "<scope>.<leaf>" ("layers.3.attn.qkv.weight"
// in scope "layers.3.attn.qkv"), so the path is the op's name when it is the scope itself or starts
// with "<scope>."; otherwise it is "<scope>.<name>" (just the name when the scope is empty).
// Parameters are listed in graph (op id) order. A parameter's layout is its TensorPlan::result.
//
// Every exporter is deterministic (same input, same bytes) and its text ends with a newline.
//
// Stable error codes: export.bad_format (unknown format name), export.bad_plan (the plan does not
// fit the graph: a trainable parameter without a sharding, a sharding that does not fit the mesh or
// the parameter's type, a pending partial sum on a parameter, two parameters with one path),
// export.not_uniform (megatron: the plan is not one Megatron-LM pattern, with the first place that
// breaks it; torchtitan too), export.unsupported (what the target cannot express: a pipeline in a
// format without stage splits, a model or schedule torchtitan has none for), export.bad_timeline
// (trace: a non-finite time or a negative duration).

#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "models/models.h"
#include "plan/plan.h"
#include "sharding/hlo_sharding.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"
#include "util/result.h"

namespace cfp {

enum class ExportFormat { Jax, DTensor, Megatron, HloSharding, Trace, HloModule, Torchtitan };

// Whose parameter names the jax, dtensor and hlo-sharding files use (docs/exporters.md, "Names"):
// the builders' own (cfp: "layers.0.attn.qkv.weight"), Hugging Face transformers' (hf:
// "model.layers.0.self_attn.q_proj.weight"; GPT-2's "transformer.h.0.attn.c_attn.weight") or
// torchtitan's (torchtitan: "layers.0.attention.wq.weight"). Auto: hf for a model read from a
// Hugging Face config.json, else cfp. Maps exist for the builders' Llama-family (hf, torchtitan)
// and GPT models with learned positions (hf); others are export.unsupported.
enum class NameConvention { Auto, Cfp, HuggingFace, Torchtitan };
Result<NameConvention> parseNameConvention(std::string_view name);  // "auto", "cfp", "hf", "torchtitan"
std::string_view nameConventionName(NameConvention c);
std::vector<std::string> nameConventionNames();
NameConvention resolveNameConvention(NameConvention requested, const Plan& plan, const ModelConfig* model);

struct ExportOptions {
    NameConvention names = NameConvention::Auto;
    // Trace: one timeline per distinct role (SPMD: one for all devices; a pipeline: one per stage
    // rank), or a process per device with its own communication groups named (traceEveryDevice).
    bool traceEveryDevice = false;
    // torchtitan: the file name its TOML gives the pipeline schedule CSV (exportScheduleCsv) of a
    // schedule PyTorch has no class for (zb-h1, zb-h2), written beside the TOML (renderExportFiles
    // in workflow/workflow.h sets it). Empty: such a plan is export.unsupported.
    std::string scheduleCsvName;
};

// The pipeline schedule a torchtitan job of `plan` reads from a CSV (PyTorch's pipelining action
// strings, a row per rank: "0F0,0I0,0W0,…"): the plan's schedule where PyTorch has no class for
// it and it can be generated again from the plan (zb-h1, zb-h2); nullopt for any other plan.
Result<std::optional<std::string>> exportScheduleCsv(const Plan& plan);

// "jax", "dtensor", "megatron", "hlo-sharding", "trace", "hlo", "torchtitan" (exact, lower case); export.bad_format
// lists the valid names otherwise.
Result<ExportFormat> parseExportFormat(std::string_view name);
// The names above, in enum order.
std::vector<std::string> exportFormatNames();
std::string_view exportFormatName(ExportFormat format);
// Suggested file extension: ".py" (jax, dtensor), ".txt" (megatron, hlo-sharding), ".json" (trace),
// ".hlo" (hlo), ".toml" (torchtitan).
std::string_view exportFormatExtension(ExportFormat format);

// Renders `plan` for `graph` in `format`. `timeline` is only used by Trace (the evaluator
// produces it); the other formats ignore it. `model`, the architecture of a builder-made model
// (built-in or config.json), lets Megatron write the model and batch flags too; torchtitan needs it.
// `notes`, when given, receives what the user should know about a file that was written (e.g. the
// megatron export's: Megatron-LM lays the embedding or the head out other than the plan does).
Result<std::string> exportPlan(const Graph& graph, const Plan& plan, ExportFormat format,
                               std::span<const TimelineEvent> timeline = {}, const ModelConfig* model = nullptr,
                               const ExportOptions& options = {}, std::vector<std::string>* notes = nullptr);

// The dotted path the exporters use for parameter `op` (rules above).
std::string parameterPath(const Op& op);

// hloShardingText (the XLA HloSharding text of a plan's sharding): sharding/hlo_sharding.h.

}  // namespace cfp
