// elementwise_rules.cc: the shape, dtype and device rules of the elementwise ops.
#include "runtime/ops/elementwise_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/core/memory_format.h"
#include "runtime/core/shape_utils.h"

namespace opspec::internal {
namespace {

// byte_range: [lowest, highest] byte address t touches (numel > 0).
std::pair<const char*, const char*> byte_range(const Tensor& t) {
  const char* base = static_cast<const char*>(t.raw_data());
  int64_t lo = 0, hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t span = (t.sizes()[d] - 1) * t.strides()[d];
    (span < 0 ? lo : hi) += span;
  }
  return {base + lo * t.element_size(), base + (hi + 1) * t.element_size() - 1};
}

}  // namespace

bool same_elements(const Tensor& a, const Tensor& b) {
  if (a.raw_data() != b.raw_data() || a.dtype() != b.dtype()) return false;
  if (!std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(), b.sizes().end())) return false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.sizes()[d] != 1 && a.strides()[d] != b.strides()[d]) return false;
  }
  return true;
}

namespace {

constexpr std::string_view kOverlapMessage =
    ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

}  // namespace

MemOverlap overlap_status(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return MemOverlap::kNo;
  if (a.impl() == b.impl()) return MemOverlap::kFull;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlap::kNo;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return MemOverlap::kTooHard;
  if (!a.impl()->storage() || !a.is_alias_of(b)) return MemOverlap::kNo;
  // Byte offsets in the storage (meta tensors have no data pointer but overlap alike).
  const int64_t a_begin = a.storage_offset() * a.element_size(), a_end = a_begin + a.nbytes();
  const int64_t b_begin = b.storage_offset() * b.element_size(), b_end = b_begin + b.nbytes();
  if (a_begin == b_begin && a_end == b_end) {
    return std::ranges::equal(a.strides(), b.strides()) ? MemOverlap::kFull : MemOverlap::kPartial;
  }
  return a_begin < b_end && b_begin < a_end ? MemOverlap::kPartial : MemOverlap::kNo;
}

void check_no_partial_overlap(const Tensor& written, const Tensor& input, std::string_view op) {
  OPSPEC_CHECK(overlap_status(written, input) != MemOverlap::kPartial, op, kOverlapMessage);
}

void check_no_overlap(const Tensor& written, const Tensor& input, std::string_view op) {
  const MemOverlap lap = overlap_status(written, input);
  OPSPEC_CHECK(lap != MemOverlap::kPartial && lap != MemOverlap::kFull, op, kOverlapMessage);
}

void check_copy_overlap(const Tensor& self, const Tensor& src) {
  constexpr std::string_view kOp = "aten::copy_";
  // Copy.cpp's is_same / is_same_data: copy_ returns before TensorIterator's checks.
  if (self.impl() == src.impl()) return;
  if (self.is_alias_of(src) && self.storage_offset() == src.storage_offset() && self.dtype() == src.dtype() &&
      std::ranges::equal(self.sizes(), src.sizes()) && std::ranges::equal(self.strides(), src.strides())) {
    return;
  }
  check_no_internal_overlap(self, kOp);
  check_no_partial_overlap(self, src, kOp);
}

bool partial_overlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (!a.impl()->storage() || !a.is_alias_of(b)) return false;
  const auto [a_lo, a_hi] = byte_range(a);
  const auto [b_lo, b_hi] = byte_range(b);
  if (a_hi < b_lo || b_hi < a_lo) return false;
  return !same_elements(a, b);
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

namespace {

// kernel_name: PyTorch's "<name>_cpu" / "<name>_cuda" in "not implemented for" errors.
std::string kernel_name(std::string_view op, std::string_view name, const Device& device) {
  std::string_view base = op.substr(std::min(op.size(), op.find("::") + 2));
  if (base.ends_with('_')) base.remove_suffix(1);  // an in-place op runs its functional's kernel
  return str_cat("\"", name.empty() ? base : name, "_", device_type_name(device.type), "\"");
}

// floating_kernel_name: the name PyTorch's floating-only unary kernels of op
// `base` (gelu, silu) dispatch under: gelu's GeluKernelImpl (GeluCUDAKernelImpl
// on CUDA), else "<base>_<device>".
std::string floating_kernel_name(std::string_view base, const Device& device) {
  if (base == "gelu") return device.is_cuda() ? "\"GeluCUDAKernelImpl\"" : "\"GeluKernelImpl\"";
  return kernel_name(base, base, device);
}

}  // namespace

ElementwiseMeta unary_meta(const Tensor& self, UnaryKind kind, std::string_view op) {
  // The functional op's name: an in-place form's errors name the same kernels.
  std::string_view base = op.substr(op.find("::") + 2);
  if (base.ends_with('_')) base.remove_suffix(1);
  const DType dt = self.dtype();
  ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), dt, dt, self.device(),
                    self.is_contiguous() ? SizeVec() : elementwise_output_strides(self.sizes(), TensorList(&self, 1))};
  switch (kind) {
    case UnaryKind::kKeepDtype:
      if (dt == DType::kBool) {
        OPSPEC_CHECK(base != "neg", op,
                     ": Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                     "invert a mask, use the `~` or `logical_not()` operator instead.");
        OPSPEC_CHECK(base != "relu", op, ": Boolean inputs not supported for relu");
        // PyTorch names the kernel of the device that refused ("abs_cpu", "abs_cuda").
        OPSPEC_FAIL(op, ": \"", base, "_", device_type_name(self.device().type), "\" not implemented for 'Bool'");
      }
      break;
    case UnaryKind::kKeepDtypeBool: break;
    case UnaryKind::kFloating:
      if (!is_floating(dt)) m.compute_dtype = m.result_dtype = kDefaultFloat;
      break;
    case UnaryKind::kFloatingOnly:
      // build_unary_op (no promotion), then a kernel dispatched over floating types only.
      OPSPEC_CHECK(is_floating(dt), op, ": ", floating_kernel_name(base, self.device()), " not implemented for '",
                   scalar_type_name(dt), "'");
      break;
    case UnaryKind::kLogical:
      m.result_dtype = DType::kBool;
      break;
  }
  return m;
}

// bitwise_not: integers and bool only ("bitwise_not_cpu" not implemented for 'Float').
ElementwiseMeta bitwise_not_meta(const Tensor& self) {
  constexpr std::string_view kOp = "aten::bitwise_not";
  ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, kOp);
  OPSPEC_CHECK(is_integral(self.dtype(), /*include_bool=*/true), kOp, ": \"bitwise_not_",
               device_type_name(self.device().type), "\" not implemented for '", scalar_type_name(self.dtype()), "'");
  m.compute_dtype = m.result_dtype = self.dtype();
  return m;
}

ElementwiseMeta round_decimals_meta(const Tensor& self, int64_t decimals, std::string_view op) {
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": ",
               kernel_name(op, decimals == 0 && self.device().is_cpu() ? "round_vml" : "round", self.device()),
               " not implemented for '", scalar_type_name(self.dtype()), "'");
  return unary_meta(self, UnaryKind::kKeepDtype, op);
}

double round_decimals_scale(int64_t decimals) {
  // |decimals| in double: negating INT64_MIN as an int64 (as ATen does) would overflow.
  return std::pow(10.0, decimals < 0 ? -static_cast<double>(decimals) : static_cast<double>(decimals));
}

bool gelu_uses_tanh(std::string_view approximate) {
  if (approximate == "tanh") return true;
  OPSPEC_CHECK(approximate == "none", "aten::gelu: approximate argument must be either 'none' or 'tanh', but got '",
               approximate, "'");
  return false;
}

namespace {

// output_strides: the result strides of an op over self and other (See
// Note [Memory formats]), without copying the operands into a list.
SizeVec output_strides(IntArrayRef shape, const Tensor& self, const Tensor& other) {
  const Tensor* operands[] = {&self, &other};
  return elementwise_output_strides(shape, operands);
}

// with_kind: m with the result dtype rule of kind applied.
ElementwiseMeta& with_kind(ElementwiseMeta& m, BinaryKind kind) {
  switch (kind) {
    case BinaryKind::kArithmetic: break;
    case BinaryKind::kTrueDivide:
      if (is_integral(m.result_dtype, /*include_bool=*/true)) m.compute_dtype = m.result_dtype = kDefaultFloat;
      break;
    case BinaryKind::kComparison:
    case BinaryKind::kLogical: m.result_dtype = DType::kBool; break;
  }
  return m;
}

}  // namespace

ElementwiseMeta binary_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op) {
  if (self.defined() && other.defined() && !self.is_wrapped_number() && !other.is_wrapped_number() &&
      self.dtype() == other.dtype() && self.device() == other.device() &&
      std::ranges::equal(self.sizes(), other.sizes())) {
    // The common case, decided without copying the operands (each copy is two
    // atomic refcount updates): same shape, dtype and device; built in place.
    ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), self.dtype(), self.dtype(), self.device()};
    if (!self.is_contiguous() || !other.is_contiguous()) m.strides = output_strides(m.sizes, self, other);
    with_kind(m, kind);
    return m;
  }
  if (self.defined() && other.defined() && !self.is_wrapped_number() && other.is_wrapped_number() &&
      other.device().is_cpu() &&
      (is_floating(self.dtype()) || (self.dtype() != DType::kBool && !is_floating(other.dtype())))) {
    // A tensor and a C++ number (`x * 0.5`): a 0-dim CPU number of no higher
    // category changes neither the shape, the device nor the dtype (result_type).
    ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), self.dtype(), self.dtype(), self.device()};
    m.strides = output_strides(m.sizes, self, other);
    with_kind(m, kind);
    return m;
  }
  const Tensor operands[] = {self, other};
  const Device device = check_same_device(operands, op);
  SizeVec sizes = broadcast_shapes(self.sizes(), other.sizes(), op);
  const DType common = result_type(operands);
  ElementwiseMeta m{std::move(sizes), common, common, device};
  m.strides = elementwise_output_strides(m.sizes, operands);
  with_kind(m, kind);
  return m;
}

void check_alpha(DType dtype, const Scalar& alpha, std::string_view op) {
  OPSPEC_CHECK(!alpha.is_bool() || dtype == DType::kBool, op, ": Boolean alpha only supported for Boolean results.");
  OPSPEC_CHECK(is_floating(dtype) || !alpha.is_floating_point(), op,
               ": For integral input tensors, argument alpha must not be a floating point number.");
}

void check_sub(const Tensor& self, const Tensor& other, std::string_view op) {
  OPSPEC_CHECK(self.dtype() != DType::kBool || other.dtype() != DType::kBool, op,
               ": Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
               "`logical_xor()` operator instead.");
  OPSPEC_CHECK(self.dtype() != DType::kBool && other.dtype() != DType::kBool, op,
               ": Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
               "invert a mask, use the `~` or `logical_not()` operator instead.");
}

void check_pow(DType dtype) {
  OPSPEC_CHECK(dtype != DType::kBool, "aten::pow: \"pow\" not implemented for 'Bool'");
}

void check_pow_scalar(const Tensor& self, const Scalar& exponent) {
  OPSPEC_CHECK(!(is_integral(self.dtype(), /*include_bool=*/true) && exponent.is_integral() && exponent.to_int() < 0),
               "aten::pow: Integers to negative integer powers are not allowed.");
}

RoundingMode parse_rounding_mode(std::optional<std::string_view> mode) {
  if (!mode.has_value()) return RoundingMode::kNone;
  if (*mode == "trunc") return RoundingMode::kTrunc;
  if (*mode == "floor") return RoundingMode::kFloor;
  OPSPEC_FAIL("aten::div: div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode,
              "'");
}

ElementwiseMeta div_mode_meta(const Tensor& self, const Tensor& other, RoundingMode mode) {
  constexpr std::string_view kOp = "aten::div";
  if (mode == RoundingMode::kNone) return binary_meta(self, other, BinaryKind::kTrueDivide, kOp);
  ElementwiseMeta m = binary_meta(self, other, BinaryKind::kArithmetic, kOp);
  OPSPEC_CHECK(m.result_dtype != DType::kBool, kOp, ": ",
               kernel_name(kOp, mode == RoundingMode::kTrunc ? "div_trunc" : "div_floor", m.device),
               " not implemented for 'Bool'");
  return m;
}

ElementwiseMeta integral_binary_meta(const Tensor& self, const Tensor& other, std::string_view op) {
  ElementwiseMeta m = binary_meta(self, other, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(is_integral(m.result_dtype, /*include_bool=*/true), op, ": ", kernel_name(op, "", m.device),
               " not implemented for '", scalar_type_name(m.result_dtype), "'");
  return m;
}

ElementwiseMeta remainder_meta(const Tensor& self, const Tensor& other, std::string_view op) {
  ElementwiseMeta m = binary_meta(self, other, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(m.result_dtype != DType::kBool, op, ": ", kernel_name(op, "", m.device), " not implemented for 'Bool'");
  return m;
}

void check_nonzero_divisor(const Tensor& other, DType compute_dtype, std::string_view op) {
  if (is_floating(compute_dtype) || other.numel() == 0 || !other.device().is_cpu()) return;
  for (int64_t i = 0; i < other.numel(); ++i) {
    OPSPEC_CHECK(read_element_as_double(other, i) != 0.0, op, ": ZeroDivisionError");
  }
}

ElementwiseMeta clamp_meta(const Tensor& self, const Tensor* min, const Tensor* max, std::string_view op) {
  OPSPEC_CHECK(min != nullptr || max != nullptr, "torch.clamp: At least one of 'min' or 'max' must not be None");
  std::vector<Tensor> all = {self};
  if (min != nullptr) all.push_back(*min);
  if (max != nullptr) all.push_back(*max);
  const Device device = check_same_device(all, op);
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  for (size_t i = 1; i < all.size(); ++i) sizes = broadcast_shapes(sizes, all[i].sizes(), op);
  const DType dt = is_floating(self.dtype()) ? self.dtype() : result_type(all);
  const bool scalar_bounds = (min == nullptr || min->is_wrapped_number()) && (max == nullptr || max->is_wrapped_number());
  OPSPEC_CHECK(dt != DType::kBool, op, ": ", kernel_name(op, scalar_bounds ? "clamp_scalar" : "clamp", device),
               " not implemented for 'Bool'");
  // clamp with number bounds iterates over self alone; tensor bounds join it.
  std::vector<Tensor> iterated = {self};
  for (size_t i = 1; i < all.size(); ++i) {
    if (!all[i].is_wrapped_number()) iterated.push_back(all[i]);
  }
  SizeVec strides = elementwise_output_strides(sizes, iterated);
  return ElementwiseMeta{std::move(sizes), dt, dt, device, std::move(strides)};
}

ElementwiseMeta clamp_bound_meta(const Tensor& self, const Scalar& bound, bool lower, std::string_view op) {
  DType dt = self.dtype();
  if (!is_floating(dt)) {
    // Floating is the highest category clamp supports: only a non-floating self promotes.
    const Tensor operands[] = {self, make_wrapped_number(bound)};
    dt = result_type(operands);
  }
  OPSPEC_CHECK(dt != DType::kBool, op, ": ",
               kernel_name(op, lower ? "clamp_min_scalar" : "clamp_max_scalar", self.device()),
               " not implemented for 'Bool'");
  ElementwiseMeta m = unary_meta(self, UnaryKind::kKeepDtypeBool, op);
  m.compute_dtype = m.result_dtype = dt;
  return m;
}

std::optional<Scalar> clamp_bound_value(const Scalar& bound, DType d, bool lower, std::string_view op) {
  // A floating bound promotes an integral self and an i64 holds every int:
  // only an i32 compute dtype can miss a bound.
  if (d != DType::kInt32 || bound.is_floating_point()) return bound;
  const int64_t v = bound.to_int();
  const bool below = v < std::numeric_limits<int32_t>::min(), above = v > std::numeric_limits<int32_t>::max();
  if (!below && !above) return bound;
  OPSPEC_CHECK(lower ? below : above, op, ": Clamp ", lower ? "min" : "max", " value ", bound.to_double(),
               " is outside the representable range of ", scalar_type_name(d));
  return std::nullopt;
}

ClampBounds clamp_bounds(const std::optional<Scalar>& min, const std::optional<Scalar>& max, DType d,
                         std::string_view op) {
  ClampBounds b;
  if (min) b.lo = clamp_bound_value(*min, d, /*lower=*/true, op);
  if (max) b.hi = clamp_bound_value(*max, d, /*lower=*/false, op);
  return b;
}

ClampBounds hardtanh_bounds(const Scalar& min_val, const Scalar& max_val, DType d, std::string_view op) {
  if (is_floating(d)) return ClampBounds{min_val, max_val};
  // Scalar::toLong: a floating bound truncates, within int64 only (NaN and inf refused).
  const auto to_long = [&](const Scalar& s) -> Scalar {
    if (!s.is_floating_point()) return Scalar(s.to_int());
    const double v = s.to_double();
    constexpr double kTwo63 = 9223372036854775808.0;
    OPSPEC_CHECK(v >= -kTwo63 && v < kTwo63, op, ": value cannot be converted to type int64_t without overflow (value ",
                 s.str(), ")");
    return Scalar(static_cast<int64_t>(v));
  };
  return clamp_bounds(to_long(min_val), to_long(max_val), d, op);
}

double finite_max(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return 65504.0;
    case DType::kBFloat16: return 3.3895313892515355e38;
    case DType::kFloat32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

ElementwiseMeta floating_unary_meta(const Tensor& self, std::string_view op) {
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": ", kernel_name(op, "", self.device()), " not implemented for '",
               scalar_type_name(self.dtype()), "'");
  return unary_meta(self, UnaryKind::kKeepDtype, op);
}

ElementwiseMeta where_meta(const Tensor& condition, const Tensor& self, const Tensor& other) {
  constexpr std::string_view kOp = "aten::where";
  OPSPEC_CHECK(condition.dtype() == DType::kBool, kOp,
               ": where expected condition to be a boolean tensor, but got a tensor with dtype ",
               scalar_type_name(condition.dtype()));
  const Tensor all[] = {condition, self, other};
  const Device device = check_same_device(all, kOp);
  SizeVec sizes = broadcast_shapes(broadcast_shapes(condition.sizes(), self.sizes(), kOp), other.sizes(), kOp);
  const Tensor branches[] = {self, other};
  const DType dtype = result_type(branches);
  SizeVec strides = elementwise_output_strides(sizes, all);
  return ElementwiseMeta{std::move(sizes), dtype, dtype, device, std::move(strides)};
}

ElementwiseMeta addc_meta(const Tensor& self, const Tensor& t1, const Tensor& t2, bool div, std::string_view op) {
  OPSPEC_CHECK(!div || !is_integral(t1.dtype(), /*include_bool=*/true) || !is_integral(t2.dtype(), true), op,
               ": Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
               "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
               "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
               "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
               "(input + value * tensor1 / tensor2), for all dtypes.");
  const Tensor all[] = {self, t1, t2};
  const Device device = check_same_device(all, op);
  SizeVec sizes = broadcast_shapes(broadcast_shapes(self.sizes(), t1.sizes(), op), t2.sizes(), op);
  const DType dtype = result_type(all);
  OPSPEC_CHECK(dtype != DType::kBool, op, ": \"", div ? "addcdiv" : "addcmul", device.is_cuda() ? "_cuda" : "_cpu_out",
               "\" not implemented for 'Bool'");
  SizeVec strides = elementwise_output_strides(sizes, all);
  return ElementwiseMeta{std::move(sizes), dtype, dtype, device, std::move(strides)};
}

ElementwiseMeta lerp_meta(const Tensor& self, const Tensor& end, const Tensor* weight, std::string_view op) {
  OPSPEC_CHECK(self.dtype() == end.dtype(), op, ": expected dtype ", cpp_type_name(self.dtype()),
               " for `end` but got dtype ", cpp_type_name(end.dtype()));
  OPSPEC_CHECK(weight == nullptr || self.dtype() == weight->dtype(), op, ": expected dtype ",
               cpp_type_name(self.dtype()), " for `weight` but got dtype ", cpp_type_name(weight->dtype()));
  std::vector<Tensor> all = {self, end};
  if (weight != nullptr) all.push_back(*weight);
  const Device device = check_same_device(all, op);
  SizeVec sizes = broadcast_shapes(self.sizes(), end.sizes(), op);
  if (weight != nullptr) sizes = broadcast_shapes(sizes, weight->sizes(), op);
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"",
               device.is_cuda() ? "lerp_cuda" : (weight == nullptr ? "lerp_kernel_scalar" : "lerp_kernel_tensor"),
               "\" not implemented for '", scalar_type_name(self.dtype()), "'");
  SizeVec strides = elementwise_output_strides(sizes, all);
  return ElementwiseMeta{std::move(sizes), self.dtype(), self.dtype(), device, std::move(strides)};
}

bool has_internal_overlap(const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] > 1 && self.strides()[d] == 0) return true;
  }
  return false;
}

void check_no_internal_overlap(const Tensor& self, std::string_view op) {
  OPSPEC_CHECK(!has_internal_overlap(self), op,
               ": unsupported operation: more than one element of the written-to tensor refers to a single "
               "memory location. Please clone() the tensor before performing the operation.");
}

namespace {

// into_self: m as written into self: its shape must be self's (no broadcast
// of the output) when shape is set, and its result dtype must cast to self's,
// which becomes the result dtype.
// check_output_device: an in-place op's operands (a cpu 0-dim self among them)
// live on self's device; other names the operand in the message.
void check_output_device(const ElementwiseMeta& m, const Tensor& self, const Tensor& other, std::string_view op) {
  OPSPEC_CHECK(m.device == self.device(), op,
               ": Expected all tensors to be on the same device, but found at least two devices, ",
               self.device().str(), " and ", m.device.str(), "! (", self.meta_str(), " and ", other.meta_str(), ")");
}

void into_self(ElementwiseMeta& m, const Tensor& self, std::string_view op, bool shape) {
  OPSPEC_CHECK(!shape || std::equal(m.sizes.begin(), m.sizes.end(), self.sizes().begin(), self.sizes().end()), op,
               ": output with shape ", format_sizes(self.sizes()), " doesn't match the broadcast shape ",
               format_sizes(m.sizes));
  OPSPEC_CHECK(can_cast(m.result_dtype, self.dtype()), op, ": result type ", scalar_type_name(m.result_dtype),
               " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  m.result_dtype = self.dtype();
}

}  // namespace

ElementwiseMeta inplace_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op) {
  // TensorIterator checks memory first (compute_mem_overlaps), then shapes and dtypes.
  check_no_internal_overlap(self, op);
  check_no_partial_overlap(self, other, op);
  ElementwiseMeta m = binary_meta(self, other, kind, op);
  check_output_device(m, self, other, op);
  into_self(m, self, op, /*shape=*/true);
  return m;
}

ElementwiseMeta addc_inplace_meta(const Tensor& self, const Tensor& t1, const Tensor& t2, bool div,
                                  std::string_view op) {
  check_no_internal_overlap(self, op);
  check_no_partial_overlap(self, t1, op);
  check_no_partial_overlap(self, t2, op);
  ElementwiseMeta m = addc_meta(self, t1, t2, div, op);
  check_output_device(m, self, t1, op);
  into_self(m, self, op, /*shape=*/true);
  return m;
}

ElementwiseMeta lerp_inplace_meta(const Tensor& self, const Tensor& end, const Tensor* weight, std::string_view op) {
  check_no_internal_overlap(self, op);
  check_no_partial_overlap(self, end, op);
  if (weight != nullptr) check_no_partial_overlap(self, *weight, op);
  ElementwiseMeta m = lerp_meta(self, end, weight, op);
  check_output_device(m, self, end, op);
  into_self(m, self, op, /*shape=*/true);
  return m;
}

ElementwiseMeta unary_inplace_meta(const Tensor& self, UnaryKind kind, std::string_view op) {
  ElementwiseMeta m = unary_meta(self, kind, op);
  check_no_internal_overlap(self, op);
  into_self(m, self, op, /*shape=*/false);
  return m;
}

ElementwiseMeta clamp_inplace_meta(const Tensor& self, const Tensor* min, const Tensor* max, std::string_view op) {
  const bool scalar_bounds = (min == nullptr || min->is_wrapped_number()) && (max == nullptr || max->is_wrapped_number());
  if (scalar_bounds) {
    // clamp's meta function refuses any promotion of an integral self first,
    // printing self.dtype() as a TypeMeta ("long int").
    OPSPEC_CHECK(min != nullptr || max != nullptr, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (!is_floating(self.dtype())) {
      std::vector<Tensor> all = {self};
      if (min != nullptr) all.push_back(*min);
      if (max != nullptr) all.push_back(*max);
      const DType dt = result_type(all);
      OPSPEC_CHECK(dt == self.dtype(), op, ": result type ", scalar_type_name(dt),
                   " can't be cast to the desired output type ", cpp_type_name(self.dtype()));
    }
    check_no_internal_overlap(self, op);
  } else {
    check_no_internal_overlap(self, op);
    for (const Tensor* b : {min, max}) {
      if (b != nullptr) check_no_partial_overlap(self, *b, op);
    }
  }
  ElementwiseMeta m = clamp_meta(self, min, max, op);
  into_self(m, self, op, /*shape=*/true);
  return m;
}

ElementwiseMeta clamp_bound_inplace_meta(const Tensor& self, const Scalar& bound, bool lower, std::string_view op) {
  // clamp_min's meta function refuses any promotion of an integral self first,
  // printing self.dtype() as a TypeMeta ("long int"), then builds a unary iterator.
  if (!is_floating(self.dtype())) {
    const Tensor operands[] = {self, make_wrapped_number(bound)};
    const DType dt = result_type(operands);
    OPSPEC_CHECK(dt == self.dtype(), op, ": result type ", scalar_type_name(dt),
                 " can't be cast to the desired output type ", cpp_type_name(self.dtype()));
  }
  check_no_internal_overlap(self, op);
  return clamp_bound_meta(self, bound, lower, op);
}

ElementwiseMeta pow_scalar_inplace_meta(const Tensor& self, const Scalar& exponent, std::string_view op) {
  check_pow_scalar(self, exponent);
  check_no_internal_overlap(self, op);
  ElementwiseMeta m = binary_meta(self, make_wrapped_number(exponent), BinaryKind::kArithmetic, op);
  // self is the output of a unary iterator over base.to(common dtype), whose
  // operands must share one dtype (check_all_same_dtype).
  OPSPEC_CHECK(m.result_dtype == self.dtype(), op, ": Found dtype ", scalar_type_name(self.dtype()),
               " but expected ", scalar_type_name(m.result_dtype));
  check_pow(m.result_dtype);
  return m;
}

ElementwiseMeta activation_inplace_meta(const Tensor& self, std::string_view op) {
  if (op == "aten::hardtanh_") {
    OPSPEC_CHECK(self.dtype() != DType::kBool, op, ": Bool inputs not supported for hardtanh");
    return unary_inplace_meta(self, UnaryKind::kKeepDtype, op);
  }
  ElementwiseMeta m = floating_unary_meta(self, op);
  check_no_internal_overlap(self, op);
  return m;
}

ElementwiseMeta add_sub_inplace_meta(const Tensor& self, const Tensor& other, const Scalar& alpha, bool sub,
                                     std::string_view op) {
  if (sub) check_sub(self, other, op);
  ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, op);
  check_alpha(m.compute_dtype, alpha, op);
  return m;
}

Tensor make_elementwise_output(const ElementwiseMeta& m, Device device) {
  return make_tensor_with_strides(m.sizes, m.strides, m.result_dtype, device);
}

void check_copy_shapes(const Tensor& self, const Tensor& src) {
  const SizeVec shape = broadcast_shapes(self.sizes(), src.sizes(), "aten::copy_");
  OPSPEC_CHECK(std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end()),
               "aten::copy_: output with shape ", format_sizes(self.sizes()), " doesn't match the broadcast shape ",
               format_sizes(shape));
}

}  // namespace opspec::internal
