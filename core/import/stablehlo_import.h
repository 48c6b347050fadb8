#pragma once
// StableHLO text (MLIR) → graph IR: what `jax.jit(f).lower(*args).as_text()` prints.
//
//   module @jit_step attributes {mhlo.num_partitions = 1 : i32} {
//     func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<f32>) {
//       %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
//       %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x16xf32>
//       %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
//       return %1 : tensor<f32>
//     }
//   }
//
// The module is translated into HLO's structures (hlo_parser.h) and imported by the HLO importer,
// so lowering, phase and role inference, opaque ops and notes are the same (hlo_import.h):
//   * functions are computations (`@main`, or the only public one, is the entry; `call` /
//     `func.call` inline the callee); `return` / `stablehlo.return` are the root;
//   * ops map by name, `stablehlo.foo_bar` → HLO `foo-bar`, with `dot_general` → `dot`,
//     `broadcast_in_dim` → `broadcast`, `custom_call @target` → `custom-call`; their attributes
//     (`dims`, `contracting_dims = [1] x [0]`, `batching_dims`, `dim`, comparison directions,
//     slice ranges `[0:4, 2:8:2]`, `sizes`, `#stablehlo.gather<…>` / `#stablehlo.scatter<…>`
//     dimension numbers, `slice_sizes = array<i64: …>`) become HLO's;
//   * `stablehlo.reduce` in both forms (`applies stablehlo.add across dimensions = […]`, and a
//     `reducer(…) { … }` region) and region-carrying ops (scatter) get their region as a
//     computation;
//   * `stablehlo.while` becomes a while over a tuple of its operands with `cond` and `do` as
//     computations; values the regions read from outside are carried through the loop unchanged.
//     A `lax.scan` over layers is unrolled when its trip count is known (counter < constant), and
//     the repeated body becomes repeated segments;
//   * multi-result values `%0:3` are tuples, `%0#1` their elements;
//   * `mhlo.sharding` / `sdy.sharding` attributes on arguments and ops are kept as annotations;
//   * `loc(…)` trailers are skipped; `#locN = loc("name"(…))` definitions give ops their scope
//     (as HLO's metadata op_name does).
// Element types: f16, bf16, f32, f64, i1 (pred), i8/i16 (refused by the importer), i32, i64,
// ui32, ui64 (read as s32, s64).
//
// Errors name the file, line and column: "step.mlir:12:7: expected ':' before the result types
// [stablehlo.syntax]". Codes: stablehlo.syntax, stablehlo.unsupported (an op or form the
// translation does not know), stablehlo.no_entry, stablehlo.too_large, and the HLO importer's.

#include <string>
#include <string_view>

#include "import/hlo_parser.h"
#include "import/imported_model.h"

namespace cfp {

// The translation alone (for tests and the importer).
Result<hlo::Module> stableHloToHlo(std::string_view text, const std::string& sourceName);

Result<ImportedModel> importStableHloText(std::string_view text, const std::string& sourceName,
                                          const ImportOptions& options = {});
Result<ImportedModel> importStableHloFile(const std::string& path, const ImportOptions& options = {});

// Whether `text` looks like StableHLO / MLIR (a `module` or `func.func` with stablehlo ops).
bool looksLikeStableHlo(std::string_view text);

}  // namespace cfp
