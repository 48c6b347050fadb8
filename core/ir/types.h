#pragma once
// Element types and tensor types of the graph IR.
//
// A TensorType is an element type plus int64 dimensions, printed as in XLA HLO: `f32[8,1024]`,
// `bf16[]` for a scalar, `pred[4,4]`. Sizes are computed with overflow checks (util/checked_math.h):
// a type whose element count or byte size exceeds 2^62 is invalid.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cfp {

// S8…U16 and the fp8 types carry what real dumps hold (a cuDNN kernel's u8 workspace, int8 masks,
// fp8 GEMM operands); u32 and u64 are read as S32 and S64 (same width).
enum class DType : uint8_t { Pred, S32, S64, F16, BF16, F32, F64, S8, U8, S16, U16, F8E4M3FN, F8E5M2 };

inline constexpr DType kAllDTypes[] = {DType::Pred, DType::S32, DType::S64, DType::F16, DType::BF16,
                                       DType::F32,  DType::F64, DType::S8,  DType::U8,  DType::S16,
                                       DType::U16,  DType::F8E4M3FN, DType::F8E5M2};

std::string_view dtypeName(DType t);                     // "pred", "s32", …, "f64" (HLO spelling)
std::optional<DType> parseDType(std::string_view name);  // accepts the HLO spelling only
int64_t dtypeBytes(DType t);                             // pred counts as 1 byte, as in XLA
bool isFloating(DType t);
bool isInteger(DType t);
// The smallest and largest value of an integer type (as doubles; S64's are rounded).
double integerMin(DType t);
double integerMax(DType t);

struct TensorType {
    DType dtype = DType::F32;
    std::vector<int64_t> dims;

    int64_t rank() const { return static_cast<int64_t>(dims.size()); }
    // Element count; errors on negative dims or overflow past kMaxTensorSize.
    Result<int64_t> elementCount() const;
    Result<int64_t> byteSize() const;
    // Unchecked variants for types already validated (Graph::validate guarantees this for every op).
    int64_t elements() const;
    int64_t bytes() const { return elements() * dtypeBytes(dtype); }

    std::string toString() const;  // "f32[8,1024]"
    bool operator==(const TensorType&) const = default;
};

// Parses "f32[8,1024]" (layouts like "{1,0}" are not accepted here).
Result<TensorType> parseTensorType(std::string_view text);

// Checks dims are non-negative and sizes do not overflow.
Status validateTensorType(const TensorType& t);

}  // namespace cfp
