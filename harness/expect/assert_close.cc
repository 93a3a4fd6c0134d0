// assert_close.cc: torch.testing.assert_close semantics over opspec tensors.
// Values are read straight from storage (no op is dispatched), so modes and
// the compiler's capture never see the comparison.
#include "harness/expect/assert_close.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>

#include "harness/tensor_hash.h"
#include "runtime/core/scalar.h"

namespace opspec {
namespace {

// for_each_pair: calls fn(linear_index, actual's element, expected's element)
// for two tensors of one shape, walking both strides at once: no per-element
// buffer (a pointer array per element doubled the memory of a large compare).
template <class Fn>
void for_each_pair(const Tensor& a, const Tensor& b, Fn&& fn) {
  const auto base = [](const Tensor& t) {
    return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "assert_close", [&] {
      return reinterpret_cast<const char*>(t.data_ptr<scalar_t>());
    });
  };
  const char* pa = base(a);
  const char* pb = base(b);
  const int64_t n = a.numel(), nd = a.dim(), ea = a.element_size(), eb = b.element_size();
  SizeVec idx(static_cast<size_t>(nd), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, pa + oa * ea, pb + ob * eb);
    for (int64_t d = nd - 1; d >= 0; --d) {
      oa += a.strides()[d];
      ob += b.strides()[d];
      if (++idx[d] < a.sizes()[d]) break;
      oa -= idx[d] * a.strides()[d];
      ob -= idx[d] * b.strides()[d];
      idx[d] = 0;
    }
  }
}

double load_double(DType dt, const char* p) {
  switch (dt) {
    case DType::kFloat32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::kFloat64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::kFloat16: { Half v; std::memcpy(&v, p, 2); return static_cast<float>(v); }
    case DType::kBFloat16: { BFloat16 v; std::memcpy(&v, p, 2); return static_cast<float>(v); }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kBool: { bool v; std::memcpy(&v, p, 1); return v ? 1.0 : 0.0; }
  }
  return 0;
}

int64_t load_int(DType dt, const char* p) {
  switch (dt) {
    case DType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kBool: { bool v; std::memcpy(&v, p, 1); return v ? 1 : 0; }
    default: return static_cast<int64_t>(load_double(dt, p));
  }
}

// round_to: v rounded to dtype's precision, as PyTorch computes the
// differences it reports in the compared dtype.
double round_to(DType dt, double v) {
  switch (dt) {
    case DType::kFloat32: return static_cast<float>(v);
    case DType::kFloat16: return static_cast<float>(Half(static_cast<float>(v)));
    case DType::kBFloat16: return static_cast<float>(BFloat16(static_cast<float>(v)));
    default: return v;
  }
}

// index_str: a linear index unravelled over sizes, as a Python tuple: "(1, 2)", "(3,)", "()".
std::string index_str(int64_t linear, IntArrayRef sizes) {
  SizeVec idx(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    const int64_t sz = sizes[d] == 0 ? 1 : sizes[d];
    idx[d] = linear % sz;
    linear /= sz;
  }
  std::string out = "(";
  for (size_t d = 0; d < idx.size(); ++d) str_append(&out, d ? ", " : "", idx[d]);
  if (idx.size() == 1) out += ',';
  out += ')';
  return out;
}

std::string mismatch_count(int64_t mismatches, int64_t n) {
  // Python's f"{x:.1%}": the float ratio times 100, fixed with one decimal.
  const double ratio = static_cast<double>(mismatches) / static_cast<double>(n);
  char pct[64];
  std::snprintf(pct, sizeof(pct), "%.1f%%", ratio * 100.0);
  return str_cat("Mismatched elements: ", mismatches, " / ", n, " (", pct, ")");
}

// shortest: the shortest decimal text of an element that reads back to the
// same value in its dtype ("1.0000001", "1", "-0", "nan").
std::string element_text(DType dt, const char* p) {
  char buf[64];
  switch (dt) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const float v = static_cast<float>(load_double(dt, p));
      if (!std::isfinite(v)) return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      for (int prec = 1; prec <= 9; ++prec) {
        std::snprintf(buf, sizeof(buf), "%.*g", prec, static_cast<double>(v));
        const float back = std::strtof(buf, nullptr);
        const uint16_t back_bits = dt == DType::kFloat16 ? Half(back).bits : BFloat16(back).bits;
        if (back_bits == bits) return buf;
      }
      return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    }
    case DType::kInt64:
    case DType::kInt32: return str_cat(load_int(dt, p));
    case DType::kBool: return load_int(dt, p) ? "True" : "False";
  }
  return "?";
}

std::string bits_text(DType dt, const char* p) {
  const int64_t n = element_size(dt);
  uint64_t bits = 0;
  std::memcpy(&bits, p, static_cast<size_t>(n));  // little-endian hosts
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(2 * n), static_cast<unsigned long long>(bits));
  return buf;
}

std::string attribute_mismatch(std::string_view attr, const std::string& a, const std::string& e) {
  return str_cat("The values for attribute '", attr, "' do not match: ", a, " != ", e, ".");
}

CheckResult compare_bitwise(const Tensor& actual, const Tensor& expected) {
  const DType dt = actual.dtype();
  const size_t es = static_cast<size_t>(actual.element_size());
  int64_t mismatches = 0, first = -1;
  const char* first_a = nullptr;
  const char* first_e = nullptr;
  for_each_pair(actual, expected, [&](int64_t i, const char* a, const char* p) {
    if (std::memcmp(a, p, es) == 0) return;
    if (mismatches++ == 0) first = i, first_a = a, first_e = p;
  });
  if (mismatches == 0) return CheckResult::pass();
  return CheckResult::fail(str_cat("Tensors are not bitwise equal!\n\n", mismatch_count(mismatches, actual.numel()),
                                   "\nFirst mismatch at index ", index_str(first, actual.sizes()), ": ",
                                   element_text(dt, first_a), " vs ", element_text(dt, first_e), " (bits ",
                                   bits_text(dt, first_a), " vs ", bits_text(dt, first_e), ")"));
}

// Argmax: torch.max over a 1-D tensor: the first greatest value, NaN winning.
struct Argmax {
  double value = 0;
  int64_t index = -1;
  void add(double v, int64_t i) {
    if (index < 0 || (!std::isnan(value) && (std::isnan(v) || v > value))) value = v, index = i;
  }
};

std::string diff_line(std::string_view type, const std::string& diff, const std::string& idx, double tol) {
  std::string out = str_cat("Greatest ", type, " difference: ", diff, " at index ", idx);
  if (tol > 0) str_append(&out, " (up to ", format_double(tol), " allowed)");
  return out;
}

CheckResult compare_values(const Tensor& actual, const Tensor& expected, Tolerances tol, bool equal_nan) {
  const DType adt = actual.dtype(), edt = expected.dtype();
  const DType dt = adt == edt ? adt : promote_types(adt, edt);
  const int64_t n = actual.numel();
  const bool integral = !is_floating(dt);
  const bool equality = tol.rtol == 0 && tol.atol == 0;

  int64_t mismatches = 0;
  Argmax max_abs, max_rel;
  const char* max_abs_a = nullptr;  // actual's and expected's elements at max_abs.index
  const char* max_abs_e = nullptr;
  for_each_pair(actual, expected, [&](int64_t i, const char* ap, const char* ep) {
    if (i == 0) max_abs_a = ap, max_abs_e = ep;
    bool close;
    double abs_diff = 0, rel_diff = 0;
    if (integral) {
      // Integers (PyTorch upcasts to int64): the relative difference is an
      // f32, as torch's int64 / int64 true division gives.
      const int64_t a = load_int(adt, ap), e = load_int(edt, ep);
      close = a == e;
      // |a - e| as uint64_t is exact for any two int64 values (modular arithmetic).
      const uint64_t d = a > e ? static_cast<uint64_t>(a) - static_cast<uint64_t>(e)
                               : static_cast<uint64_t>(e) - static_cast<uint64_t>(a);
      const double ad = static_cast<double>(d);
      if (!close && !equality) close = ad <= tol.atol + tol.rtol * std::abs(static_cast<double>(e));
      if (!close) {
        abs_diff = ad;
        rel_diff = static_cast<float>(ad) / std::abs(static_cast<float>(e));
      }
    } else {
      const double a = load_double(adt, ap), e = load_double(edt, ep);
      close = a == e || (equal_nan && std::isnan(a) && std::isnan(e));
      const double err = std::abs(a - e);
      if (!close && !equality) close = std::isfinite(err) && err <= tol.atol + tol.rtol * std::abs(e);
      if (!close) {
        abs_diff = round_to(dt, err);
        rel_diff = round_to(dt, abs_diff / std::abs(e));
      }
    }
    if (!close) ++mismatches;
    const int64_t before = max_abs.index;
    max_abs.add(abs_diff, i);
    if (max_abs.index != before) max_abs_a = ap, max_abs_e = ep;
    max_rel.add(rel_diff, i);
  });
  if (mismatches == 0) return CheckResult::pass();
  std::string abs_text;
  if (integral) {
    // Exact, even past 2^53.
    const int64_t a = load_int(adt, max_abs_a);
    const int64_t e = load_int(edt, max_abs_e);
    const uint64_t d = a > e ? static_cast<uint64_t>(a) - static_cast<uint64_t>(e)
                             : static_cast<uint64_t>(e) - static_cast<uint64_t>(a);
    abs_text = str_cat(d);
  } else {
    abs_text = format_double(max_abs.value);
  }
  return CheckResult::fail(str_cat("Tensor-likes are not ", equality ? "equal" : "close", "!\n\n",
                                   mismatch_count(mismatches, n), "\n",
                                   diff_line("absolute", abs_text, index_str(max_abs.index, actual.sizes()), tol.atol),
                                   "\n",
                                   diff_line("relative", format_double(max_rel.value),
                                             index_str(max_rel.index, actual.sizes()), tol.rtol)));
}

}  // namespace

Tolerances default_tolerances(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {1.3e-6, 1e-5};
    case DType::kFloat64: return {1e-7, 1e-7};
    case DType::kFloat16: return {1e-3, 1e-5};
    case DType::kBFloat16: return {1.6e-2, 1e-5};
    case DType::kInt64:
    case DType::kInt32:
    case DType::kBool: return {0, 0};
  }
  return {0, 0};
}

CheckResult assert_close(const Tensor& actual, const Tensor& expected, const CloseOptions& options) {
  if (options.rtol.has_value() != options.atol.has_value()) {
    throw Error(str_cat("assert_close: give both rtol and atol, or neither (got ",
                        options.rtol.has_value() ? "rtol" : "atol", " only)"));
  }
  if (!actual.defined() || !expected.defined()) {
    if (!actual.defined() && !expected.defined()) return CheckResult::pass();
    return CheckResult::fail(attribute_mismatch("defined", actual.defined() ? "True" : "False",
                                                expected.defined() ? "True" : "False"));
  }
  if (!std::equal(actual.sizes().begin(), actual.sizes().end(), expected.sizes().begin(), expected.sizes().end())) {
    return CheckResult::fail(attribute_mismatch("shape", format_sizes(actual.sizes()), format_sizes(expected.sizes())));
  }
  if (options.check_device && actual.device() != expected.device()) {
    return CheckResult::fail(attribute_mismatch("device", actual.device().str(), expected.device().str()));
  }
  if ((options.check_dtype || options.bitwise) && actual.dtype() != expected.dtype()) {
    return CheckResult::fail(attribute_mismatch("dtype", std::string(dtype_short_name(actual.dtype())),
                                                std::string(dtype_short_name(expected.dtype()))));
  }
  // Meta tensors have no values: only their metadata is compared, as in PyTorch.
  if (actual.device().is_meta() && expected.device().is_meta()) return CheckResult::pass();
  if (actual.numel() == 0) return CheckResult::pass();
  // Device tensors are compared on the host (copied without dispatching).
  const Tensor a = host_copy(actual), e = host_copy(expected);
  if (options.bitwise) return compare_bitwise(a, e);

  Tolerances tol;
  if (options.rtol.has_value()) {
    tol = {*options.rtol, *options.atol};
  } else {
    const Tolerances ta = default_tolerances(actual.dtype()), te = default_tolerances(expected.dtype());
    tol = {std::max(ta.rtol, te.rtol), std::max(ta.atol, te.atol)};
  }
  return compare_values(a, e, tol, options.equal_nan);
}

CheckResult assert_close(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
                         const CloseOptions& options) {
  if (options.rtol.has_value() != options.atol.has_value()) {
    throw Error(str_cat("assert_close: give both rtol and atol, or neither (got ",
                        options.rtol.has_value() ? "rtol" : "atol", " only)"));
  }
  if (actual.size() != expected.size()) {
    return CheckResult::fail(str_cat("The number of outputs does not match: ", actual.size(), " != ", expected.size(), "."));
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    CheckResult r = assert_close(actual[i], expected[i], options);
    if (!r.ok) return CheckResult::fail(str_cat("output ", i, ": ", r.message));
  }
  return CheckResult::pass();
}

}  // namespace opspec
