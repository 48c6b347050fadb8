#pragma once
// `cfp iopddl solve|eval|export`: the IOPDDL contest format (docs/iopddl.md).

#include <string>
#include <vector>

namespace cfp::cli {

// Runs `cfp iopddl ARGS...`; returns the process exit code.
int runIopddlCommand(const std::vector<std::string>& args);

}  // namespace cfp::cli
