// op_log.h: OpRecorder, a light mode that records the name and tensor
// metadata of every op called while it is alive (cheaper than DebugMode, which
// keeps boxed arguments), and op_name_matches, the name patterns the op
// checks and matchers accept. See Note [Op name patterns].
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"

namespace opspec {

class ModeGuard;  // runtime/dispatch/mode.h

// OpLevel: which layer of the dispatcher an OpRecorder listens at.
enum class OpLevel : uint8_t {
  kAten,      // the Python key (PyTorch's TorchDispatchMode): aten ops, factories included
  kFunction,  // the FunctionMode key (TorchFunctionMode): composites as called (linear, matmul)
};

// RecordedOp: one recorded call: the op's full name and, in argument order,
// the sizes and dtypes of its tensor arguments (tensor lists flattened).
struct RecordedOp {
  std::string name;             // "aten::add.Tensor"
  std::vector<SizeVec> shapes;  // one per tensor argument
  std::vector<DType> dtypes;    // parallel to shapes

  // str: "aten::add.Tensor(f32[2, 3], f32[])".
  std::string str() const;
};

// operator==(RecordedOp, name): exact name equality ("x.default" is "x"), so
// gMock's ElementsAre("aten::relu") applies to a std::vector<RecordedOp>.
bool operator==(const RecordedOp& op, std::string_view name);
inline bool operator==(std::string_view name, const RecordedOp& op) { return op == name; }

// PrintTo: gtest's printer for RecordedOp (its str()).
void PrintTo(const RecordedOp& op, std::ostream* os);
std::ostream& operator<<(std::ostream& os, const RecordedOp& op);

// OpRecorder: records every op dispatched at its level on this thread while
// it is alive (RAII; push on construction, pop on destruction). Like
// DebugMode's defaults, it records ops on real tensors only (include_fake
// adds those on fake tensors, e.g. during compile()'s capture) and not what
// user modes are hidden from (HideUserModesGuard). An op a handler runs
// inside another op's kernel is not seen, as with DebugMode.
class OpRecorder {
 public:
  explicit OpRecorder(OpLevel level = OpLevel::kAten, bool include_fake = false);
  ~OpRecorder();
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  // ops: what was recorded so far, in call order.
  const std::vector<RecordedOp>& ops() const;
  // names: the recorded ops' names.
  std::vector<std::string> names() const;
  OpLevel level() const { return level_; }

 private:
  class Mode;
  OpLevel level_;
  std::shared_ptr<Mode> mode_;
  std::unique_ptr<ModeGuard> guard_;
};

// record_ops: runs fn under an OpRecorder and returns what it recorded.
// Exceptions from fn propagate (the recorder is popped first).
std::vector<RecordedOp> record_ops(const std::function<void()>& fn, OpLevel level = OpLevel::kAten,
                                   bool include_fake = false);

// op_names: the names of ops, in order.
std::vector<std::string> op_names(const std::vector<RecordedOp>& ops);

// Note [Op name patterns]
// An expected op name is a pattern: with an overload ("aten::add.Tensor") it
// matches only that name; without one ("aten::add") it matches the overload
// packet: "aten::add" and any "aten::add.<overload>"; a name with no
// namespace ("add", "add.Tensor") means "aten::"; other namespaces
// ("myns::op") work the same way. "aten::relu.default" names the unnamed
// overload alone, as PyTorch spells it (recorded ops are named "aten::relu").
// Matching is exact otherwise (case matters).

// op_name_matches: whether the op name `name` matches pattern; see Note [Op name patterns].
bool op_name_matches(std::string_view pattern, std::string_view name);
// names_an_op: whether pattern matches some registered op (a spec's op lists
// check their names with it, so a misspelt name is an error, not a check
// that passes because nothing can match it).
bool names_an_op(std::string_view pattern);
// registered_op_names: every registered op's name, for "did you mean".
std::vector<std::string> registered_op_names();

}  // namespace opspec
