// op_log.cc: OpRecorder and op-name patterns.
#include "harness/expect/op_log.h"

#include <mutex>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "runtime/dispatch/dispatcher.h"

#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"

namespace opspec {

std::string RecordedOp::str() const {
  std::string out = name;
  out += '(';
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) out += ", ";
    str_append(&out, dtype_short_name(dtypes[i]), format_sizes(shapes[i]));
  }
  out += ')';
  return out;
}

namespace {
// without_default: "aten::relu" for "aten::relu.default": PyTorch spells the
// unnamed overload `.default` (torch.ops.aten.relu.default); ops are recorded without it.
std::string_view without_default(std::string_view name) {
  return name.ends_with(".default") ? name.substr(0, name.size() - 8) : name;
}
}  // namespace

bool operator==(const RecordedOp& op, std::string_view name) { return op.name == without_default(name); }

void PrintTo(const RecordedOp& op, std::ostream* os) { *os << op.str(); }

std::ostream& operator<<(std::ostream& os, const RecordedOp& op) { return os << op.str(); }

// OpRecorder::Mode: the mode an OpRecorder pushes; the key depends on the level.
class OpRecorder::Mode : public DispatchMode {
 public:
  Mode(OpLevel level, bool include_fake) : level_(level), include_fake_(include_fake) {}

  bool dispatch(OpCall& call) override {
    bool fake = false;
    RecordedOp op;
    op.name = call.name();
    auto add = [&](const Tensor& t) {
      if (!t.defined()) return;
      fake |= is_fake(t);
      op.shapes.emplace_back(t.sizes().begin(), t.sizes().end());
      op.dtypes.push_back(t.dtype());
    };
    for (const Value& v : call.stack()) {
      // Wrapped numbers (`x + 1.0`) are scalars to a mode, as in PyTorch.
      if (v.is_tensor() && !(v.to_tensor().defined() && v.to_tensor().is_wrapped_number())) {
        add(v.to_tensor());
      } else if (v.is_tensor_list()) {
        for (const Tensor& t : v.to_tensor_list()) add(t);
      }
    }
    fake |= has_infra_mode(ModeKind::kFake);
    if (fake && !include_fake_) return false;
    ops_.push_back(std::move(op));
    call.proceed();
    return true;
  }
  DispatchKey key() const override {
    return level_ == OpLevel::kFunction ? DispatchKey::kFunctionMode : DispatchKey::kPython;
  }
  std::string_view name() const override {
    return level_ == OpLevel::kFunction ? "OpRecorder(function level)" : "OpRecorder";
  }

  std::vector<RecordedOp> ops_;

 private:
  OpLevel level_;
  bool include_fake_;
};

OpRecorder::OpRecorder(OpLevel level, bool include_fake)
    : level_(level), mode_(std::make_shared<Mode>(level, include_fake)), guard_(std::make_unique<ModeGuard>(mode_)) {}

OpRecorder::~OpRecorder() = default;

const std::vector<RecordedOp>& OpRecorder::ops() const { return mode_->ops_; }

std::vector<std::string> OpRecorder::names() const { return op_names(mode_->ops_); }

std::vector<std::string> op_names(const std::vector<RecordedOp>& ops) {
  std::vector<std::string> out;
  out.reserve(ops.size());
  for (const RecordedOp& op : ops) out.push_back(op.name);
  return out;
}

std::vector<RecordedOp> record_ops(const std::function<void()>& fn, OpLevel level, bool include_fake) {
  std::vector<RecordedOp> ops;
  {
    OpRecorder recorder(level, include_fake);
    fn();
    ops = recorder.ops();
  }
  return ops;
}

bool op_name_matches(std::string_view pattern, std::string_view name) {
  // Normalise the pattern to "ns::op[.overload]". See Note [Op name patterns].
  std::string full;
  if (pattern.find("::") == std::string_view::npos) {
    full = str_cat("aten::", pattern);
    pattern = full;
  }
  if (pattern.ends_with(".default")) return name == without_default(pattern);  // the unnamed overload only
  if (name == pattern) return true;
  const size_t ns_end = pattern.find("::");
  const bool has_overload = pattern.find('.', ns_end + 2) != std::string_view::npos;
  if (has_overload) return false;
  return name.size() > pattern.size() + 1 && name.substr(0, pattern.size()) == pattern &&
         name[pattern.size()] == '.';
}

namespace {
// KnownOps: the registered ops' names and overload packets ("aten::add"),
// rebuilt when ops were registered since (a plugin's); ops are never removed.
struct KnownOps {
  std::mutex mu;
  size_t count = 0;
  absl::flat_hash_set<std::string> names, packets;
};
}  // namespace

bool names_an_op(std::string_view pattern) {
  std::string full = pattern.find("::") == std::string_view::npos ? str_cat("aten::", pattern) : std::string(pattern);
  // "aten::add.default" names the unnamed overload alone, as op_name_matches
  // reads it: aten::add has none (only .Tensor and .Scalar), so it names no op.
  const bool unnamed_overload = full.ends_with(".default");
  if (unnamed_overload) full.resize(full.size() - 8);
  const bool has_overload = unnamed_overload || full.find('.', full.find("::") + 2) != std::string::npos;
  static KnownOps known;
  std::lock_guard<std::mutex> lock(known.mu);
  auto found = [&] { return known.names.contains(full) || (!has_overload && known.packets.contains(full)); };
  if (found()) return true;
  // Not known yet: take in the ops registered since the last look (names only grow).
  const std::vector<const OperatorHandle*> ops = Dispatcher::singleton().ops();
  for (size_t i = known.count; i < ops.size(); ++i) {
    const std::string& name = ops[i]->name();
    known.names.insert(name);
    known.packets.insert(name.substr(0, name.find('.', name.find("::") + 2)));
  }
  known.count = ops.size();
  return found();
}

std::vector<std::string> registered_op_names() {
  std::vector<std::string> out;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) out.push_back(op->name());
  return out;
}

}  // namespace opspec
