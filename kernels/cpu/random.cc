// random.cc: CPU kernels of rand, randn, rand_like, randn_like, bernoulli_,
// native_dropout, randint, uniform_, normal_ and bernoulli, all drawn from the counter-based generator so element i of a
// call depends only on (seed, the call's first offset, i).
// See Note [Counter-based randomness].
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/ops/elementwise_rules.h"  // check_no_internal_overlap
#include "kernels/common/factory_meta.h"
#include "kernels/common/layout_format.h"
#include "kernels/common/random_meta.h"
#include "kernels/common/random_values.h"
#include "kernels/common/registration.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

// Note [Random draws per dtype]
// Every random kernel reserves numel offsets once per call and computes the
// element at row-major logical index i from counter first + i, so any
// parallel split (and any backend following these rules) gives the same values,
// whatever the result's layout: a channels-last rand_like holds the values of
// a contiguous one. (PyTorch's nullary TensorIterator walks storage order
// instead; its generator differs anyway, so only the logical index is promised.)
//   rand:  f32 uniform_float; f64 uniform_double; f16/bf16 uniform_float
//          truncated to the dtype's 11/8 significant bits (k / 2^11, k / 2^8),
//          exactly representable, so rounding can never produce 1.0 (PyTorch
//          likewise draws only `digits` random bits for reduced precision).
//   randn: f32 normal_float; f64 normal_double; f16/bf16 normal_float rounded.
//   bernoulli_(p) and dropout masks: uniform_double(counter) < p, any dtype.
//   uniform_(from, to): fma(to - from, rand's draw for the dtype, from) in
//          double, then the dtype (so uniform_(0, 1) equals rand).
//   normal_(mean, std): fma(std, normal_double, mean) in double, then the dtype.
//   randint(low, high): low + (words 0 and 1 as 64 bits) mod (high - low).
//   bernoulli(p tensor): uniform_double(counter) < p[i], p read in logical order.
// kernels/common/random_values.h holds these, shared with the CUDA kernels.

namespace {

// Philox blocks are costly enough that smaller tensors already pay off.
constexpr int64_t kRandomGrain = 4096;

struct RandomStream {
  uint64_t seed;
  uint64_t first;
};

// reserve: takes n offsets from the default generator for one call.
RandomStream reserve(int64_t n) {
  const GeneratorState reserved = reserve_random_offsets(static_cast<uint64_t>(n));
  return {reserved.seed, reserved.offset};
}

template <class T> constexpr float reduced_precision_scale() {
  return std::is_same_v<T, Half> ? 2048.0f : 256.0f;  // 2^digits: 11 for f16, 8 for bf16
}

// The loops live in templates, outside the dtype dispatch macro's argument.
// Each value depends only on its index, so any split over threads gives the same numbers.
template <class T> void uniform_loop(T* p, int64_t n, RandomStream rs) {
  parallel_for(n, kRandomGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t c = rs.first + static_cast<uint64_t>(i);
      if constexpr (std::is_same_v<T, double>) {
        p[i] = uniform_double(rs.seed, c);
      } else if constexpr (std::is_same_v<T, float>) {
        p[i] = uniform_float(rs.seed, c);
      } else {
        constexpr float scale = reduced_precision_scale<T>();
        p[i] = T(std::floor(uniform_float(rs.seed, c) * scale) / scale);
      }
    }
  });
}

template <class T> void normal_loop(T* p, int64_t n, RandomStream rs) {
  parallel_for(n, kRandomGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t c = rs.first + static_cast<uint64_t>(i);
      if constexpr (std::is_same_v<T, double>) {
        p[i] = normal_double(rs.seed, c);
      } else {
        p[i] = T(normal_float(rs.seed, c));
      }
    }
  });
}

template <class T> void bernoulli_loop(T* p, int64_t n, RandomStream rs, double prob) {
  const T one = static_cast<T>(1.0f), zero = static_cast<T>(0.0f);
  parallel_for(n, kRandomGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      p[i] = uniform_double(rs.seed, rs.first + static_cast<uint64_t>(i)) < prob ? one : zero;
    }
  });
}

// dropout_loop: y = (x * keep) * scale in the op math type (float for
// f32/f16/bf16, double for f64), as PyTorch's input.mul(mask).mul_(scale).
template <class T> void dropout_loop(const T* x, T* y, bool* mask, int64_t n, RandomStream rs, double p1m,
                                     double scale) {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const acc_t s = static_cast<acc_t>(scale);
  parallel_for(n, kRandomGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const bool keep = uniform_double(rs.seed, rs.first + static_cast<uint64_t>(i)) < p1m;
      mask[i] = keep;
      y[i] = static_cast<T>(static_cast<acc_t>(x[i]) * static_cast<acc_t>(keep) * s);
    }
  });
}

// fill_uniform / fill_normal: out is a fresh contiguous floating cpu tensor.
void fill_uniform(const Tensor& out, std::string_view op) {
  if (out.numel() == 0) return;
  const RandomStream rs = reserve(out.numel());
  OPSPEC_DISPATCH_FLOATING_DTYPES(out.dtype(), op,
                                  [&] { uniform_loop(static_cast<scalar_t*>(out.raw_data()), out.numel(), rs); });
}

void fill_normal(const Tensor& out, std::string_view op) {
  if (out.numel() == 0) return;
  const RandomStream rs = reserve(out.numel());
  OPSPEC_DISPATCH_FLOATING_DTYPES(out.dtype(), op,
                                  [&] { normal_loop(static_cast<scalar_t*>(out.raw_data()), out.numel(), rs); });
}

// random_like_cpu: rand_like / randn_like, laid out as like_result_strides
// says; a strided result is drawn in logical order into a contiguous buffer
// and copied (See Note [Random draws per dtype]).
Tensor random_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device,
                       std::optional<int64_t> memory_format, std::string_view check_name, std::string_view op,
                       bool normal) {
  const DType out_dtype = dtype.value_or(self.dtype());
  const Device target = device.value_or(self.device());
  if (!target.is_cpu()) return like_on_device(op, self, {}, out_dtype, target, memory_format);  // its kernel checks
  check_random_dtype(out_dtype, check_name, op);
  const SizeVec strides = like_result_strides(self, memory_format, op);
  Tensor out = make_tensor_with_strides(self.sizes(), strides, out_dtype, kCPU);
  const Tensor drawn = out.is_contiguous() ? out : make_tensor(self.sizes(), out_dtype, kCPU);
  normal ? fill_normal(drawn, op) : fill_uniform(drawn, op);
  if (!drawn.is_same(out)) copy_into(out, drawn);
  return out;
}

}  // namespace

Tensor rand_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                std::optional<bool>) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, "check_uniform_bounds", "aten::rand");
  check_factory_size(size, "aten::rand");
  Tensor out = make_tensor(size, t, kCPU);
  fill_uniform(out, "aten::rand");
  return out;
}

Tensor randn_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                 std::optional<bool>) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, "normal_kernel_cpu", "aten::randn");
  check_factory_size(size, "aten::randn");
  Tensor out = make_tensor(size, t, kCPU);
  fill_normal(out, "aten::randn");
  return out;
}

Tensor rand_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                     std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return random_like_cpu(self, dtype, device, memory_format, "check_uniform_bounds", "aten::rand_like", false);
}

Tensor randn_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return random_like_cpu(self, dtype, device, memory_format, "normal_kernel_cpu", "aten::randn_like", true);
}

Tensor bernoulli_float_cpu(const Tensor& self, double p, std::optional<int64_t> generator) {
  constexpr std::string_view op = "aten::bernoulli_.float";
  OPSPEC_CHECK(!generator.has_value(), op, ": explicit generators are not supported; "
               "use manual_seed on the default generator");
  check_bernoulli_p(p, op);
  check_no_internal_overlap(self, op);
  const int64_t n = self.numel();
  if (n > 0) {
    const RandomStream rs = reserve(n);
    // Draw into self when it is contiguous, else into a contiguous buffer
    // that is then copied through self's strides (logical order is kept).
    const Tensor out = self.is_contiguous() ? self : make_tensor(self.sizes(), self.dtype(), kCPU);
    OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op,
                               [&] { bernoulli_loop(static_cast<scalar_t*>(out.raw_data()), n, rs, p); });
    if (!out.is_same(self)) copy_into(self, out);
  }
  self.impl()->bump_version();
  return self;
}

// native_dropout_cpu: output and mask laid out as input (See Note [Dropout layout]);
// drawn row-major in logical order, then copied into that layout.
std::tuple<Tensor, Tensor> native_dropout_cpu(const Tensor& input, double p, std::optional<bool> train) {
  constexpr std::string_view op = "aten::native_dropout";
  check_dropout_args(input, p, train);
  const SizeVec strides = preserve_strides(input);
  const int64_t n = input.numel();
  if (n == 0 || !train.value_or(true)) {
    Tensor output = make_tensor_with_strides(input.sizes(), strides, input.dtype(), kCPU);
    Tensor mask = make_tensor_with_strides(input.sizes(), strides, DType::kBool, kCPU);
    if (n == 0) return {output, mask};
    copy_into(output, input);
    std::memset(mask.raw_data(), 1, static_cast<size_t>(n));  // dense: its n bytes from the first element
    return {output, mask};
  }
  Tensor output = make_tensor(input.sizes(), input.dtype(), kCPU);
  Tensor mask = make_tensor(input.sizes(), DType::kBool, kCPU);
  // PyTorch computes input * mask * (1 / (1 - p)) with the scale in the op
  // math type; p == 1 keeps everything at zero (scale 0) instead of NaN.
  const double p1m = 1.0 - p;
  const double scale = p1m == 0 ? 0.0 : 1.0 / p1m;
  const Tensor src = contiguous_cpu(input);
  const RandomStream rs = reserve(n);
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), op, [&] {
    dropout_loop(static_cast<const scalar_t*>(src.raw_data()), static_cast<scalar_t*>(output.raw_data()),
                 static_cast<bool*>(mask.raw_data()), n, rs, p1m, scale);
  });
  return {with_strides(output, strides, copy_into), with_strides(mask, strides, copy_into)};
}

// ---- randint, uniform_, normal_, bernoulli ----

namespace {

// fill_logical: draws value(seed, counter) into every element of self in
// logical order (into self when contiguous, else through a buffer).
template <class F>
void fill_logical(const Tensor& self, std::string_view op, bool all_dtypes, F value) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const RandomStream rs = reserve(n);
  const Tensor out = self.is_contiguous() ? self : make_tensor(self.sizes(), self.dtype(), kCPU);
  auto body = [&]<class T>() {
    T* p = static_cast<T*>(out.raw_data());
    parallel_for(n, kRandomGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = value.template operator()<T>(rs.seed, rs.first + uint64_t(i), i);
    });
  };
  if (all_dtypes) {
    OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] { body.template operator()<scalar_t>(); });
  } else {
    OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] { body.template operator()<scalar_t>(); });
  }
  if (!out.is_same(self)) copy_into(self, out);
}

Tensor randint_impl(int64_t low, int64_t high, IntArrayRef size, std::optional<DType> dtype, std::string_view op) {
  const DType t = dtype.value_or(DType::kInt64);
  check_randint_range(low, high, t, op);
  check_factory_size(size, op);
  Tensor out = make_tensor(size, t, kCPU);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  fill_logical(out, op, true, [&]<class T>(uint64_t seed, uint64_t c, int64_t) {
    return random_values::randint<T>(seed, c, low, range);
  });
  return out;
}

Tensor randint_cpu(int64_t high, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>,
                   std::optional<Device>, std::optional<bool>) {
  return randint_impl(0, high, size, dtype, "aten::randint");
}

Tensor randint_low_cpu(int64_t low, int64_t high, IntArrayRef size, std::optional<DType> dtype,
                       std::optional<int64_t>, std::optional<Device>, std::optional<bool>) {
  return randint_impl(low, high, size, dtype, "aten::randint.low");
}

Tensor uniform_cpu(const Tensor& self, double from, double to, std::optional<int64_t> generator) {
  constexpr std::string_view op = "aten::uniform_";
  check_no_generator(generator, op);
  check_uniform_args(self, from, to, op);
  fill_logical(self, op, false, [&]<class T>(uint64_t seed, uint64_t c, int64_t) {
    return random_values::uniform<T>(seed, c, from, to);
  });
  self.impl()->bump_version();
  return self;
}

Tensor normal_cpu(const Tensor& self, double mean, double std, std::optional<int64_t> generator) {
  constexpr std::string_view op = "aten::normal_";
  check_no_generator(generator, op);
  check_normal_args(self, std, op);
  fill_logical(self, op, false, [&]<class T>(uint64_t seed, uint64_t c, int64_t) {
    return random_values::normal<T>(seed, c, mean, std);
  });
  self.impl()->bump_version();
  return self;
}

// bernoulli: PyTorch's empty_like(self, contiguous).bernoulli_(self): p = self[i].
Tensor bernoulli_cpu(const Tensor& self, std::optional<int64_t> generator) {
  constexpr std::string_view op = "aten::bernoulli";
  check_no_generator(generator, op);
  check_bernoulli_probs(self, op);
  const Tensor probs = contiguous_cpu(self);
  // Every p is checked before any offset is reserved, so a refused call draws nothing.
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(probs.raw_data());
    for (int64_t i = 0; i < probs.numel(); ++i) {
      const double v = static_cast<double>(p[i]);
      OPSPEC_CHECK(v >= 0 && v <= 1, op, ": Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
    }
  });
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  fill_logical(out, op, false, [&]<class T>(uint64_t seed, uint64_t c, int64_t i) {
    return random_values::bernoulli<T>(seed, c, static_cast<double>(static_cast<const T*>(probs.raw_data())[i]));
  });
  return out;
}

// bernoulli.p: PyTorch's empty_like(self, contiguous).bernoulli_(p).
Tensor bernoulli_p_cpu(const Tensor& self, double p, std::optional<int64_t> generator) {
  constexpr std::string_view op = "aten::bernoulli.p";
  check_no_generator(generator, op);
  check_bernoulli_p(p, op);
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  fill_logical(out, op, true, [&]<class T>(uint64_t seed, uint64_t c, int64_t) {
    return random_values::bernoulli<T>(seed, c, p);
  });
  return out;
}

}  // namespace

void register_random_kernels(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kCPUKey = DispatchKey::kCPU, kMetaKey = DispatchKey::kMeta;
  lib.impl("randint", kCPUKey, &randint_cpu)
      .impl("randint", kMetaKey, &randint_meta)
      .impl("randint.low", kCPUKey, &randint_low_cpu)
      .impl("randint.low", kMetaKey, &randint_low_meta)
      .impl("uniform_", kCPUKey, &uniform_cpu)
      .impl("uniform_", kMetaKey, &uniform_meta)
      .impl("normal_", kCPUKey, &normal_cpu)
      .impl("normal_", kMetaKey, &normal_meta)
      .impl("bernoulli", kCPUKey, &bernoulli_cpu)
      .impl("bernoulli", kMetaKey, &bernoulli_meta)
      .impl("bernoulli.p", kCPUKey, &bernoulli_p_cpu)
      .impl("bernoulli.p", kMetaKey, &bernoulli_p_meta);
}

}  // namespace opspec::internal
