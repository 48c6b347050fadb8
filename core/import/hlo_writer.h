#pragma once
// Graph IR → XLA HLO text, the reverse of hlo_import.h: one ENTRY computation with a parameter per
// graph parameter (in op order), one instruction per op (operands printed with their shapes,
// default layouts), `metadata={op_name="<scope as a/b/c>/<op kind>"}` so that scopes read back,
// one small region computation per reduce/scatter combiner, and a ROOT tuple of the graph outputs.
// Phases, parameter roles and provenance are not written: the importer infers phases and roles.
//
// Used by `cfp graph -o FILE.hlo` and to make HLO fixtures from built-in models; importing the
// text again gives the same op kinds, shapes, attributes and scopes in the same order (checked by
// the import tests).

#include <string>
#include <vector>

#include "ir/graph.h"

namespace cfp {

// `shardings`, when given, holds one HloSharding text per op ("{devices=[2,1]0,1}", empty: none),
// written as the instruction's `sharding=` (a plan's layouts: `cfp graph --plan`).
std::string writeHloText(const Graph& graph, const std::vector<std::string>& shardings = {});

}  // namespace cfp
