#pragma once
// What `cfp plan` and `cfp estimate` print of a planned run: the human summary (step time and its
// parts, batch per step and round, memory against the usable memory, memory policy, segments,
// baselines, meshes and accumulation counts tried) and the --json object.

#include "cli_common.h"
#include "workflow/workflow.h"

namespace cfp::cli {

// The request options `cfp plan` and `cfp estimate` share: MODEL and its build options, --hardware,
// --nodes, --memory-limit, --memory-reserve, --attention, --threads, --db, --db-fingerprint.
Result<PlanRequest> commonRequestFromArgs(const ParsedArgs& args);

Json planRunJson(const PlanRun& run);
void printPlanRun(const PlanRun& run);

}  // namespace cfp::cli
