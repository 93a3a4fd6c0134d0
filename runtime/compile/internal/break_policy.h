// break_policy.h: internal: when the compiler ends a graph early and what it
// says: the kinds of graph break with PyTorch-style texts, the ops that
// always break (disallow_in_graph, Tensor.item()), and what a break does
// (an error under fullgraph, else a recorded and logged break). See Note
// [The warm path] in capture.h.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/ops/op_table.h"

namespace opspec::internal {

struct CompiledState;

// BreakKind: why a graph ended early; each kind has PyTorch-style text.
enum class BreakKind : uint8_t {
  kUser,
  kDisallowedOp,
  kDataDependent,
  kDisabledFunction,
  kNoMetaKernel,
  kBackward,
  kDynamicOutputShape,  // nonzero, masked_select, a bool-mask index: Dynamo without capture_dynamic_output_shape_ops
};

// BreakText: PyTorch-style text of a break: what happened, why it breaks, what to do.
struct BreakText {
  std::string title, explanation, hint;
};

// break_text: the text of a break of kind about subject (an op, a function).
BreakText break_text(BreakKind kind, std::string_view subject);

// refuse_under_fullgraph: under fullgraph, throws GraphBreakError with the
// break's text and user_site; otherwise nothing (the caller flushes, then
// calls note_break).
void refuse_under_fullgraph(const CompiledState& state, BreakKind kind, std::string_view subject,
                            const std::string& user_site);
// note_break: records the break in state's statistics and logs it
// (OPSPEC_LOGS=graph_breaks) when tracing found it: when the graph it ends
// (the position-th of the call) was compiled on this call (traced), or the
// break is new at that position. See Note [Breaks are counted when traced].
void note_break(CompiledState& state, BreakKind kind, std::string_view subject, const std::string& user_site,
                size_t position, bool traced);

// disallowed_op_count: how many ops are marked with disallow_in_graph, read
// without a lock (most programs mark none; every captured op asks).
extern constinit std::atomic<size_t> disallowed_op_count;
// op_disallowed_locked: op_disallowed's lookup (controls.cc).
bool op_disallowed_locked(const OperatorHandle& op);
// op_disallowed: op was marked with disallow_in_graph.
inline bool op_disallowed(const OperatorHandle& op) {
  return disallowed_op_count.load(std::memory_order_acquire) != 0 && op_disallowed_locked(op);
}

// op_break: why calling op must end the graph and run it eagerly (an op
// marked disallow_in_graph, Tensor.item()'s _local_scalar_dense, or an op
// tagged dynamic_output_shape such as nonzero), or nullopt.
// Asked for every captured op, so the usual answer costs two compares.
inline std::optional<BreakKind> op_break(const OperatorHandle& op) {
  if (op_disallowed(op)) return BreakKind::kDisallowedOp;
  if (&op == &builtin_op(OpId::_local_scalar_dense)) return BreakKind::kDataDependent;
  if (op.has_tag(OpTag::kDynamicOutputShape)) return BreakKind::kDynamicOutputShape;
  return std::nullopt;
}

// op_break_subject: the subject of op's break ("aten::foo", or "... (Tensor.item())").
std::string op_break_subject(BreakKind kind, const OperatorHandle& op);

}  // namespace opspec::internal
