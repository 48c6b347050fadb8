#pragma once
// The plan file ("cfp-plan", version 1): a Plan (plan.h) as JSON, documented field by field in
// docs/plan-format.md and described by the JSON Schema docs/plan.schema.json.
//
//   {
//     "format": "cfp-plan",
//     "version": 1,
//     "model": {"name": "gpt3-125m", "source": "builtin:gpt3-125m", "batch": 8, "seq": 2048, "ops": 1234},
//     "hardware": {"id": "h100-sxm", "name": "NVIDIA H100 SXM5 80GB", "nodes": 1, "gpus_per_node": 8},
//     "mesh": {"text": "{x=2 (intra), y=4 (intra)}", "axes": [{"name": "x", "size": 2, "link": "intra"}, …]},
//     …,
//     "tensors": [
//       {"op": 0, "name": "input_ids", "scope": "inputs", "block": -1, "result": "[{x},{}] partial{}", …},
//       …
//     ]
//   }
//
// Guarantees:
//   * planToText is deterministic (same plan and graph, same bytes): fixed key order, 2-space indent,
//     small objects (tensors, blocks, mesh axes) on one line, doubles in the shortest text that reads
//     back to the same double, non-finite doubles as the strings "inf", "-inf", "nan", a trailing
//     newline. Strings that are not valid UTF-8 have the bad bytes replaced by U+FFFD.
//   * planFromJson(planToText(p, g)) equals p field by field, and re-writing it gives the same bytes
//     (a baseline that is not feasible reads back with stepSeconds 0: the file stores null).
//   * Reading is strict: unknown or missing fields, wrong types, out-of-range integers, repeated
//     keys and inconsistent cross references are errors. Crafted input cannot crash the reader or
//     make it allocate beyond a small multiple of the input size (no count in the file is trusted
//     for an allocation; integers must fit their C++ fields).
//
// Errors (stable codes). Error::where is the JSON Pointer of the offending value ("/tensors/17/result"),
// "line:column" for syntax errors, or the path for I/O errors; when an origin (file name) is given
// the message ends with " (in <origin>)".
//   plan.io        the file cannot be read or written (where: the path)
//   plan.syntax    not JSON (where: line:column)
//   plan.format    not a cfp-plan document, a field missing, unknown, repeated or of the wrong type,
//                  an integer out of range, or a cross reference that does not hold
//   plan.version   a version this reader does not support (the message lists the supported ones)
//   plan.mesh      the mesh text does not parse (the parser's message and code are quoted), or the
//                  axes list disagrees with it
//   plan.sharding  a sharding text does not parse, or names an axis the mesh lacks
//   plan.mismatch  checkPlanAgainstGraph: the plan was not made for this graph (names the op)

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "plan/plan.h"
#include "util/result.h"

namespace cfp {

inline constexpr std::string_view kPlanFormatName = "cfp-plan";
inline constexpr int64_t kPlanFormatVersion = 3;
// The largest gradient-accumulation count a plan file may state.
inline constexpr int64_t kMaxAccumulation = int64_t{1} << 20;
// readPlanFile refuses larger files (a 10^5-op plan is ~20 MB).
inline constexpr int64_t kMaxPlanFileBytes = int64_t{1} << 30;

// The plan as a JSON document. Op names and scopes come from `graph` (tensors[i].op indexes it; an
// index outside the graph gets an empty name and scope rather than an exception).
nlohmann::ordered_json planToJson(const Plan& plan, const Graph& graph);

// planToJson printed as described above.
std::string planToText(const Plan& plan, const Graph& graph);

// Parses a plan document. `origin` (a file name, or empty) is named in error messages. When
// `tensorNames` is given it receives tensors[i].name for every entry (the Plan keeps op indices
// only); pass it on to checkPlanAgainstGraph to compare the names with the graph's.
Result<Plan> planFromJson(std::string_view text, std::string_view origin,
                          std::vector<std::string>* tensorNames = nullptr);

// Reads (at most kMaxPlanFileBytes) and parses the file at `path`.
Result<Plan> readPlanFile(const std::string& path, std::vector<std::string>* tensorNames = nullptr);

// Checks the plan against `graph` (checkPlanAgainstGraph), then writes planToText atomically
// (io/atomic_file.h): on failure the target is untouched. I/O failures are plan.io (the message
// quotes the io.* code), where = the path.
Status writePlanFile(const std::string& path, const Plan& plan, const Graph& graph);

// Checks that `plan` was made for `graph`: the model name is the graph's name; one tensor entry per
// op, in op order; each entry's result sharding has the op's rank and each operand sharding the rank
// of that operand, one per operand; every sharding validates on the plan's mesh (known axes, even
// splits: validateSharding); own-collective axes are axes of the mesh; block references are in range.
// With `tensorNames` (from planFromJson) the names must equal the op names in order. Error
// plan.mismatch; the message names the op, where is the JSON Pointer ("/tensors/17/operands/1").
Status checkPlanAgainstGraph(const Plan& plan, const Graph& graph,
                             const std::vector<std::string>* tensorNames = nullptr);

}  // namespace cfp
