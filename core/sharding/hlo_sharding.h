#pragma once
// XLA's HloSharding text (what HLO's `sharding={…}` and StableHLO's `mhlo.sharding = "…"` hold) and
// a collective's replica groups, read as typed values and placed on a planning mesh.
//
// Sharding forms read (parseHloSharding):
//   {replicated}                            every device holds the whole value
//   {manual}                                in a manual (shard_map) region: each device its own value
//   {maximal device=3}                      one device holds it
//   {devices=[4,2]0,1,2,3,4,5,6,7}          a grid of tiles: dim 0 cut in 4, dim 1 in 2; the tile at
//                                           grid position (i, j) is on device list[i·2 + j]
//   {devices=[4,2]<=[8]}                    the same, the device list as an iota
//   {devices=[2,4]<=[4,2]T(1,0)}            iota 0..7 reshaped to [4,2], transposed by (1,0), flattened
//   {devices=[4,1,2]<=[8] last_tile_dim_replicate}      the last grid dim replicates (no tensor dim)
//   {devices=[4,1,2]<=[8] last_tile_dims={replicated}}  the same, in the subgroup form
// `metadata={…}` and other attributes after the device list are skipped. Tuple shardings
// (`{{…}, {…}}`), partially manual shardings (`last_tile_dims={manual}`) and other subgroup kinds
// are sharding.hlo_unsupported.
//
// Replica groups (parseReplicaGroups): `{{0,1,2,3},{4,5,6,7}}`, `{}` (every device in one group:
// an empty list), or the iota form `[2,4]<=[8]` (2 groups of 4), `[4,2]<=[2,4]T(1,0)`.
//
// On a mesh (shardingOnMesh). Devices are numbered row-major over the mesh's axes (mesh.h). A tiled
// sharding fits the mesh when some assignment of the mesh's axes (those of size > 1) to the grid
// dims — each axis to one grid dim, ordered major to minor within it — numbers the tiles exactly as
// the device list does (the devices of a replicating last dim compared as a set). Examples on
// {dp=4, tp=2}: {devices=[4,2]<=[8]} is [{dp},{tp}]; {devices=[2,4]<=[4,2]T(1,0)} is [{tp},{dp}];
// {devices=[4,1,2]<=[8] last_tile_dim_replicate} is [{dp},{}]; {replicated} is [{},{}]. On {x=8}
// none of the tiled ones fits (a grid of 4 × 2 needs two axes). Replica groups fit when they are
// exactly the groups of a set of mesh axes, the devices that differ only along those axes
// (groupAxesOnMesh): on {dp=4, tp=2}, {{0,1},{2,3},{4,5},{6,7}} is {tp} and [1,8]<=[8] is {dp, tp}.
//
// Stable error codes: sharding.hlo_syntax, sharding.hlo_unsupported, sharding.mesh_mismatch.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/mesh.h"
#include "sharding/sharding.h"
#include "util/result.h"

namespace cfp {

// Device lists longer than this are refused (sharding.hlo_unsupported) before anything is allocated.
inline constexpr int64_t kMaxHloShardingDevices = int64_t{1} << 20;

struct HloSharding {
    enum class Kind : uint8_t { Replicated, Manual, Maximal, Tiled };
    Kind kind = Kind::Replicated;
    std::vector<int64_t> tileDims;  // Tiled: the grid, one entry per tensor dim, one more when replicateLast
    std::vector<int64_t> devices;   // Tiled: the device of each grid position, row-major; Maximal: {device}
    bool replicateLast = false;     // Tiled: the last grid dim replicates

    // Tensor dims the grid covers (Tiled), -1 for the other kinds (any rank).
    int64_t tensorRank() const;
    // Canonical text: "{replicated}", "{manual}", "{maximal device=3}", "{devices=[4,1,2]0,1,…,7
    // last_tile_dim_replicate}" (the device list written out).
    std::string toString() const;
    bool operator==(const HloSharding&) const = default;
};

Result<HloSharding> parseHloSharding(std::string_view text);

// Groups in order, each a list of device ids; empty: every device in one group.
using ReplicaGroups = std::vector<std::vector<int64_t>>;
Result<ReplicaGroups> parseReplicaGroups(std::string_view text);
std::string replicaGroupsText(const ReplicaGroups& groups);  // "{{0,1},{2,3}}", "{}"

// The sharding of a rank-`rank` value on `mesh` (rules above). Replicated and tiled shardings only:
// {manual} and maximal shardings are sharding.hlo_unsupported, a grid the mesh cannot number
// sharding.mesh_mismatch.
Result<TensorSharding> shardingOnMesh(const HloSharding& sharding, const Mesh& mesh, int64_t rank);

// The mesh axes (mesh order) whose groups are `groups`, or sharding.mesh_mismatch.
Result<std::vector<std::string>> groupAxesOnMesh(const ReplicaGroups& groups, const Mesh& mesh);

// The writer, the inverse of shardingOnMesh on its mesh (the hlo-sharding and hlo exports).
// XLA HloSharding text of one sharding on `mesh`: "{replicated}" when no axis of size > 1 splits
// a dim, else "{devices=[t0,…,tn-1(,r)]d0,d1,… (last_tile_dim_replicate)}" with one tile dim per
// tensor dim (product of the sizes of its axes), a trailing replication dim (product of the unused
// axes of size > 1) and the device ids in tile order: row-major over the axes of dim 0 (major to
// minor), then dim 1, …, then the unused axes in mesh order. Example: mesh {x=2, y=4}, f32[8,16]
// with [{y},{x}] → "{devices=[4,2]0,4,1,5,2,6,3,7}". Errors (export.bad_plan): an axis the mesh
// lacks, a pending partial sum (HloSharding cannot express one).
Result<std::string> hloShardingText(const TensorSharding& sharding, const Mesh& mesh);

}  // namespace cfp
