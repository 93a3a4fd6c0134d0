// cross_entropy_rows.h: the seam through which the fused backend has a
// device compute cross_entropy over rows it reads where they lie, without the
// copy and the log-probabilities eager writes. See Note [Cross-entropy over rows].
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// Note [Cross-entropy over rows]
// A language model's loss is `cross_entropy(logits[:, :-1].reshape(-1, V),
// targets)`: eager copies the sliced logits (the reshape of a slice is no
// view), writes every log-probability of the copy (log_softmax), and reads back
// one per row (nll_loss). Inductor reads the slice where it lies and keeps each
// row's max and log-sum-exp in registers, storing neither copy. The fused
// backend does that for a cross_entropy_loss (class-index targets, no weight,
// no label smoothing, mean or sum) whose input is the only use of a reshape
// to [N, C] of rows whose last dim is contiguous, or any [N, C] tensor: the
// device computes each row's max and log-sum-exp exactly as its log_softmax
// does, the picked log-probability as log_softmax writes it, and sums them as
// its nll_loss does (the same cascade, in the same order), so the loss has
// eager's bits; an out-of-range target is refused in nll_loss's words.
// Whatever it cannot compute that way it declines, and eager's ops run.

// CrossEntropyRowsFn: cross_entropy_loss(rows.reshape(-1, C), target,
// reduction=reduction, ignore_index=ignore_index) for rows of dims 2 or 3
// (the classes last), written to loss (a fresh 0-dim tensor of rows' dtype);
// start() runs once it has accepted the operands. Returns false, with
// nothing called or written, when it cannot compute it as eager's kernels
// would; throws eager's error for a target out of range.
using CrossEntropyRowsFn = bool (*)(const Tensor& rows, const Tensor& target, int64_t reduction,
                                    int64_t ignore_index, const Tensor& loss, absl::FunctionRef<void()> start);

// register_cross_entropy_rows: installs device type's kernel (at dispatcher start).
void register_cross_entropy_rows(DeviceType type, CrossEntropyRowsFn fn);

// cross_entropy_rows: device type's kernel, or null when it has none.
CrossEntropyRowsFn cross_entropy_rows(DeviceType type);

}  // namespace opspec::internal
