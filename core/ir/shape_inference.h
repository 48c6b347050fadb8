#pragma once
// Shape inference and validation for every op kind.
//
// inferType() checks an op's operand count, operand types and attributes and returns its result
// type. For kinds whose result cannot be derived from operands alone (hasDeclaredType(): parameter,
// constant, iota, broadcast, reshape, convert, custom-call) the caller passes the declared type,
// which is validated (e.g. a reshape must keep the element count; a broadcast must map every
// operand dim onto an equal result dim). Errors carry stable codes "shape.*" and say which operand
// or attribute is wrong; the caller adds the op name as context.

#include <span>

#include "ir/op.h"

namespace cfp {

// `declared` is required when hasDeclaredType(kind) and ignored otherwise.
Result<TensorType> inferType(OpKind kind, std::span<const TensorType* const> operands,
                             const OpAttrs& attrs, const TensorType* declared);

// Number of operands the kind takes; -1 for variadic (concatenate ≥ 1, custom-call ≥ 0).
int expectedOperandCount(OpKind kind);

}  // namespace cfp
