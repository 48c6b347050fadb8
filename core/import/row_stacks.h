#pragma once

// Stacks an unrolled loop builds and reads one row at a time.
//
// A `lax.scan` over layers stacks each iteration's per-layer values (the residuals the backward
// pass reads, the stacked weight gradients) with a dynamic-update-slice at the loop counter, and
// reads stacked values with a dynamic-slice there. Unrolled, with the counter a constant, an
// update becomes slices of the stack around the new row and a concatenate; iteration i's slices
// are i rows and L − i − 1 rows long, so no two iterations look alike and the layers cannot be
// recognised as repeated segments. resolveRowStacks rewrites such chains by what they hold:
//
//   * a one-row slice of a stack built by concatenates reads the op that wrote the row (or a
//     one-row slice of the stack's first, unresolved source);
//   * a concatenate along dim 0 whose operands are such stacks becomes one concatenate of the
//     rows it holds (consecutive rows of one source as one slice);
//   * the intermediate stacks then have no users and are dropped.
//
// Every value the graph computes is unchanged (tested against the interpreter).
//
// splitStackedParameters then gives each layer its own weights: a trainable parameter each row of which is
// read through a one-row slice along dim 0 (the stacked weights a scan reads layer by layer)
// becomes one parameter per row, `<p>[<row>]`, with the stack's role and phase (the exports fold
// them back into `<p>`); the slices read those, and the parameter's other uses (an optimizer that
// updates the stack whole) read one concatenate of the rows, named `<p>`.

#include <cstdint>
#include <string>
#include <vector>

#include "import/imported_model.h"
#include "ir/graph.h"
#include "util/result.h"

namespace cfp {

// Rewrites `g` as above; `hints` (one per op, may be shorter) follow their ops. Returns the number
// of one-row reads resolved (0: the graph is unchanged).
Result<int64_t> resolveRowStacks(Graph& g, PhaseHints& hints);

// Splits `g`'s stacked parameters as above (after phases and roles are set). Returns the names of
// the parameters split.
Result<std::vector<std::string>> splitStackedParameters(Graph& g);

}  // namespace cfp
