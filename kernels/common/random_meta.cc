#include "kernels/common/random_meta.h"

#include "kernels/common/factory_meta.h"
#include "runtime/core/shape_utils.h"
#include "runtime/ops/elementwise_rules.h"  // check_no_internal_overlap

namespace opspec::internal {

void check_randint_range(int64_t low, int64_t high, DType dtype, std::string_view op) {
  OPSPEC_CHECK(low < high, op, ": random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  // The bounds of what dtype holds exactly (PyTorch's check_from_to_in_range).
  int64_t min = 0, max = 0;
  switch (dtype) {
    case DType::kBool: min = 0; max = 1; break;
    case DType::kInt32: min = INT32_MIN; max = INT32_MAX; break;
    case DType::kInt64: return;
    case DType::kFloat32: min = -(int64_t{1} << 24); max = int64_t{1} << 24; break;
    case DType::kFloat64: min = -(int64_t{1} << 53); max = int64_t{1} << 53; break;
    case DType::kFloat16: min = -(int64_t{1} << 11); max = int64_t{1} << 11; break;
    case DType::kBFloat16: min = -(int64_t{1} << 8); max = int64_t{1} << 8; break;
  }
  OPSPEC_CHECK(low >= min && low <= max, op, ": from is out of bounds for ", cpp_type_name(dtype));
  OPSPEC_CHECK(high - 1 >= min && high - 1 <= max, op, ": to - 1 is out of bounds for ", cpp_type_name(dtype));
}

void check_uniform_args(const Tensor& self, double from, double to, std::string_view op) {
  check_random_dtype(self.dtype(), "check_uniform_bounds", op);
  OPSPEC_CHECK(from <= to, op, ": uniform_ expects to return a [from, to) range, but found from=", from,
               " > to=", to);
  check_no_internal_overlap(self, op);
}

void check_normal_args(const Tensor& self, double std, std::string_view op) {
  check_random_dtype(self.dtype(), device_kernel_name("normal_kernel", self.device()), op);
  OPSPEC_CHECK(std >= 0.0, op, ": normal expects std >= 0.0, but found std ", std);
  check_no_internal_overlap(self, op);
}

void check_bernoulli_probs(const Tensor& self, std::string_view op) {
  check_random_dtype(self.dtype(), str_cat("bernoulli_tensor_", device_type_name(self.device().type), "_p_"), op);
}

void check_no_generator(std::optional<int64_t> generator, std::string_view op) {
  OPSPEC_CHECK(!generator.has_value(), op, ": explicit generators are not supported; "
               "use manual_seed on the default generator");
}

Tensor randint_meta(int64_t high, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>,
                    std::optional<Device>, std::optional<bool>) {
  const DType t = dtype.value_or(DType::kInt64);
  check_randint_range(0, high, t, "aten::randint");
  check_factory_size(size, "aten::randint");
  return make_tensor(size, t, kMeta);
}

Tensor randint_low_meta(int64_t low, int64_t high, IntArrayRef size, std::optional<DType> dtype,
                        std::optional<int64_t>, std::optional<Device>, std::optional<bool>) {
  const DType t = dtype.value_or(DType::kInt64);
  check_randint_range(low, high, t, "aten::randint.low");
  check_factory_size(size, "aten::randint.low");
  return make_tensor(size, t, kMeta);
}

Tensor uniform_meta(const Tensor& self, double from, double to, std::optional<int64_t> generator) {
  check_no_generator(generator, "aten::uniform_");
  check_uniform_args(self, from, to, "aten::uniform_");
  self.impl()->bump_version();
  return self;
}

Tensor normal_meta(const Tensor& self, double, double std, std::optional<int64_t> generator) {
  check_no_generator(generator, "aten::normal_");
  check_normal_args(self, std, "aten::normal_");
  self.impl()->bump_version();
  return self;
}

Tensor bernoulli_meta(const Tensor& self, std::optional<int64_t> generator) {
  check_no_generator(generator, "aten::bernoulli");
  check_bernoulli_probs(self, "aten::bernoulli");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

Tensor bernoulli_p_meta(const Tensor& self, double p, std::optional<int64_t> generator) {
  check_no_generator(generator, "aten::bernoulli.p");
  check_bernoulli_p(p, "aten::bernoulli.p");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

}  // namespace opspec::internal
