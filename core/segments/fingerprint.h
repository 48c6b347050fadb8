#pragma once
// Canonical structural fingerprints of blocks, and the block signatures segment detection uses.
//
// Two blocks have the same fingerprint iff their structure is the same up to renaming. The
// structure is written as a canonical text (canonicalBlockText) and the fingerprint is the 64-bit
// FNV-1a hash of its bytes, so it is the same on every platform, compiler and run. The text lists
// the members in member order (the order of BlockView::members, i.e. by op id); member i is `m<i>`:
//
//   block 2 members
//   m0 dot f32[4,16] forward lb{} rb{} lc{1} rc{0} (x0:parameter:f32[4,8], x1:parameter:f32[8,16])
//   m1 add f32[4,16] forward (m0, x2:broadcast:f32[4,16])
//
// Each member line has: kind; result type (dtype and dims); phase; parameter role (parameters
// only); the attributes its kind uses (dimensions; dot dimension numbers; slice bounds; gather /
// scatter dimension numbers; comparison; reduce kind; constant literal values as exact IEEE-754 bit
// patterns; custom-call target); its operands in slot order, each either a member (`m<i>`) or an
// external producer written as `x<k>:<kind>:<type>`, where k numbers the distinct external
// producers by first appearance in this text (so `mul(x, x)` and `mul(x, y)` differ, while the
// producer's id does not matter); and its provenance `d=m<i>/<operand>` when derivedFrom is a
// member, `d=x/<operand>` when it is an op outside the block.
// Never included: op names, ids, scopes, and ids of ops outside the block. Hence layer 3 and
// layer 4 of a model built by one function give equal fingerprints.
//
// BlockSignature adds what a window of consecutive blocks needs beyond the fingerprints: the
// dataflow edges that enter the block from other blocks, by relative block offset and member-local
// indices (segments/segments.h compares windows by fingerprints and these edges), and the model
// layer the block belongs to by its ops' scopes (layerScope below). The layer is not part of the
// structure: the cover only uses it to prefer segment boundaries that fall between layers.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "segments/block_view.h"
#include "util/result.h"

namespace cfp {

// 64-bit FNV-1a over explicit bytes (integers are fed little-endian, whatever the host order).
class Fnv1a64 {
public:
    static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
    static constexpr uint64_t kPrime = 0x100000001b3ULL;

    void bytes(std::string_view data) {
        for (unsigned char c : data) {
            m_state ^= c;
            m_state *= kPrime;
        }
    }
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            m_state ^= (v >> (8 * i)) & 0xffU;
            m_state *= kPrime;
        }
    }
    void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
    uint64_t value() const { return m_state; }

private:
    uint64_t m_state = kOffsetBasis;
};

uint64_t fnv1a64(std::string_view data);

// "0x" followed by 16 lower-case hex digits.
std::string fingerprintHex(uint64_t fingerprint);

// The canonical text described above. Errors (code "segments.bad_block"): members not strictly
// increasing or not ops of `graph`.
Result<std::string> canonicalBlockText(const Graph& graph, const BlockView& block);

// fnv1a64(canonicalBlockText(graph, block)).
Result<uint64_t> blockFingerprint(const Graph& graph, const BlockView& block);

// An edge from a member of another block into a member of this block (one per operand slot).
// offset = producer block index − this block's index (never 0; negative when the producer block
// comes later in the sequence, as backward members of an earlier block consume gradients from a
// later one).
struct CrossBlockEdge {
    int32_t offset = 0;
    int32_t producerMember = 0;  // member-local index in the producer block
    int32_t consumerMember = 0;  // member-local index in this block
    int32_t operandSlot = 0;     // operand position in the consumer
    auto operator<=>(const CrossBlockEdge&) const = default;
};

struct BlockSignature {
    uint64_t fingerprint = 0;
    int64_t strategyCount = 1;
    std::vector<CrossBlockEdge> incoming;  // sorted (offset, producer, consumer, slot)
    // The model layer the block belongs to: layerScope() of its members' scopes, the one most
    // members have (ties: the smaller string); empty when no member has one ("lm_head", imported
    // graphs without names). Two consecutive blocks with the same non-empty layer are one layer.
    std::string layer;
};

// The layer part of an op's scope: the path up to and including its first all-digit component
// ("layers.17.mlp.fc1" -> "layers.17", "model.layers.3.self_attn" -> "model.layers.3",
// "transformer.h.0.attn" -> "transformer.h.0"); empty when no component is a number ("lm_head",
// "embed.tokens", "").
std::string_view layerScope(std::string_view scope);

// Fingerprints, incoming cross-block edges and layers of a block sequence. Errors ("segments.bad_block",
// located at "blocks/<i>"): unsorted or out-of-range members, an op in two blocks, a strategy count
// below 1.
Result<std::vector<BlockSignature>> blockSignatures(const Graph& graph, std::span<const BlockView> blocks);

}  // namespace cfp
