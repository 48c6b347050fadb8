#pragma once
// The native JSON graph format ("cfp-graph", version 1), documented in docs/graph-format.md.
//
//   {"format": "cfp-graph", "version": 1, "name": "mlp",
//    "nodes": [
//      {"name": "x", "op": "parameter", "type": "f32[4,8]", "operands": [], "role": "input",
//       "phase": "forward", "scope": ""},
//      {"name": "w", "op": "parameter", "type": "f32[8,16]", "operands": [], "role": "trainable",
//       "phase": "forward", "scope": "fc1"},
//      {"name": "y", "op": "dot", "type": "f32[4,16]", "operands": ["x", "w"],
//       "dot_dimension_numbers": {"lhs_batch_dims": [], "rhs_batch_dims": [],
//                                 "lhs_contracting_dims": [1], "rhs_contracting_dims": [0]},
//       "phase": "forward", "scope": "fc1"}],
//    "outputs": ["y"]}
//
// Guarantees:
//   * writeGraphJson is deterministic (same graph, same bytes): fixed key order, nodes in id order,
//     one node per line, doubles printed in the shortest form that reads back exactly.
//   * read(write(g)) == g and write(read(write(g))) == write(g) byte for byte for every valid graph
//     (NaN literals excepted from the first: NaN != NaN; they still read back as NaN).
//   * The reader accepts nodes in any order and sorts them topologically by operand names, keeping
//     file order wherever the dependencies allow it (so a written file reads back in the same order).
//   * Every error has a stable code and says where: Error::where is "<source>:<JSON Pointer>" (e.g.
//     "model.json:/nodes/3/operands/1"), "<source>:<line>:<column>" for JSON syntax errors, or just
//     "<source>" for the document as a whole. With an empty source name the prefix and colon are
//     left out. The codes are listed in docs/graph-format.md.
//   * Crafted input cannot crash the reader, make it hang, or make it allocate beyond a small
//     multiple of the input size: shapes are overflow-checked and node and literal counts capped.

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace cfp {

inline constexpr std::string_view kGraphFormatName = "cfp-graph";
inline constexpr int64_t kGraphFormatVersion = 1;

// Caps on what a document may ask for. The defaults are far beyond any real training step
// (GPT-3 175B is ~10^5 ops); tests lower them to exercise the checks cheaply.
struct GraphReadLimits {
    int64_t maxNodes = 10'000'000;
    int64_t maxLiteralValues = int64_t{1} << 24;  // per constant
    int64_t maxFileBytes = int64_t{1} << 31;      // readGraphFile only
};

// Parses a graph document. `sourceName` (a file name, or empty) prefixes Error::where.
Result<Graph> readGraphJson(std::string_view text, const std::string& sourceName,
                            const GraphReadLimits& limits = {});

// Reads and parses the file at `path`; errors are located as "<path>:<pointer>".
Result<Graph> readGraphFile(const std::string& path, const GraphReadLimits& limits = {});

// Serialises a graph (which must satisfy Graph::validate()). Writes only the attributes each op
// kind uses; attribute fields an op kind ignores are not preserved.
std::string writeGraphJson(const Graph& graph);

// Writes writeGraphJson(graph) to `path` atomically (io/atomic_file.h): on failure the target is
// untouched and the error (io.open, io.write, io.rename) names the path.
Status writeGraphFile(const Graph& graph, const std::string& path);

}  // namespace cfp
