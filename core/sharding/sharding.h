#pragma once
// TensorSharding: how one tensor is laid out over a device mesh.
//
// Per tensor dimension, the ordered list of mesh axes that split it (major to minor), plus the set of
// mesh axes over which the value is a pending partial sum. Text form (toString / parseSharding):
//
//   [{dp},{},{tp}] partial{}      dim 0 split over dp, dim 2 over tp, no pending sum
//   [{},{dp,tp}] partial{x}       dim 1 split over dp (major) then tp (minor); partial sum over x
//   [] partial{}                  a replicated scalar
//
// Worked example: X f32[8,1024,4096] on the mesh {dp=2, tp=4} with `[{dp},{},{tp}] partial{}`. The
// device at (dp=i, tp=j) holds X[4i:4i+4, :, 1024j:1024j+1024]: local shape [4,1024,1024], 16 MiB of
// the 128 MiB tensor. With `[{dp,tp},{},{}] partial{}` dim 0 is cut into 2·4 = 8 blocks and device
// (i, j) holds block i·4 + j (the first-listed axis is major). With `[{},{},{}] partial{tp}` every
// device holds a full-size [8,1024,4096] buffer and X is the sum of the four buffers of a tp group.
//
// Invariants (checked by create / parseSharding, independent of any mesh): axis names are
// identifiers; each axis appears at most once across all dims and the partial set. The partial set
// is stored sorted by name so that equal shardings compare and print equal. Against a concrete mesh
// and tensor type, validateSharding() additionally checks the rank, that every axis exists, and that
// every split is even (sharding.uneven): a dim of size d split over axes of sizes s1…sk needs
// d % (s1·…·sk) == 0. Uneven (padded) splits are rejected rather than silently padded, so byte counts
// and collectives are exact.
//
// Ordering (operator<=>) is lexicographic over (dims, partial) and hashing is FNV-1a over the same
// fields: both are stable across platforms and runs.
//
// Stable error codes: sharding.syntax, sharding.bad_name, sharding.duplicate_axis,
// sharding.rank_mismatch, sharding.unknown_axis, sharding.uneven.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/types.h"
#include "sharding/mesh.h"
#include "util/result.h"

namespace cfp {

// Where an axis is used in a sharding.
struct AxisUse {
    enum class Kind : uint8_t { Unused, Dim, Partial };
    Kind kind = Kind::Unused;
    int64_t dim = -1;       // for Dim: the tensor dimension
    int64_t position = -1;  // for Dim: index in that dimension's axis list (0 = major)
};

class TensorSharding {
public:
    using AxisList = std::vector<std::string>;

    // Rank-0 replicated value.
    TensorSharding() = default;

    // Checks names and that no axis is used twice; sorts the partial set.
    static Result<TensorSharding> create(std::vector<AxisList> dimAxes, AxisList partialAxes = {});
    // Every dimension unsplit, nothing pending.
    static TensorSharding replicated(int64_t rank);

    int64_t rank() const { return static_cast<int64_t>(m_dims.size()); }
    const std::vector<AxisList>& dims() const { return m_dims; }
    const AxisList& dimAxes(int64_t dim) const { return m_dims.at(static_cast<size_t>(dim)); }
    const AxisList& partialAxes() const { return m_partial; }

    AxisUse use(std::string_view axis) const;
    bool isPartial() const { return !m_partial.empty(); }
    bool isPartialOver(std::string_view axis) const;
    // No split and nothing pending: every device holds the whole value.
    bool isReplicated() const;
    // Axes splitting some dimension, in dim order then major-to-minor.
    AxisList splitAxes() const;

    // Derived shardings (the result is checked like create()).
    Result<TensorSharding> withDimAxes(int64_t dim, AxisList axes) const;
    Result<TensorSharding> withPartialAxes(AxisList partialAxes) const;

    // "[{dp},{},{tp}] partial{}"
    std::string toString() const;
    size_t hash() const;

    bool operator==(const TensorSharding&) const = default;
    std::strong_ordering operator<=>(const TensorSharding&) const = default;

private:
    std::vector<AxisList> m_dims;
    AxisList m_partial;
};

// Parses the text form. "partial{…}" may be omitted (nothing pending); spaces between tokens are
// allowed.
Result<TensorSharding> parseSharding(std::string_view text);

// Checks the sharding fits `mesh` and `type` (rank, known axes, even splits).
Status validateSharding(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type);

// Product of the sizes of the axes splitting `dim` (1 when unsplit). Requires known axes.
int64_t splitFactor(const TensorSharding& sharding, const Mesh& mesh, int64_t dim);

// Per-device shard dims after validation: dims[d] / splitFactor(d).
Result<std::vector<int64_t>> localShape(const TensorSharding& sharding, const Mesh& mesh,
                                        const TensorType& type);
Result<TensorType> localType(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type);
// Bytes one device holds (pending partial sums hold full-size local buffers).
Result<int64_t> bytesPerDevice(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type);

}  // namespace cfp

template <>
struct std::hash<cfp::TensorSharding> {
    size_t operator()(const cfp::TensorSharding& s) const noexcept { return s.hash(); }
};
