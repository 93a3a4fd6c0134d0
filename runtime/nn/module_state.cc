// module_state.cc: nn::Module's state: state_dict, load_state_dict and to().
// See Note [Module state].
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/core/grad_mode.h"
#include "runtime/nn/module.h"
#include "runtime/ops/ops.h"

namespace opspec::nn {

// Note [Module state]
// state_dict, load_state_dict and to() follow torch.nn.Module's: the state
// is each module's parameters then buffers then its children's, walked
// through every registered name (a shared child appears under each, as in
// PyTorch, where named_parameters lists it once); loading copies in place
// under no_grad (aten::copy_), so the layers' tensors keep their identity;
// to() converts under no_grad (aten::_to_copy) and puts the result where
// the old tensor was, keeping requires_grad. PyTorch swaps param.data so
// even handles taken earlier see the move; opspec's Tensor has no .data, so
// an optimizer made before to() keeps the old tensors (PyTorch's docs also
// ask for the move before the optimizer is made).

namespace {

// torch_size: "torch.Size([2, 3])", as PyTorch prints a shape in its messages.
std::string torch_size(IntArrayRef sizes) {
  return str_cat("torch.Size([", absl::StrJoin(sizes, ", "), "])");
}

// quoted_keys: "\"a\", \"b\"".
std::string quoted_keys(const std::vector<std::string>& keys) {
  std::vector<std::string> q;
  for (const std::string& k : keys) q.push_back(str_cat("\"", k, "\""));
  return absl::StrJoin(q, ", ");
}

}  // namespace

// collect_state: m's state under prefix ("" at the root) into out, as
// state_dict orders it; the tensors' slots themselves, for load and to().
void Module::collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) {
  for (auto& [name, t] : parameters_) out.emplace_back(str_cat(prefix, name), &t);
  for (auto& [name, t] : buffers_) out.emplace_back(str_cat(prefix, name), &t);
  for (auto& [name, child] : children_) child->collect_state(str_cat(prefix, name, "."), out);
}

StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor*>> slots;
  const_cast<Module*>(this)->collect_state("", slots);  // reads only
  StateDict out;
  for (const auto& [name, t] : slots) out.emplace_back(name, t->detach());
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect_state("", slots);
  std::unordered_map<std::string, const Tensor*> given;
  for (const auto& [name, t] : state) given.emplace(name, &t);
  LoadStateDictResult result;
  std::vector<std::string> errors;
  std::unordered_set<std::string> known;
  std::vector<std::pair<Tensor*, const Tensor*>> copies;
  for (const auto& [name, slot] : slots) {
    known.insert(name);
    auto it = given.find(name);
    if (it == given.end()) {
      result.missing_keys.push_back(name);
      continue;
    }
    const Tensor& src = *it->second;
    OPSPEC_CHECK(src.defined(), "load_state_dict: the tensor for '", name, "' is undefined");
    if (src.sizes() != slot->sizes()) {
      errors.push_back(str_cat("size mismatch for ", name, ": copying a param with shape ", torch_size(src.sizes()),
                               " from checkpoint, the shape in current model is ", torch_size(slot->sizes()), "."));
      continue;
    }
    copies.emplace_back(slot, &src);
  }
  for (const auto& [name, t] : state) {
    if (!known.contains(name)) result.unexpected_keys.push_back(name);
  }
  if (strict) {
    std::vector<std::string> strict_errors;  // PyTorch's order: missing, unexpected, then the size mismatches
    if (!result.missing_keys.empty()) {
      strict_errors.push_back(str_cat("Missing key(s) in state_dict: ", quoted_keys(result.missing_keys), ". "));
    }
    if (!result.unexpected_keys.empty()) {
      strict_errors.push_back(str_cat("Unexpected key(s) in state_dict: ", quoted_keys(result.unexpected_keys), ". "));
    }
    errors.insert(errors.begin(), strict_errors.begin(), strict_errors.end());
  }
  OPSPEC_CHECK(errors.empty(), "Error(s) in loading state_dict for ", type_name_, ":\n\t", absl::StrJoin(errors, "\n\t"));
  autograd::NoGradGuard no_grad;  // nothing is copied unless every key checked out
  for (const auto& [slot, src] : copies) ops::copy_(*slot, *src);
  return result;
}

void Module::to(Device device, std::optional<DType> dtype) { convert_state(device, dtype); }

void Module::to(DType dtype) { convert_state(std::nullopt, dtype); }

void Module::convert_state(std::optional<Device> device, std::optional<DType> dtype) {
  OPSPEC_CHECK(!dtype || is_floating(*dtype), "nn.Module.to only accepts floating point or complex dtypes, but got "
                                              "desired dtype=", dtype_torch_name(*dtype));
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect_state("", slots);
  autograd::NoGradGuard no_grad;
  auto convert = [&](const Tensor& t) {
    const std::optional<DType> dt = is_floating(t.dtype()) ? dtype : std::nullopt;
    if (device) return ops::to(t, *device, dt);
    return dt ? ops::to(t, *dt) : t;
  };
  // A tensor held in several slots (tied weights, a shared child) is converted once.
  std::vector<std::pair<Tensor, Tensor>> done;
  for (const auto& entry : slots) {
    Tensor* slot = entry.second;  // not a structured binding: clang 14 cannot capture one in the lambda below
    auto it = std::find_if(done.begin(), done.end(), [&](const auto& d) { return d.first.is_same(*slot); });
    if (it != done.end()) {
      *slot = it->second;
      continue;
    }
    const Tensor old = *slot;
    const Tensor moved = convert(old);
    if (!moved.is_same(old)) {
      if (old.requires_grad()) moved.requires_grad_();  // a leaf: _to_copy under no_grad recorded nothing
      if (const Tensor g = old.grad(); g.defined()) moved.set_grad(convert(g));
    }
    done.emplace_back(old, moved);
    *slot = moved;
  }
}

}  // namespace opspec::nn
