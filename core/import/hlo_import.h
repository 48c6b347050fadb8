#pragma once
// XLA HLO text → graph IR (docs/importers.md).
//
// The IR uses HLO's op vocabulary, so most instructions map one to one. The rest:
//   * tuples, get-tuple-element, call, fusion (`calls=`), map and while bodies are resolved away:
//     sub-computations are inlined, tuple-shaped values are tracked element by element, entry
//     parameters of tuple shape become one parameter per element (`name.0`, `name.1`, …);
//   * `while` loops are unrolled when their trip count is known (backend_config
//     `known_trip_count`, or a condition `counter < constant` with the counter stepped by a
//     constant in the body); otherwise the import fails with hlo.unsupported_while;
//   * reduce/scatter `to_apply` computations are recognised as add, maximum, minimum or multiply;
//     a reduce whose init value is not the identity gets the init combined in afterwards;
//   * dot with a result type different from its operands' (bf16 × bf16 → f32) becomes a dot and a
//     convert; clamp becomes minimum/maximum; pad with non-negative edges becomes concatenates;
//     log-plus-one, exponential-minus-one and pred `not` are written out; copy, bitcast,
//     optimization-barrier and domain pass their operand on;
//   * batch-norm-training / -inference / -grad are written out in primitives (reduce-add
//     statistics, rsqrt); a conditional on a constant is its chosen branch; the cuBLAS GEMM
//     custom-calls of XLA GPU are dots; a `Sharding` custom-call is its operand;
//   * any other `custom-call` is kept as a custom-call with its target name; any other HLO opcode
//     the IR has no kind for becomes a custom-call named "hlo.<opcode>" with a note. Those whose
//     sharding is known (shifts, xor, bitcast-convert, rounding, rng-bit-generator, sort, variadic
//     reduce, dynamic-slice, …: rules/op_rules.h) plan like other ops; the rest are block
//     boundaries and analysis reports them as unsupported;
//   * `metadata={op_name=…}` gives each op its scope path: "jit(step)/jit(main)/transpose(jvp(GPT))/
//     layers_0/attn/dot_general[…]" → "GPT.layers_0.attn" (jit wrappers dropped, transformations
//     unwrapped, the primitive dropped; PyTorch/XLA's "Linear[fc1]" → "fc1"); without op_name,
//     source_file and source_line give "<file stem>.L<line>";
//   * `sharding={…}` attributes are kept as ShardingAnnotation text on the op they annotate;
//   * manual (shard_map) regions: the SPMDFullToShardShape / SPMDShardToFullShape custom-calls
//     stay custom-calls carrying their full side's sharding (Op::attrs.sharding: FullToShard's from
//     the `Sharding` custom-call on its operand), checked against the local shape; an all-reduce
//     inside a region becomes a custom-call hlo.all-reduce per operand with its replica groups and
//     combiner; other collectives inside a region fail with hlo.manual_collective (the IR cannot
//     price them). rules/op_rules.h "Manual regions" says how they are planned;
//   * element types: pred, s32, s64, f16, bf16, f32, f64; u32/u64 are read as s32/s64 (same
//     width); other types fail with hlo.unsupported_type.
// Phases and roles are inferred (import/imported_model.h); with TrainingMode::AppendTraining a
// forward-only module gains backward and AdamW.
//
// Errors name the file, line and column and the instruction: "m.hlo:12:3: instruction 'dot.3':
// … [hlo.shape_mismatch]". Codes: the parser's (hlo_parser.h) and hlo.io, hlo.unknown_operand,
// hlo.unknown_computation, hlo.unknown_opcode, hlo.bad_attribute, hlo.bad_literal,
// hlo.unsupported_type, hlo.shape_mismatch, hlo.type_error (the IR rejects the operation),
// hlo.cycle, hlo.recursion, hlo.unsupported_while, hlo.too_large, hlo.manual_sharding,
// hlo.manual_collective.

#include <string>
#include <string_view>

#include "import/hlo_parser.h"
#include "import/imported_model.h"

namespace cfp {

Result<ImportedModel> importHloText(std::string_view text, const std::string& sourceName,
                                    const ImportOptions& options = {});
Result<ImportedModel> importHloFile(const std::string& path, const ImportOptions& options = {});
// A module already parsed (hlo_parser.h) or translated from another syntax (stablehlo_import.h).
Result<ImportedModel> importHloModule(const hlo::Module& module, const std::string& sourceName,
                                      const ImportOptions& options = {});

// Scope path from an HLO metadata op_name (see above); `isParameter` keeps a single component.
std::string scopeFromOpName(std::string_view opName);

}  // namespace cfp
