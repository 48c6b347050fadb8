#pragma once
// Repeated segments: a cover of the block sequence by windows of consecutive blocks, where windows
// with the same canonical structure are one segment type (profiled once, reused at every repeat).
//
// Window identity. Two windows are the same type iff they have the same length, the same block
// fingerprints in order, the same strategy counts, and the same dataflow edges between their own
// blocks (CrossBlockEdge with both ends inside the window, by position in the window and
// member-local indices). Edges from outside the window are already part of the block fingerprints
// (producer kind and type).
//
// Which cover. The admissible covers use windows of at most CoverOptions::maxWindowBlocks blocks
// and follow the repeat rule: every multi-block type occurs at least twice, except that the first
// and the last segment may be one-off multi-block windows (the head and tail of a stack) when the
// cover has at least one repeated multi-block type. Grouping blocks pays only where the group
// repeats; without any repetition every block is its own type. Among admissible covers the chosen
// one minimises, in this order:
//   1. the number of distinct segment types;
//   2. whether it splits a model layer: a cover none of whose boundaries has blocks of one layer
//      (BlockSignature::layer, from the ops' scopes "layers.N…") on both sides comes first;
//   3. the profiling work Σ over types of combinations (Π of its blocks' strategy counts,
//      saturating at INT64_MAX);
//   4. the blocks in all types together (Σ over types of window length);
//   5. the number of segments;
//   6. the segment boundaries, lexicographically (shorter windows first).
// The order is total, so the cover is unique and does not depend on hash order or threads.
// Without layers (an imported graph without scopes, blocks built by hand) criterion 2 ties.
//
// Why this objective and not only "fewest types, then fewest segments": criterion 2 keeps a layer
// a layer — `E (A B C D)×96 H L` gives E | ABCD ×96 | HL, whereas "fewest segments" would fold
// four layers into one 16-block window (3^16 combinations to profile instead of 3^4) and absorb
// layers into the head and tail. The head/tail exception keeps a stack whose first or last layer
// differs (the last layer's residual gradient has no successor to accumulate) as "head, Layer ×
// (N−1), tail" instead of breaking every layer into pieces that happen to repeat.
//
// Why criterion 2 comes before the combinations: with the same period, a repeat can often start
// at several rotations, and the cheapest one need not follow the model's layers. In ParallelBlocks
// of a GPT stack layer 0's first block also computes what every layer reads (the causal mask, RoPE
// tables), so it differs from the other layers' first blocks:
//
//   Q0 O F1 F2 | Q O F1 F2 | … | Q O F1 F2 | H        (24 layers, 3 strategies per block, H 2)
//   by criteria 1, 3–6:  [Q0 O] (9), [F1 F2 Q O] ×23 (81), [F1 F2 H] (18): every segment is half of
//                        one layer and half of the next
//   with criterion 2:    [Q0 O F1 F2] (81) "layers.0", [Q O F1 F2] ×23 (81) layers 1–23, [H] (2)
//
// The aligned cover profiles more combinations (164 instead of 108) but its segments are the
// model's layers, which is what a report ("Layer × 23" after "layers.0") and a pin refer to.
//
//   E A B C D A B C D … A B C D H L      (96 repeats, 3 strategies per block)
//   types: T0 = [E] (3), T1 = [A B C D] (81), T2 = [H L] (9, one-off tail window)
//   segments: T0@0, T1@1, T1@5, …, T1@381, T2@385;  repeatRuns: T0×1, T1×96, T2×1
//
// Algorithm (exact). Criteria 1 and 3–6 first, as below; if that cover splits a layer, the same
// search runs again with the number of types fixed at the minimum and segments allowed to end only
// where no layer is split, and its cover (if any) is taken. Window keys are interned per (start, length), so candidate types are the
// distinct windows; a multi-block candidate must occur twice without overlap, or start at 0 or end
// at N. Singletons of blocks whose structure occurs once and that no head or tail window can reach
// are forced. Then iterative deepening on the number of types k: a depth-first search grows a type
// set D from the forced singletons, adding a candidate window that starts at a position reachable
// from 0 by windows of D (plain word-break reachability). At |D| = k, D is feasible if some cover
// uses exactly D's types under the repeat rule (a forward reachability over (position, uses per
// multi-block type: none / once inside / once at an end / repeated)). Completeness: if D* is an
// optimal type set and D ⊊ D*, the first segment of an optimal cover whose type is not in D starts
// at a position reachable by D, so its type is among the candidates added to D; hence every
// feasible set of k types is reached, and the first k with a feasible set is the minimum. All
// feasible sets at that k are compared by criteria 2–3 (both only grow as types are added, which
// prunes the search), and the best cover of each remaining set by criteria 4–5 (a DP over
// (position, uses)). Set dedup and pruning keep it fast on layered models: a 400-block GPT-like
// sequence takes about a millisecond. Tests compare it with brute force over every cover of every
// sequence of up to 10 blocks over 3 structures.
//
// Guarantee. quality == Optimal: the cover is the unique optimum above. The search counts its work
// (positions × types scanned); past CoverOptions::searchWorkLimit it stops: if a feasible set with
// the minimum number of types was already found, that best-so-far is returned (TypeCountOptimal:
// criterion 1 is optimal, 2–5 may not be); otherwise (Fallback) the longest tandem run of one
// window becomes one type and every other block its own type, or every block is its own type if
// that has fewer types. Layered models finish far below the limit; sequences with little
// structure (random blocks over 8+ structures, a long unrepeated run repeated once) reach it.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "segments/fingerprint.h"

namespace cfp {

struct CoverOptions {
    int maxWindowBlocks = 16;                 // longest window (blocks per segment)
    int64_t searchWorkLimit = 50'000'000;     // work units before giving up on optimality (~0.1 s)
};

enum class CoverQuality : uint8_t { Optimal, TypeCountOptimal, Fallback };
std::string_view coverQualityName(CoverQuality q);  // "optimal", "type_count_optimal", "fallback"

struct SegmentType {
    int id = 0;                              // index in SegmentCover::types (by first occurrence)
    std::vector<uint64_t> blockFingerprints; // the window's blocks in order
    std::vector<int64_t> strategyCounts;     // per block of the window
    int64_t combinations = 1;                // Π strategyCounts, saturating at INT64_MAX
    double combinationsLog10 = 0.0;          // Σ log10 strategyCounts (exact where the product saturates)
    int occurrences = 0;                     // segments of this type
    int firstSegment = 0;                    // its first segment: the representative to profile
};

struct Segment {
    int type = 0;
    int firstBlock = 0;
    int blockCount = 0;
};

struct SegmentCover {
    std::vector<SegmentType> types;  // ids 0..n-1 by first occurrence
    std::vector<Segment> segments;   // in order, covering blocks 0..N-1 exactly once
    CoverQuality quality = CoverQuality::Optimal;
    int64_t searchWork = 0;          // work units the search used
};

// The cover described above. Errors: "segments.bad_option" (maxWindowBlocks < 1),
// "segments.bad_block" (strategy count below 1, at "blocks/<i>").
Result<SegmentCover> computeSegmentCover(std::span<const BlockSignature> blocks, const CoverOptions& options = {});

// Convenience for sequences without cross-block edges (tests, tools): one signature per block.
// `strategyCounts` may be empty (every block 1) or have one entry per block.
Result<SegmentCover> computeSegmentCover(std::span<const uint64_t> fingerprints, std::span<const int64_t> strategyCounts,
                                         const CoverOptions& options = {});

// Maximal runs of consecutive segments of one type: the "Layer × 96" of a report.
struct RepeatRun {
    int type = 0;
    int count = 0;         // segments in the run
    int firstSegment = 0;  // index in SegmentCover::segments
    int firstBlock = 0;    // block position where the run starts
};
std::vector<RepeatRun> repeatRuns(const SegmentCover& cover);

// One line per run: "T0[1 block] ×1 @0, T1[4 blocks] ×96 @1, …" (stable; for logs and tests).
std::string describeCover(const SegmentCover& cover);

// Checks a cover against the blocks independently of the search: segments tile 0..N-1 in order,
// windows within the limit, every segment's window matches its type, multi-block types occur at
// least twice (or once as the first or last segment of a cover that has a repeated multi-block
// type), type ids by first occurrence. Error "segments.bad_cover" names the first violation.
Status checkCover(std::span<const BlockSignature> blocks, const SegmentCover& cover, const CoverOptions& options = {});

}  // namespace cfp
