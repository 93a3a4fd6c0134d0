#include "runtime/trace/decomposition_table.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

bool is_reduced_float(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

// The core decompositions, after torch/_decomp/decompositions.py; each
// computes in the same dtypes as the kernel it replaces.
Tensor silu_decomp(const Tensor& self) { return ops::mul(self, ops::sigmoid(self)); }

Tensor gelu_decomp(const Tensor& self, std::string_view approximate) {
  OPSPEC_CHECK(approximate == "none" || approximate == "tanh",
               "aten::gelu: approximate argument must be either 'none' or 'tanh', but got '", approximate, "'");
  if (approximate == "tanh") {
    constexpr double kBeta = 0.7978845608028654;  // sqrt(2 / pi)
    constexpr double kKappa = 0.044715;
    const Tensor cube = ops::mul(ops::mul(self, self), self);
    const Tensor inner = ops::mul(ops::add(self, ops::mul(cube, kKappa)), kBeta);
    return ops::mul(ops::mul(self, 0.5), ops::add(ops::tanh(inner), 1));
  }
  constexpr double kAlpha = 0.7071067811865476;  // 1 / sqrt(2)
  return ops::mul(ops::mul(self, 0.5), ops::add(ops::erf(ops::mul(self, kAlpha)), 1));
}

Tensor softmax_decomp(const Tensor& self, int64_t dim, bool half_to_float) {
  const Tensor x = half_to_float ? ops::to(self, DType::kFloat32) : self;
  const Tensor unnormalized = ops::exp(ops::sub(x, ops::amax(x, {dim}, true)));
  return ops::div(unnormalized, ops::sum(unnormalized, {dim}, true));
}

Tensor log_softmax_decomp(const Tensor& self, int64_t dim, bool half_to_float) {
  const Tensor x = half_to_float ? ops::to(self, DType::kFloat32) : self;
  const Tensor shifted = ops::sub(x, ops::amax(x, {dim}, true));
  return ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), {dim}, true)));
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_decomp(const Tensor& input, IntArrayRef normalized_shape,
                                                            const std::optional<Tensor>& weight,
                                                            const std::optional<Tensor>& bias, double eps) {
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = std::max<int64_t>(axis, 0); d < input.dim(); ++d) dims.push_back(d);
  const bool reduced = is_reduced_float(input.dtype());
  const Tensor x = reduced ? ops::to(input, DType::kFloat32) : input;
  const Tensor mean = ops::mean(x, dims, true);
  const Tensor centered = ops::sub(x, mean);
  const Tensor var = ops::mean(ops::mul(centered, centered), dims, true);
  const Tensor rstd = ops::rsqrt(ops::add(var, eps));
  Tensor out = ops::mul(centered, rstd);
  if (weight) out = ops::mul(out, *weight);
  if (bias) out = ops::add(out, *bias);
  // Statistics keep f32 for a reduced-precision input with f32 affine
  // parameters (PyTorch's mixed-type layer norm), else the input's dtype.
  const bool mixed = reduced && ((weight && weight->dtype() == DType::kFloat32) ||
                                 (bias && bias->dtype() == DType::kFloat32));
  const DType stat_dtype = mixed ? DType::kFloat32 : input.dtype();
  return {ops::to(out, input.dtype()), ops::to(mean, stat_dtype), ops::to(rstd, stat_dtype)};
}

Tensor addmm_decomp(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                    const Scalar& alpha) {
  // Multiplications by 1 are left out, so the default case traces as mm + add.
  Tensor out = ops::mm(mat1, mat2);
  if (alpha.to_double() != 1.0) out = ops::mul(out, alpha);
  if (beta.to_double() == 0.0) return out;
  const Tensor scaled = beta.to_double() == 1.0 ? self : ops::mul(self, beta);
  return ops::add(scaled, out);
}

Tensor rsub_decomp(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return ops::sub(internal::make_wrapped_number(other), self, alpha);
}

DecompositionTable make_default_table() {
  DecompositionTable table;
  // Every builtin composite op's own decomposition (its CompositeImplicit kernel).
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    const OperatorHandle& op = builtin_op(row.id);
    if (!op.has_kernel(DispatchKey::kCompositeImplicit)) continue;
    table.add(op.name(), [&op](const OperatorHandle&, DispatchKeySet ks, Stack& stack) {
      op.kernel(DispatchKey::kCompositeImplicit).boxed(op, ks, stack);
    });
  }
  table.add("aten::silu", &silu_decomp);
  table.add("aten::gelu", &gelu_decomp);
  table.add("aten::_softmax", &softmax_decomp);
  table.add("aten::_log_softmax", &log_softmax_decomp);
  table.add("aten::native_layer_norm", &native_layer_norm_decomp);
  table.add("aten::addmm", &addmm_decomp);
  table.add("aten::rsub.Scalar", &rsub_decomp);
  return table;
}

}  // namespace

DecompositionTable& DecompositionTable::remove(std::string_view op_name) {
  entries_.erase(&Dispatcher::singleton().get(op_name));
  return *this;
}

DecompositionTable& DecompositionTable::merge(const DecompositionTable& other) {
  for (const auto& [op, kernel] : other.entries_) entries_[op] = kernel;
  return *this;
}

bool DecompositionTable::apply(const OperatorHandle& op, Stack& stack) const {
  auto it = entries_.find(&op);
  if (it == entries_.end()) return false;
  // The decomposition's own calls dispatch afresh, through every mode.
  it->second.boxed(op, compute_dispatch_key_set({}), stack);
  return true;
}

std::vector<std::string> DecompositionTable::op_names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& [op, kernel] : entries_) names.push_back(op->name());
  std::sort(names.begin(), names.end());
  return names;
}

const DecompositionTable& default_decompositions() {
  static const DecompositionTable* table = new DecompositionTable(make_default_table());
  return *table;
}

}  // namespace opspec
