#pragma once
// Reading and writing IOPDDL problems and solutions in the contest's JSON format.
//
// The reader streams: it tokenizes the (optionally gzip-compressed) file through a fixed buffer and
// appends numbers straight into the flat vectors of `Problem`, never building a DOM, so memory is
// about the size of the numbers (8 bytes each) however large the file. The format:
//
//   {"problem": {"name": "example",
//                "nodes": {"intervals": [[30, 70], ...], "costs": [[15], ...], "usages": [[10], ...]},
//                "edges": {"nodes": [[0, 1], ...], "costs": [[30, 40], ...]},
//                "usage_limit": 50}}
//
// Members may come in any order; members the format does not define are skipped; a repeated member
// is an error. Every number must be an integer that fits int64. After reading, the problem is
// checked: equal counts of intervals, costs and usages; every node has at least one strategy and as
// many usages as costs; no negative times; edge ends are valid nodes; an edge has as many costs as
// the product of its nodes' strategy counts.
//
// Error codes:
//   io.open         the file cannot be opened
//   iopddl.gzip     the compressed stream is corrupt
//   iopddl.syntax   not JSON, or an unexpected JSON type; where = "<line>:<column>" (1-based)
//   iopddl.format   JSON of the wrong shape; where = JSON Pointer ("/problem/edges/costs/3")
//   iopddl.solution a solution file that is not a JSON array of integers
// readProblemFile / readSolutionFile prefix `where` with the path.

#include <string>
#include <string_view>

#include "iopddl/problem.h"
#include "util/result.h"

namespace cfp::iopddl {

// The problem in `path`: plain JSON or gzip-compressed JSON (detected from the content).
Result<Problem> readProblemFile(const std::string& path);
// The problem in `text` (plain JSON).
Result<Problem> parseProblem(std::string_view text);
// The structural checks the reader applies (for problems built in memory).
Status validateProblem(const Problem& problem);

// The contest JSON for `problem`: one node or edge per line, deterministic bytes.
std::string problemToJson(const Problem& problem);
// Writes problemToJson atomically; gzip-compressed when `path` ends in ".gz".
Status writeProblemFile(const std::string& path, const Problem& problem);

// A solution is a JSON array of strategy indices: "[0, 1, 2, 0, 0]" (what the contest's program
// prints after "Solution: "; that prefix is accepted too).
Result<Solution> readSolutionFile(const std::string& path);
Result<Solution> parseSolution(std::string_view text);
std::string solutionToJson(const Solution& solution);
Status writeSolutionFile(const std::string& path, const Solution& solution);

}  // namespace cfp::iopddl
