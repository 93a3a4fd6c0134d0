// compare.cc: CPU kernels of the comparisons and logical ops (b8 results),
// where, masked_fill(_), and autograd's elementwise backward ops
// (threshold, tanh, sigmoid, gelu, silu). Apart from binary.cc so that
// neither file's many typed loops makes a one-kernel rebuild slow.
#include <bit>
#include <cstring>
#include <type_traits>

#include "kernels/common/backward_meta.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/binary_loops.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// ---- Autograd's backward ops: (grad, saved) in the promoted dtype ----

Tensor threshold_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  constexpr std::string_view op = "aten::threshold_backward";
  Tensor out = elementwise_output(binary_meta(grad, self, BinaryKind::kArithmetic, op), op);
  const double th = threshold.to_double();
  arith_into(out, grad, self, op, [th]<class T>() { return ThresholdBackwardOp{th}; });
  return out;
}
template <class Op>
Tensor saved_output_backward_cpu(const Tensor& grad, const Tensor& output, std::string_view op) {
  const ElementwiseMeta m = binary_meta(grad, output, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(is_floating(m.result_dtype), op, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  Tensor out = elementwise_output(m, op);
  arith_into</*kFloatingOnly=*/true>(out, grad, output, op, []<class T>() { return Op{}; });
  return out;
}
Tensor tanh_backward_cpu(const Tensor& grad, const Tensor& output) {
  return saved_output_backward_cpu<TanhBackwardOp>(grad, output, "aten::tanh_backward");
}
Tensor sigmoid_backward_cpu(const Tensor& grad, const Tensor& output) {
  return saved_output_backward_cpu<SigmoidBackwardOp>(grad, output, "aten::sigmoid_backward");
}
Tensor gelu_backward_cpu(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  if (gelu_uses_tanh(approximate)) {
    return saved_output_backward_cpu<GeluBackwardTanhOp>(grad, self, "aten::gelu_backward");
  }
  return saved_output_backward_cpu<GeluBackwardErfOp>(grad, self, "aten::gelu_backward");
}
Tensor silu_backward_cpu(const Tensor& grad, const Tensor& self) {
  return saved_output_backward_cpu<SiluBackwardOp>(grad, self, "aten::silu_backward");
}

// ---- Comparisons and logical ops: compute in the promoted dtype, b8 out ----

template <class Op>
Tensor predicate_cpu(const Tensor& a, const Tensor& b, BinaryKind kind, std::string_view op) {
  const ElementwiseMeta m = binary_meta(a, b, kind, op);
  Tensor out = elementwise_output(m, op);
  predicate_into<Op>(out, a, b, m.compute_dtype, op);
  return out;
}

#define OPSPEC_COMPARE_CPU(name, Op)                                                         \
  Tensor name##_cpu(const Tensor& a, const Tensor& b) {                                      \
    return predicate_cpu<Op>(a, b, BinaryKind::kComparison, "aten::" #name);                 \
  }                                                                                          \
  Tensor name##_scalar_cpu(const Tensor& a, const Scalar& b) {                               \
    return predicate_cpu<Op>(a, make_wrapped_number(b), BinaryKind::kComparison, "aten::" #name); \
  }
OPSPEC_COMPARE_CPU(eq, EqOp)
OPSPEC_COMPARE_CPU(ne, NeOp)
OPSPEC_COMPARE_CPU(lt, LtOp)
OPSPEC_COMPARE_CPU(le, LeOp)
OPSPEC_COMPARE_CPU(gt, GtOp)
OPSPEC_COMPARE_CPU(ge, GeOp)
#undef OPSPEC_COMPARE_CPU

Tensor logical_and_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalAndOp>(a, b, BinaryKind::kLogical, "aten::logical_and");
}
Tensor logical_or_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalOrOp>(a, b, BinaryKind::kLogical, "aten::logical_or");
}
Tensor logical_xor_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalXorOp>(a, b, BinaryKind::kLogical, "aten::logical_xor");
}

// where: selects element bits, so one loop per element size serves every dtype.
template <class U>
void where_bits(const TensorIterator& iter) {
  cpu_kernel<U, bool, U, U>(iter, [](bool c, U x, U y) { return WhereOp{}(c, x, y); });
}

Tensor where_cpu(const Tensor& condition, const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = where_meta(condition, self, other);
  Tensor out = elementwise_output(m, "aten::where");
  if (out.numel() == 0) return out;
  const Tensor in[] = {condition, cast_for_compute(self, m.compute_dtype), cast_for_compute(other, m.compute_dtype)};
  TensorIterator iter(out, in);
  switch (out.element_size()) {
    case 1: where_bits<uint8_t>(iter); break;
    case 2: where_bits<uint16_t>(iter); break;
    case 4: where_bits<uint32_t>(iter); break;
    case 8: where_bits<uint64_t>(iter); break;
    default: OPSPEC_INTERNAL_ASSERT(false);
  }
  return out;
}

// masked_fill_: self = mask ? value : self, selecting element bits (value
// converted once, with PyTorch's overflow check, to self's dtype).
template <class U>
void masked_fill_bits(const TensorIterator& iter, U v) {
  cpu_kernel<U, U, bool>(iter, [v](U x, bool m) { return m ? v : x; });
}

// masked_fill_expanded_bits: into an expanded self, writes the masked
// elements only, in one thread, so an address that a masked and an unmasked
// element share ends up holding v, as PyTorch's kernel leaves it (See Note
// [Memory overlap]).
template <class U>
void masked_fill_expanded_bits(const TensorIterator& iter, U v) {
  iter.serial_for_each(
      [v](char** data, const int64_t* strides, int64_t n, int64_t rows) {
        for (int64_t r = 0; r < rows; ++r) {
          char* out = data[0] + r * strides[2];
          const char* mask = data[1] + r * strides[3];
          for (int64_t i = 0; i < n; ++i) {
            if (*reinterpret_cast<const bool*>(mask + i * strides[1])) std::memcpy(out + i * strides[0], &v, sizeof(U));
          }
        }
      },
      0, iter.numel());
}

Tensor masked_fill__cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  require_cpu_device(self.device(), kOp);
  check_masked_fill(self, mask);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    const scalar_t v = checked_scalar_cast<scalar_t>(value, kOp);
    if (self.numel() == 0) return;
    // A mask sharing memory with self that check_masked_fill let through is copied first (See inplace_apply).
    Tensor m = mask;
    if (partial_overlap(self, mask)) {
      m = make_tensor(mask.sizes(), mask.dtype(), kCPU);
      copy_into(m, mask);
    }
    using U = std::conditional_t<sizeof(scalar_t) == 1, uint8_t,
                                 std::conditional_t<sizeof(scalar_t) == 2, uint16_t,
                                                    std::conditional_t<sizeof(scalar_t) == 4, uint32_t, uint64_t>>>;
    if (has_internal_overlap(self)) {
      const Tensor in[] = {m};
      masked_fill_expanded_bits<U>(TensorIterator(self, in), std::bit_cast<U>(v));
      return;
    }
    const Tensor in[] = {self, m};
    TensorIterator iter(self, in);
    masked_fill_bits<U>(iter, std::bit_cast<U>(v));
  });
  self.impl()->bump_version();
  return self;
}

// masked_fill: self broadcast with mask, copied, then filled (PyTorch's
// CompositeExplicit kernel: clone then masked_fill_, with no dispatch).
Tensor masked_fill_cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  require_cpu_device(self.device(), "aten::masked_fill");
  Tensor out = make_tensor(masked_fill_sizes(self, mask), self.dtype(), kCPU);
  copy_into(out, self);
  return masked_fill__cpu(out, mask, value);
}

}  // namespace

void register_compare_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("threshold_backward", kKey, &threshold_backward_cpu)
      .impl("tanh_backward", kKey, &tanh_backward_cpu)
      .impl("sigmoid_backward", kKey, &sigmoid_backward_cpu)
      .impl("gelu_backward", kKey, &gelu_backward_cpu)
      .impl("silu_backward", kKey, &silu_backward_cpu)
      .impl("eq.Tensor", kKey, &eq_cpu)
      .impl("ne.Tensor", kKey, &ne_cpu)
      .impl("lt.Tensor", kKey, &lt_cpu)
      .impl("le.Tensor", kKey, &le_cpu)
      .impl("gt.Tensor", kKey, &gt_cpu)
      .impl("ge.Tensor", kKey, &ge_cpu)
      .impl("eq.Scalar", kKey, &eq_scalar_cpu)
      .impl("ne.Scalar", kKey, &ne_scalar_cpu)
      .impl("lt.Scalar", kKey, &lt_scalar_cpu)
      .impl("le.Scalar", kKey, &le_scalar_cpu)
      .impl("gt.Scalar", kKey, &gt_scalar_cpu)
      .impl("ge.Scalar", kKey, &ge_scalar_cpu)
      .impl("logical_and", kKey, &logical_and_cpu)
      .impl("logical_or", kKey, &logical_or_cpu)
      .impl("logical_xor", kKey, &logical_xor_cpu)
      .impl("where.self", kKey, &where_cpu)
      .impl("masked_fill_.Scalar", kKey, &masked_fill__cpu)
      .impl("masked_fill.Scalar", kKey, &masked_fill_cpu);
}

}  // namespace opspec::internal
