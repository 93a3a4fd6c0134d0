// node.cc: Node, SavedTensor. See Note [Autograd graph] in node.h.
#include "runtime/autograd/node.h"

#include "runtime/core/grad_mode.h"

#include "runtime/autograd/autograd_meta.h"
#include "runtime/core/error.h"

namespace opspec::autograd {
namespace {

thread_local uint64_t tls_sequence_nr = 0;

// torch_type_name: how PyTorch names a tensor's type in autograd errors ("torch.FloatTensor").
std::string torch_type_name(const Tensor& t) {
  std::string_view name = "Tensor";
  switch (t.dtype()) {
    case DType::kFloat32: name = "FloatTensor"; break;
    case DType::kFloat64: name = "DoubleTensor"; break;
    case DType::kFloat16: name = "HalfTensor"; break;
    case DType::kBFloat16: name = "BFloat16Tensor"; break;
    case DType::kInt64: name = "LongTensor"; break;
    case DType::kInt32: name = "IntTensor"; break;
    case DType::kBool: name = "BoolTensor"; break;
    default: break;
  }
  return str_cat(t.device().is_cuda() ? "torch.cuda." : "torch.", name);
}

}  // namespace

uint64_t next_sequence_nr() { return tls_sequence_nr++; }

Node::Node() : sequence_nr_(next_sequence_nr()) {}

uint32_t Node::add_input_metadata(const Tensor& t) {
  if (t.defined()) {
    input_metadata_.emplace_back(t);
  } else {  // an undefined output keeps its slot, so later outputs keep their indices
    input_metadata_.emplace_back();
  }
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

namespace {

// traced_alias: a new TensorImpl over t's data with no history that, under a
// tracer, stands for t (See Note [Trace slots] in runtime/trace/proxy_tensor.cc):
// backward ops reading a saved output are recorded as reading t's node, as
// make_fx of a joint graph needs.
Tensor traced_alias(const Tensor& t) {
  Tensor a = ::opspec::internal::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  a.impl()->trace_owner().store(t.impl()->trace_owner().load(std::memory_order_relaxed), std::memory_order_relaxed);
  a.impl()->trace_index() = t.impl()->trace_index();
  return a;
}

}  // namespace

SavedTensor::SavedTensor(const Tensor& t) : was_defined_(t.defined()) {
  if (!t.defined()) return;
  saved_version_ = t.impl()->storage() ? t.impl()->storage()->version() : 0;
  data_ = t;
  if (const AutogradMeta* m = meta_of(t); m != nullptr && m->grad_fn) {
    grad_fn_ = m->grad_fn;
    output_nr_ = m->output_nr;
  }
}

SavedTensor::SavedTensor(const Tensor& output, const std::shared_ptr<Node>& fn, uint32_t output_nr)
    : was_defined_(output.defined()), is_output_(true), output_nr_(output_nr) {
  if (!output.defined()) return;
  saved_version_ = output.impl()->storage() ? output.impl()->storage()->version() : 0;
  // An alias with no history: the node owns what it saved, and the output owns the node.
  data_ = traced_alias(output);
  // Only an output with history gets it back in unpack (an integer output has none).
  if (requires_grad(output)) grad_fn_ = fn;
}

Tensor SavedTensor::unpack(const Node& saved_for) const {
  if (!was_defined_) return {};
  OPSPEC_CHECK(!released_,
               "Trying to backward through the graph a second time (or directly access saved tensors after they "
               "have already been freed). Saved intermediate values of the graph are freed when you call "
               ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
               "graph a second time or if you need to access saved tensors after calling backward.");
  const uint64_t now = data_.impl()->storage() ? data_.impl()->storage()->version() : 0;
  if (now != saved_version_) {
    std::string which;
    if (is_output_) {
      which = str_cat(", which is output ", output_nr_, " of ", saved_for.name(), ",");
    } else if (std::shared_ptr<Node> fn = grad_fn_.lock()) {
      which = str_cat(", which is output ", output_nr_, " of ", fn->name(), ",");
    }
    throw Error(str_cat("one of the variables needed for gradient computation has been modified by an inplace "
                        "operation: [",
                        torch_type_name(data_), " ", format_sizes(data_.sizes()), "]", which, " is at version ", now,
                        "; expected version ", saved_version_,
                        " instead. Hint: enable anomaly detection to find the operation that failed to compute its "
                        "gradient, with torch.autograd.set_detect_anomaly(True)."));
  }
  // A saved output read while the graph is being recorded (create_graph) is
  // that output again, with saved_for as its grad_fn, so a second derivative
  // flows through it (PyTorch's SavedVariable::unpack).
  std::shared_ptr<Node> fn;
  if (is_output_ && is_grad_enabled() && (fn = grad_fn_.lock()) != nullptr) {
    OPSPEC_CHECK(fn.get() == &saved_for, "autograd: a saved output was unpacked for a node other than its own");
    Tensor t = traced_alias(data_);
    AutogradMeta& m = materialize_meta(t);
    m.grad_fn = std::move(fn);
    m.output_nr = output_nr_;
    t.impl()->set_autograd_key(true);
    return t;
  }
  return data_;
}

void SavedTensor::reset() {
  data_ = Tensor();
  released_ = true;
}

}  // namespace opspec::autograd
