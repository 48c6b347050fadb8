#pragma once
// The `cfp` commands, one file each; each takes the arguments after its name and returns the
// process exit code (cli_common.h).

#include <string>
#include <vector>

namespace cfp::cli {

int cmdDescribe(const std::vector<std::string>& args);
int cmdAnalyze(const std::vector<std::string>& args);
int cmdGraph(const std::vector<std::string>& args);
int cmdPresets(const std::vector<std::string>& args);
int cmdDevices(const std::vector<std::string>& args);
int cmdHardware(const std::vector<std::string>& args);
int cmdPlan(const std::vector<std::string>& args);
int cmdEstimate(const std::vector<std::string>& args);
int cmdProfile(const std::vector<std::string>& args);
int cmdExport(const std::vector<std::string>& args);
int cmdSchedule(const std::vector<std::string>& args);
int runIopddlCommand(const std::vector<std::string>& args);

}  // namespace cfp::cli
