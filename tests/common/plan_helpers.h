#pragma once
// Test helpers for planner requests written as text: a mesh choice and pins as a user types them.

#include <string>
#include <vector>

#include "must.h"
#include "plan/pin.h"

namespace cfp::test {

inline MeshChoice meshOf(const std::string& text) { return must(MeshChoice::parse(text), "mesh " + text); }
inline Pin pinOf(const std::string& text) { return must(parsePin(text), "pin " + text); }
inline std::vector<Pin> pinsOf(const std::vector<std::string>& texts) { return must(parsePins(texts), "pins"); }

}  // namespace cfp::test
