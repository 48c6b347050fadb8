#pragma once
// Syntax of XLA's HLO text: what `jax.jit(f).lower(…).as_text(dialect="hlo")`, `compiled.as_text()`,
// `HloModule::ToString()` and PyTorch/XLA's graph dumps print. This layer only reads the text into
// plain structs; hlo_import.h turns them into the graph IR.
//
//   HloModule jit_step, entry_computation_layout={(f32[8,16]{1,0})->f32[]}
//
//   %region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {
//     %Arg_0.5 = f32[] parameter(0)
//     %Arg_1.6 = f32[] parameter(1)
//     ROOT %add.7 = f32[] add(f32[] %Arg_0.5, f32[] %Arg_1.6)
//   }
//
//   ENTRY %main.9 (Arg_0.1: f32[8,16]) -> f32[] {
//     %Arg_0.1 = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]0,1}
//     %constant.2 = f32[] constant(0)
//     ROOT %reduce.8 = f32[] reduce(f32[8,16]{1,0} %Arg_0.1, f32[] %constant.2), dimensions={0,1},
//         to_apply=%region_0.4, metadata={op_name="jit(step)/jit(main)/reduce_sum" source_file="m.py" source_line=3}
//   }
//
// Accepted variations: names with or without '%', operands with or without their shape, layouts
// (`{1,0}`, tiled `{1,0:T(8,128)}`) and dynamic bounds (`<=8`) on shapes, `/*index=5*/` and `//`
// comments, computations with or without a signature, instructions spread over several lines.
// Attribute values are kept as text (balanced over (), [], {} and strings) and interpreted by the
// importer; unknown attributes are carried along.
//
// Errors (code "hlo.syntax" unless noted) are located as "<source>:<line>:<column>" (1-based):
// hlo.syntax, hlo.no_module (no `HloModule` header), hlo.no_entry, hlo.duplicate_name,
// hlo.too_large (input or a count beyond the limits), hlo.too_deep (nesting beyond the limit).
// The parser never recurses deeper than HloParseLimits::maxNesting and allocates at most a small
// multiple of the input size.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace cfp::hlo {

struct Location {
    int32_t line = 0;
    int32_t column = 0;
};

// An HLO shape: an array `f32[8,1024]` (layout dropped) or a tuple `(f32[], s32[2])`.
struct Shape {
    bool isTuple = false;
    std::string elementType;      // "f32", "bf16", "pred", "token", … (arrays only)
    std::vector<int64_t> dims;    // arrays only; a dynamic dim `<=8` keeps its bound 8
    std::vector<Shape> elements;  // tuples only
    std::string toString() const;
};

struct Attribute {
    std::string key;
    std::string value;  // raw text, e.g. "{0,1}", "%region_0.4", "{op_name=\"…\"}"
};

struct Instruction {
    std::string name;                   // without '%'
    Shape shape;
    std::string opcode;                 // "add", "get-tuple-element", …
    std::vector<std::string> operands;  // names, without '%'
    std::string payload;                // constant(…) literal text or parameter(…) number, else empty
    std::vector<Attribute> attributes;
    bool isRoot = false;
    Location where;

    // The attribute's raw value, or nullptr.
    const std::string* attribute(std::string_view key) const;
};

struct Computation {
    std::string name;
    bool isEntry = false;
    std::vector<Instruction> instructions;
    int32_t root = -1;  // index into instructions: the ROOT one, else the last
    Location where;
};

struct Module {
    std::string name;
    std::vector<Attribute> attributes;
    std::vector<Computation> computations;
    int32_t entry = -1;  // index into computations
};

struct ParseLimits {
    int64_t maxInputBytes = int64_t{1} << 31;
    int64_t maxInstructions = 10'000'000;
    int32_t maxNesting = 64;  // tuple shapes and balanced attribute values
    int32_t maxRank = 64;
};

Result<Module> parseModule(std::string_view text, const std::string& sourceName, const ParseLimits& limits = {});

// "<source>:<line>:<column>", or "<line>:<column>" without a source name.
std::string locationText(const std::string& sourceName, Location where);

// Integer lists of attribute values: "{0,1}" → {0,1}; "{}" → {}. Errors hlo.bad_attribute.
Result<std::vector<int64_t>> parseIntList(std::string_view value);
// "{[0:8], [2:16:2]}" → start/limit/stride per dim (stride 1 when absent).
Result<std::vector<std::array<int64_t, 3>>> parseSliceRanges(std::string_view value);
// A quoted string value "\"abc\"" → abc (escapes \" \\ \n \t). Unquoted text is returned as is.
std::string unquote(std::string_view value);
// Fields of a `{key=value key2="v"}` value such as metadata: pairs in order.
std::vector<std::pair<std::string, std::string>> parseFieldList(std::string_view value);

}  // namespace cfp::hlo
