#pragma once
// What the importers (HLO text, ONNX) hand to the rest of the core, and the steps they share:
// inferring phases and parameter roles of a graph read from a framework's export, and turning a
// forward-only graph into a training step with our autodiff.
//
// Phase inference (finishImport), for graphs whose ops all arrive as "forward":
//   * The loss is the first graph output that is a floating-point scalar. The forward pass is the
//     set of ops the loss depends on.
//   * Every other op is "optimizer" when it depends on a parameter the forward pass does not read
//     (optimizer state: Adam's m and v, a step counter, an fp32 master copy), else "backward" when
//     it depends on a forward value that is not a source, else (constants, functions of weights
//     alone) it takes the phase of its first user.
//   * When the exporter left JAX's transformation names in the metadata (`jvp(…)`, `transpose(…)`),
//     those decide instead for ops outside the forward pass: `transpose(…)` is backward, the rest
//     optimizer (so plain SGD without state is still told apart).
// Parameter roles: integer and pred parameters are inputs. In a graph with ops outside the forward
// pass (a training step), a floating-point parameter the forward pass reads is trainable when some
// output other than the loss has its type and depends on it (its update), otherwise an input;
// parameters only ops outside the forward pass read are optimizer state. In a forward-only graph,
// floating-point parameters of rank ≥ 1 are trainable weights and scalars are inputs.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace cfp {

struct ImportNote {
    std::string code;     // "hlo.opaque_op", "import.already_training", …
    std::string message;
    std::string where;
    std::string toString() const;
};

// An op that carried a sharding annotation in the source (HLO `sharding={…}`), kept as text.
struct ShardingAnnotation {
    std::string op;        // the graph op it lands on
    std::string sharding;  // "{devices=[2,1]0,1}"
};

enum class TrainingMode : uint8_t {
    AsIs,            // analyse the graph as it is (a forward-only module stays forward-only)
    AppendTraining,  // forward-only graphs gain backward and AdamW (autodiff::appendTrainingStep)
};

struct ImportOptions {
    TrainingMode training = TrainingMode::AsIs;
    int64_t maxOps = 5'000'000;                   // after inlining and unrolling
    int64_t maxFileBytes = int64_t{1} << 31;
    int64_t maxLiteralValues = int64_t{1} << 24;  // per constant
};

struct ImportedModel {
    Graph graph;
    std::string format;                          // "hlo", "onnx"
    std::vector<ImportNote> notes;               // what was approximated or ignored
    std::vector<ShardingAnnotation> shardings;   // as found in the source
    OpId loss = kNoOp;
    bool hadBackward = false;                    // the source already held a backward pass
    bool trainingAppended = false;               // --train added backward and optimizer
};

// The bytes of an import file, at most `maxBytes`. Errors "<format>.io" (cannot read) and
// "<format>.too_large", located at the path.
Result<std::string> readImportFile(const std::string& path, int64_t maxBytes, std::string_view format);

// Per-op phase hint from the source's metadata: -1 none, otherwise static_cast<int>(Phase).
using PhaseHints = std::vector<int8_t>;

// Takes a staged graph (phases all forward, every parameter with role input) and returns the final
// graph with inferred phases and roles, then applies options.training. `hints` is indexed by op id
// (may be empty). Errors: import.no_loss, import.no_trainable (for AppendTraining) and autodiff's.
// With RoleSource::AsStaged the staged parameters' roles are kept (ONNX marks weights as initializers).
enum class RoleSource : uint8_t { Infer, AsStaged };
Status finishImport(Graph staged, const PhaseHints& hints, const ImportOptions& options, ImportedModel& out,
                    RoleSource roles = RoleSource::Infer);

}  // namespace cfp
