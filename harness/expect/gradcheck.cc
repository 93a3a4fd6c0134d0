// gradcheck.cc: gradcheck. See gradcheck.h.
#include "harness/expect/gradcheck.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "runtime/autograd/engine.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// Jacobian: rows x cols doubles, row-major (input elements x output elements).
struct Jacobian {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
};

// format_jacobian: PyTorch's printing of a 2-d f64 tensor, four decimals,
// at most 8 rows and 8 columns shown.
std::string format_jacobian(const Jacobian& j) {
  constexpr int64_t kMax = 8;
  std::string s = "tensor([";
  for (int64_t r = 0; r < j.rows; ++r) {
    if (r == kMax && j.rows > kMax + 1) {
      s += ",\n        ...";
      r = j.rows - 1;
    }
    if (r > 0) s += ",\n        ";
    s += "[";
    for (int64_t c = 0; c < j.cols; ++c) {
      if (c == kMax && j.cols > kMax + 1) {
        s += ", ...";
        c = j.cols - 1;
      }
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%s%.4f", c > 0 ? ", " : "", j.v[static_cast<size_t>(r * j.cols + c)]);
      s += buf;
    }
    s += "]";
  }
  return s + "], dtype=torch.float64)";
}

// to_f64: an f64 copy of t in t's layout (clone preserves it), made without
// recording history.
Tensor to_f64(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  return ops::clone(ops::to(t.detach(), DType::kFloat64, /*copy=*/true));
}

// flat_values: t's elements as doubles (t is any floating tensor on any device).
std::vector<double> flat_values(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  return ops::to(t.detach(), Device(DeviceType::kCPU)).to_vector<double>();
}

// element_offset: where logical element k (row-major order) of t lies from
// t's first element, in elements: a channels-last or otherwise strided input
// is perturbed element by element in the order outputs and gradients are read.
int64_t element_offset(const Tensor& t, int64_t k) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t size = t.size(d);
    offset += (k % size) * t.stride(d);
    k /= size;
  }
  return offset;
}

}  // namespace

CheckResult gradcheck(const TracedFunction& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  // f64 leaves: perturbing their cpu copies element by element needs host memory.
  std::vector<Tensor> x;
  std::vector<size_t> wrt;  // indices of inputs that require grad
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (!in.defined() || !is_floating(in.dtype())) {
      x.push_back(in);
      continue;
    }
    Tensor c = to_f64(ops::to(in.detach(), Device(DeviceType::kCPU)));
    if (in.requires_grad()) {
      c.requires_grad_();
      wrt.push_back(i);
    }
    x.push_back(c);
  }
  if (wrt.empty()) return CheckResult::fail("gradcheck: no input requires grad (give one requires_grad)");
  // Two runs of fn per element of every such input: bound the work, so a big
  // input is an error rather than an apparent hang.
  int64_t elements = 0;
  for (size_t j : wrt) elements += x[j].numel();
  if (elements > kGradcheckMaxElements) {
    return CheckResult::fail(str_cat("gradcheck: the inputs that require grad have ", elements,
                                     " elements; gradcheck runs the function twice per element, so it takes at most ",
                                     kGradcheckMaxElements, " (give smaller inputs)"));
  }

  std::vector<Tensor> out;
  try {
    out = fn(x);
  } catch (const Error& e) {
    return CheckResult::fail(str_cat("gradcheck: the function failed: ", e.what()));
  }
  for (size_t j : wrt) {
    if (x[j].grad().defined()) {
      return CheckResult::fail(
          "gradcheck: the function calls backward() (an input's .grad was set); gradcheck differentiates the "
          "function's outputs itself, so return them instead");
    }
  }
  std::vector<size_t> outs;  // floating outputs
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].defined() && is_floating(out[i].dtype())) outs.push_back(i);
  }
  if (outs.empty()) return CheckResult::fail("gradcheck: the function returned no floating-point tensor");

  for (size_t oi : outs) {
    const Tensor& y = out[oi];
    const int64_t m = y.numel();
    for (size_t j : wrt) {
      const int64_t n = x[j].numel();
      Jacobian num{n, m, std::vector<double>(static_cast<size_t>(n * m))};
      Jacobian ana = num;
      // Numerical: central differences, one input element at a time.
      {
        autograd::NoGradGuard no_grad;
        auto* data = static_cast<double*>(x[j].raw_data());
        for (int64_t k = 0; k < n; ++k) {
          double& element = data[element_offset(x[j], k)];
          const double orig = element;
          element = orig + o.eps;
          const std::vector<double> plus = flat_values(fn(x)[oi]);
          element = orig - o.eps;
          const std::vector<double> minus = flat_values(fn(x)[oi]);
          element = orig;
          for (int64_t c = 0; c < m; ++c) {
            num.at(k, c) = (plus[static_cast<size_t>(c)] - minus[static_cast<size_t>(c)]) / (2 * o.eps);
          }
        }
      }
      // Analytical: one vector-Jacobian product per output element.
      if (y.requires_grad()) {
        for (int64_t c = 0; c < m; ++c) {
          Tensor seed = ops::zeros(y.sizes(), {.dtype = y.dtype(), .device = y.device()});
          {
            autograd::NoGradGuard no_grad;
            Tensor flat = ops::view(seed, {-1});
            Tensor one = ops::select(flat, 0, c);
            ops::fill_(one, 1);
          }
          std::vector<Tensor> g;
          try {
            g = autograd::grad({y}, {x[j]}, {seed}, /*retain_graph=*/true, /*create_graph=*/false,
                               /*allow_unused=*/true);
          } catch (const Error& e) {
            return CheckResult::fail(str_cat("gradcheck: backward of output ", oi, " failed: ", e.what()));
          }
          if (!g[0].defined()) continue;  // unused: a zero column
          const std::vector<double> col = flat_values(g[0]);
          for (int64_t k = 0; k < n; ++k) ana.at(k, c) = col[static_cast<size_t>(k)];
        }
      }
      for (size_t e = 0; e < num.v.size(); ++e) {
        const double a = ana.v[e], nv = num.v[e];
        if (!(std::fabs(a - nv) <= o.atol + o.rtol * std::fabs(nv))) {
          return CheckResult::fail(str_cat("Jacobian mismatch for output ", oi, " with respect to input ", j,
                                           ",\nnumerical:", format_jacobian(num), "\nanalytical:",
                                           format_jacobian(ana), "\n"));
        }
      }
    }
  }
  return CheckResult::pass();
}

}  // namespace opspec
