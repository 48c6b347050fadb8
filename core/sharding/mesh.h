#pragma once
// Logical device mesh: an n-D grid of devices with named axes, each axis bound to a link class.
//
// Devices are numbered row-major: the FIRST axis is the outermost (slowest-varying) and the LAST axis
// the innermost (fastest-varying). On `{dp=2, tp=4}` device 5 has coordinates (dp=1, tp=1), and the
// `tp` group of device 5 is devices {4,5,6,7}. Because GPUs of one node carry consecutive ids, the
// innermost axes fill a node first: that is the usual placement of tensor parallelism on NVLink.
//
// Text forms accepted by parseMesh():
//   "8"                           one axis, named x
//   "2x4", "2x2x2"                unnamed axes get default names: x, y, z, w for up to four axes;
//                                 a mesh with more than four axes names every axis a0, a1, …
//   "dp=2,tp=4"                   named axes, names kept as given
//   "{dp=2 (inter), tp=4 (intra)}" the printed form (toString), link classes included
// Axis names are identifiers ([A-Za-z_][A-Za-z0-9_]*), unique within a mesh. Sizes are ≥ 1 (an axis
// of size 1 is allowed, so that 1×8 and 8×1 can be enumerated); the device count is at most
// kMaxMeshDevices.
//
// Link classes (assignLinkClasses): with G GPUs per node and the device numbering above, an axis
// with stride p (product of the sizes of the axes inside it) and size s
//   - is IntraNode when each of its groups lies inside one node (p·s divides G);
//   - is InterNode when its groups cross node boundaries evenly: every node holds the same number
//     of members of a group (p·s a multiple of G, and p divides G or G divides p). An axis that
//     spans nodes is inter-node even when some of its members share a node (the cost model
//     then gives its groups one NIC per member in a node: cost/cost_model.h, rails);
//   - otherwise it straddles nodes unevenly (e.g. {x=3, y=4} on nodes of 8) and is an error
//     (mesh.node_straddle).
// Example: 16 devices on 2 nodes of 8: "2x8" → x inter, y intra; "16" → x inter; "4x4" → x inter
// (stride 4, spans 2 nodes with 2 members each), y intra. All devices on one node (device count ≤ G)
// makes every axis intra-node.
//
// Stable error codes: mesh.syntax, mesh.bad_size, mesh.bad_name, mesh.duplicate_axis,
// mesh.too_large, mesh.device_count, mesh.bad_gpus_per_node, mesh.partial_node,
// mesh.node_straddle, mesh.unknown_axis, mesh.bad_device.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cfp {

// Largest mesh accepted (2^30 devices): far beyond any machine, small enough that byte counts times
// axis sizes cannot overflow int64 in the cost formulas.
inline constexpr int64_t kMaxMeshDevices = int64_t{1} << 30;

enum class LinkClass : uint8_t {
    IntraNode,  // NVLink / NVSwitch inside a node
    InterNode,  // InfiniBand / RoCE between nodes
};

std::string_view linkClassName(LinkClass link);  // "intra", "inter"

struct MeshAxis {
    std::string name;
    int64_t size = 1;
    std::optional<LinkClass> link;  // unset until bound to hardware (assignLinkClasses)

    bool operator==(const MeshAxis&) const = default;
};

// Immutable, validated mesh. A default-constructed Mesh has no axes and one device.
class Mesh {
public:
    Mesh() = default;

    // Validates names (identifiers, unique) and sizes (≥ 1, product ≤ kMaxMeshDevices).
    static Result<Mesh> create(std::vector<MeshAxis> axes);

    const std::vector<MeshAxis>& axes() const { return m_axes; }
    int64_t rank() const { return static_cast<int64_t>(m_axes.size()); }
    int64_t deviceCount() const { return m_deviceCount; }

    std::optional<int64_t> axisIndex(std::string_view name) const;
    // Size of the named axis, or nullopt when the mesh has no such axis.
    std::optional<int64_t> axisSize(std::string_view name) const;
    const MeshAxis* findAxis(std::string_view name) const;
    bool hasLinkClasses() const;  // every axis has a link class

    // Row-major coordinates of a device (one entry per axis) and back.
    Result<std::vector<int64_t>> coordinates(int64_t device) const;
    Result<int64_t> deviceAt(const std::vector<int64_t>& coords) const;
    // The devices that differ from `device` only along `axis`, in axis order (a communicator group).
    Result<std::vector<int64_t>> axisGroup(int64_t device, std::string_view axis) const;

    // "{dp=2, tp=4}" or, with link classes, "{dp=2 (inter), tp=4 (intra)}".
    std::string toString() const;

    bool operator==(const Mesh&) const = default;

private:
    std::vector<MeshAxis> m_axes;
    int64_t m_deviceCount = 1;
};

// Parses any of the text forms listed above.
Result<Mesh> parseMesh(std::string_view text);
// Parses and checks the mesh covers exactly `deviceCount` devices (mesh.device_count otherwise).
Result<Mesh> parseMesh(std::string_view text, int64_t deviceCount);
Status checkDeviceCount(const Mesh& mesh, int64_t deviceCount);

// Returns `mesh` with every axis bound to a link class for nodes of `gpusPerNode` GPUs (rules above).
Result<Mesh> assignLinkClasses(const Mesh& mesh, int64_t gpusPerNode);

// Default axis names for an unnamed mesh of `rank` axes (x, y, z, w; or a0, a1, … above four).
std::vector<std::string> defaultAxisNames(int64_t rank);

bool isValidAxisName(std::string_view name);

}  // namespace cfp
