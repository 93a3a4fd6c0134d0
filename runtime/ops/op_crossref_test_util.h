// op_crossref_test_util.h: the op crossref tests' generators and runner
// (See Note [Op crossref] in op_crossref_test.cc): random tensors of given
// sizes, dtypes and layouts, random arguments of any schema type, and one
// call run to its outcome. Shared by the Meta crossref test and the CUDA one
// (kernels/cuda/op_crossref_cuda_test.cc). Test-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec::op_crossref_test {

using Rng = std::mt19937_64;

inline int pick(Rng& rng, int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); }
inline bool chance(Rng& rng, int percent) { return pick(rng, 100) < percent; }

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                             DType::kInt64,   DType::kInt32,   DType::kBool};

// CallShape: the shape most tensors of one call share.
struct CallShape {
  std::vector<int64_t> sizes;
  DType dtype;
};

inline std::vector<int64_t> random_sizes(Rng& rng) {
  std::vector<int64_t> s(pick(rng, 5));
  for (int64_t& d : s) d = chance(rng, 8) ? 0 : 1 + pick(rng, 4);
  return s;
}

// make_tensor: values from a small range (indices often land in range),
// sometimes a transposed or strided view of a larger tensor.
inline Tensor make_tensor(Rng& rng, const std::vector<int64_t>& sizes, DType dt) {
  const int layout = pick(rng, 5);  // 0: transposed, 1: strided, else dense
  std::vector<int64_t> base = sizes;
  if (layout == 0 && sizes.size() >= 2) std::swap(base.front(), base.back());
  if (layout == 1 && !sizes.empty()) base.front() *= 2;
  int64_t n = 1;
  for (int64_t d : base) n *= d;
  std::vector<double> values(n);
  for (double& v : values) {
    if (dt == DType::kBool) {
      v = pick(rng, 2);
    } else if (is_floating(dt)) {
      v = chance(rng, 2) ? std::numeric_limits<double>::quiet_NaN() : (pick(rng, 17) - 8) * 0.375;
    } else {
      v = pick(rng, 7) - 2;
    }
  }
  Tensor t = ops::tensor(std::move(values), base, dt);
  if (layout == 0 && sizes.size() >= 2) t = ops::transpose(t, 0, static_cast<int64_t>(sizes.size()) - 1);
  if (layout == 1 && !sizes.empty()) t = ops::slice(t, 0, 0, std::nullopt, 2);
  return t;
}

// random_tensor: a tensor of the call's shape and dtype most of the time.
inline Tensor random_tensor(Rng& rng, const CallShape& call) {
  const bool same = chance(rng, 70);
  const std::vector<int64_t> sizes = same ? call.sizes : random_sizes(rng);
  return make_tensor(rng, sizes, same || chance(rng, 50) ? call.dtype : kDTypes[pick(rng, 7)]);
}

inline int64_t random_int(Rng& rng) {
  if (chance(rng, 3)) return chance(rng, 50) ? std::numeric_limits<int64_t>::max() : int64_t{1} << 40;
  return pick(rng, 9) - 3;
}
inline double random_float(Rng& rng) {
  if (chance(rng, 3)) {
    const double special[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), 1e300};
    return special[pick(rng, 4)];
  }
  return (pick(rng, 13) - 4) * 0.25;
}
// random_int_list: windows' geometry (kernel_size, stride, padding, ...)
// mostly in range, other lists often the call's shape (sizes, views).
inline std::vector<int64_t> random_int_list(Rng& rng, const CallShape& call, const Argument& arg) {
  const bool window = arg.name == "kernel_size" || arg.name == "stride" || arg.name == "dilation" ||
                      arg.name == "padding" || arg.name == "output_size" || arg.name == "output_padding";
  std::vector<int64_t> l(arg.type.list_size > 0 ? arg.type.list_size : window ? 2 : pick(rng, 4));
  if (window && chance(rng, 80)) {
    for (int64_t& v : l) v = pick(rng, 2) + (arg.name == "padding" || arg.name == "output_padding" ? 0 : 1);
    return l;
  }
  if (arg.type.list_size == 0 && chance(rng, 40)) return call.sizes;
  for (int64_t& v : l) v = random_int(rng);
  return l;
}

// random_index: an i64 index tensor (index, indices, target) mostly in range.
inline Tensor random_index(Rng& rng, const CallShape& call) {
  std::vector<int64_t> sizes = chance(rng, 50) ? call.sizes : std::vector<int64_t>{1 + pick(rng, 4)};
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  std::vector<double> values(n);
  for (double& v : values) v = chance(rng, 5) ? pick(rng, 9) - 4 : pick(rng, 2);
  return ops::tensor(std::move(values), sizes, DType::kInt64);
}

inline const char* const kStrings[] = {"none", "tanh", "sum", "mean", "amax", "amin", "prod", "trunc", "floor", "bad"};

// random_value: one argument of the given type (a list, an optional, a base type).
inline Value random_value(Rng& rng, const CallShape& call, const Argument& arg) {
  const ArgType& type = arg.type;
  if (type.is_optional && chance(rng, 25)) return std::nullopt;
  if (type.is_list) {
    switch (type.kind) {
      case TypeKind::kInt: return random_int_list(rng, call, arg);
      case TypeKind::kFloat: {
        std::vector<double> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (double& v : l) v = random_float(rng);
        return l;
      }
      case TypeKind::kBool: {
        std::vector<bool> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (size_t i = 0; i < l.size(); ++i) l[i] = chance(rng, 50);
        return l;
      }
      default: {  // Tensor[], Tensor?[]
        std::vector<Tensor> l(1 + pick(rng, 3));
        for (Tensor& t : l) t = random_tensor(rng, call);
        return l;
      }
    }
  }
  switch (type.kind) {
    case TypeKind::kTensor:
      if ((arg.name == "index" || arg.name == "indices" || arg.name == "target") && chance(rng, 80)) {
        return random_index(rng, call);
      }
      return random_tensor(rng, call);
    case TypeKind::kScalar: {
      const int k = pick(rng, 3);
      return k == 0 ? Value(random_int(rng)) : k == 1 ? Value(random_float(rng)) : Value(chance(rng, 50));
    }
    case TypeKind::kInt: return random_int(rng);
    case TypeKind::kFloat: return random_float(rng);
    case TypeKind::kBool: return chance(rng, 50);
    case TypeKind::kString: return kStrings[pick(rng, 10)];
    case TypeKind::kScalarType: return kDTypes[pick(rng, 7)];
    case TypeKind::kDevice: return chance(rng, 90) ? Device(kCPU) : Device(DeviceType::kCUDA, 0);
    default: return std::nullopt;  // layout, memory format, generator: their defaults
  }
}

// Outcome: how one call ended.
struct Outcome {
  enum Kind { kOk, kError, kForeign } kind = kOk;
  std::string message;
  Stack results;
};

inline Outcome run(const OperatorHandle& op, Stack stack) {
  Outcome o;
  try {
    op.call_boxed(stack);
    o.results = std::move(stack);
  } catch (const Error& e) {
    o.kind = Outcome::kError;
    o.message = e.what();
  } catch (const std::exception& e) {
    o.kind = Outcome::kForeign;
    o.message = std::string("std::exception: ") + e.what();
  } catch (...) {
    o.kind = Outcome::kForeign;
    o.message = "an exception of unknown type";
  }
  return o;
}

inline std::string describe(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return "undefined";
    return std::string(dtype_short_name(t.dtype())) + format_sizes(t.sizes());
  }
  if (v.is_tensor_list()) {
    std::string s = "[";
    for (const Tensor& t : v.to_tensor_list()) s += describe(Value(t)) + ", ";
    return s + "]";
  }
  return v.repr();
}
inline std::string describe_call(const OperatorHandle& op, const Stack& args) {
  std::string s = op.schema().qualified_name() + "(";
  for (const Value& v : args) s += describe(v) + ", ";
  return s + ")";
}

// significant_strides: t's strides where they matter, as PyTorch's
// check_significant_strides compares them: dims of size 1 and empty tensors
// have any stride, so "*" stands there. The storage offset too (views).
inline std::string significant_strides(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return "";
  std::string s = "strides (";
  for (int64_t d = 0; d < t.dim(); ++d) s += (t.sizes()[d] > 1 ? std::to_string(t.strides()[d]) : "*") + ",";
  return s + ") offset " + std::to_string(t.storage_offset());
}
inline std::vector<Tensor> tensors_of(const Value& v) {
  if (v.is_tensor()) return {v.to_tensor()};
  if (v.is_tensor_list()) return v.to_tensor_list();
  return {};
}

// op_selected: OPSPEC_CROSSREF_OP, when set, names the one op the sweeps
// call (to bisect a sanitizer report or a crash to an op).
inline bool op_selected(const std::string& name) {
  const char* only = std::getenv("OPSPEC_CROSSREF_OP");
  return only == nullptr || name == only;
}

inline int seeds_per_op() {
  const char* env = std::getenv("OPSPEC_CROSSREF_SEEDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 64;
}

// values_unspecified: ops whose results' values two runs need not share
// (uninitialised memory, random draws whose order is the kernel's).
inline bool values_unspecified(std::string_view name) {
  for (std::string_view part : {"empty", "rand", "bernoulli", "dropout", "uniform_", "normal_"}) {
    if (name.find(part) != std::string_view::npos) return true;
  }
  return false;
}

// crossref_tolerance: a few units in the last place of dtype, times 16 for
// the small sums the calls make (their inputs lie within [-3, 3]).
inline double crossref_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 16 * 1e-14;
    case DType::kFloat16: return 16 * 2e-3;
    case DType::kBFloat16: return 16 * 1.6e-2;
    default: return 16 * 2e-6;
  }
}

// value_mismatch: "" when got (on any device) has want's dtype, sizes and,
// when compare_values, its values: integers and bools exactly, floats to
// crossref_tolerance of max(4, |want|), NaN where want has NaN (results
// past 2^20 elements by dtype and sizes only); else the first difference.
inline std::string value_mismatch(const Tensor& got, const Tensor& want, bool compare_values) {
  if (got.defined() != want.defined()) return "defined in one run only";
  if (!want.defined()) return "";
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes()) {
    return "got " + describe(Value(got)) + ", want " + describe(Value(want));
  }
  // Huge results are broadcasting views (sizes near 2^40 of stride 0): too big to read element by element.
  if (!compare_values || want.numel() > (int64_t{1} << 20)) return "";
  const std::vector<double> g = ops::to(got, kCPU).to_vector<double>(), w = ops::to(want, kCPU).to_vector<double>();
  const double rtol = is_floating(want.dtype()) ? crossref_tolerance(want.dtype()) : 0.0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (same || std::abs(g[i] - w[i]) <= rtol * std::max(4.0, std::abs(w[i]))) continue;
    return "element " + std::to_string(i) + ": got " + std::to_string(g[i]) + ", want " + std::to_string(w[i]);
  }
  return "";
}

// result_mismatch: the first difference between two runs' results.
inline std::string result_mismatch(const Stack& got, const Stack& want, bool compare_values) {
  if (got.size() != want.size()) return "a different number of results";
  for (size_t i = 0; i < want.size(); ++i) {
    const std::vector<Tensor> g = tensors_of(got[i]), w = tensors_of(want[i]);
    if (g.size() != w.size()) return "result " + std::to_string(i) + ": lists of different lengths";
    for (size_t j = 0; j < w.size(); ++j) {
      if (const std::string m = value_mismatch(g[j], w[j], compare_values); !m.empty()) {
        return "result " + std::to_string(i) + ": " + m;
      }
    }
    if (w.empty() && compare_values && got[i].repr() != want[i].repr()) {
      return "result " + std::to_string(i) + ": got " + got[i].repr() + ", want " + want[i].repr();
    }
  }
  return "";
}

}  // namespace opspec::op_crossref_test
