#pragma once
// The input of segment detection: a sequence of blocks, each a set of ops with a strategy count.
//
// Segments do not depend on how blocks are found: any producer (ParallelBlock detection, a test,
// an importer) hands over BlockViews. Invariants (checked by blockSignatures()):
//   * members are op ids of one graph, strictly increasing (sorted, no duplicates);
//   * no op is a member of two blocks;
//   * strategyCount ≥ 1 (the number of strategies retained for the block on the mesh).
// Blocks are given in execution order, i.e. ordered by their entry op id.
//
//   BlockView qkv{{12, 13, 17, 40}, 3};   // four member ops, three strategies

#include <cstdint>
#include <vector>

#include "ir/op.h"

namespace cfp {

struct BlockView {
    std::vector<OpId> members;  // sorted op ids
    int64_t strategyCount = 1;
};

}  // namespace cfp
