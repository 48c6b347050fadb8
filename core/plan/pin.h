#pragma once
// What a user fixes before a search: pins (restrictions of the segment DP to chosen strategies)
// and the mesh choice (one mesh, or every mesh that fits the cluster). Both are typed values with
// one parser and one printer each; print(parse(text)) is the canonical text and
// parse(print(value)) == value (tests/plan/tst_pin.cpp).
//
// Pins, as typed on the command line (`cfp plan --pin P`) and stored in plans and projects:
//   "3=x:rows,*,*,x:contract"        segment 3 of the chain: one entry per block of the segment,
//                                    a strategy label or index, or "*" for free
//   "T1=dp:rows,tp:cols;*;*;*"       every segment of type 1. Labels on multi-axis meshes contain
//                                    commas, so entries are separated by ';' whenever the text has
//                                    one, else by ','
//   "b17=x:cols"  (or "block:17=…")  block 17, one entry
// The printer separates entries by ';' when any entry contains a ',' (or when a block pin's single
// entry does, where a trailing ';' marks the separator), else by ','.
// Whether a segment, type, block or strategy exists is checked against an analysis
// (PlanProblem::applyPins); parsing only checks the form. Errors: plan.bad_pin.
//
// Mesh choice: "auto" (every factorization of the device count into 1–3 axes aligned with nodes,
// planner.h) or a mesh in any form parseMesh accepts; printed as "auto" or "dp=2,tp=4" (names and
// sizes, no link classes). Errors: mesh.* from parseMesh, located at "mesh".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/mesh.h"
#include "util/result.h"

namespace cfp {

struct Pin {
    enum class Scope : uint8_t { Segment, SegmentType, Block };
    Scope scope = Scope::Segment;
    int32_t index = 0;  // segment index, segment type, or block id
    // Per block of the segment (one entry for a block pin): a strategy label or index; nullopt = free.
    std::vector<std::optional<std::string>> strategies;

    // "3", "T1", "b17": what the pin applies to (two pins with the same target: the later wins
    // where they disagree).
    std::string target() const;
    std::string toString() const;
    bool operator==(const Pin&) const = default;
};

Result<Pin> parsePin(std::string_view text);
Result<std::vector<Pin>> parsePins(const std::vector<std::string>& texts);
std::vector<std::string> pinTexts(const std::vector<Pin>& pins);

class MeshChoice {
public:
    MeshChoice() = default;  // auto
    static MeshChoice automatic() { return {}; }
    static MeshChoice fixed(Mesh mesh);
    // "auto" (or empty) or a mesh text; the mesh is not yet bound to a cluster (no link classes).
    static Result<MeshChoice> parse(std::string_view text);

    bool isAuto() const { return !m_mesh.has_value(); }
    const Mesh& mesh() const { return *m_mesh; }  // only when !isAuto()
    std::string toString() const;                // "auto" or "dp=2,tp=4"
    bool operator==(const MeshChoice& o) const;

private:
    std::optional<Mesh> m_mesh;
};

// "dp=2,tp=4": a mesh's axes in the form parseMesh reads back, without link classes.
std::string meshShapeText(const Mesh& mesh);

}  // namespace cfp
