// autograd_test_util.h: what the autograd tests share: deterministic f64
// leaves, a recording mode, the backward op sequence of a tensor and
// central-difference gradients.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/autograd/engine.h"
#include "runtime/autograd/node.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"
#include "runtime/dispatch/op_names_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd_test {

// random: values in [0.5, 1.5) (positive: log, sqrt, rsqrt are defined), from seed.
inline Tensor random(IntArrayRef shape, uint32_t seed, DType dtype = DType::kFloat64) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  std::vector<double> v(static_cast<size_t>(compute_numel(shape)));
  for (double& x : v) x = dist(gen);
  return ops::tensor(v, shape, dtype);
}

// leaf: random(shape, seed) as a leaf that requires grad.
inline Tensor leaf(IntArrayRef shape, uint32_t seed) {
  Tensor t = random(shape, seed);
  t.requires_grad_();
  return t;
}

// Recorder: the ops a scope dispatches, by name.
using Recorder = test_util::OpNames;

// backward_ops: the ops backward() of out dispatches, aten::detach left out
// (its placement differs between PyTorch versions); detaches counts them.
inline std::vector<std::string> backward_ops(const Tensor& out, int* detaches = nullptr) {
  Recorder r;
  {
    ModeGuard g(r);
    out.backward();
  }
  std::vector<std::string> kept;
  for (const std::string& n : r.names) {
    if (n == "aten::detach") {
      if (detaches != nullptr) ++*detaches;
    } else {
      kept.push_back(n);
    }
  }
  return kept;
}

// numeric_grad: d sum(f(x) * probe) / dx by central differences in f64.
inline std::vector<double> numeric_grad(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                        const std::vector<Tensor>& inputs, size_t which, const Tensor& probe) {
  autograd::NoGradGuard no_grad;
  const double eps = 1e-6;
  const Tensor x = inputs[which];
  std::vector<double> base = x.to_vector<double>();
  std::vector<double> out(base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    auto eval = [&](double v) {
      std::vector<double> moved = base;
      moved[i] = v;
      std::vector<Tensor> in = inputs;
      in[which] = ops::tensor(moved, x.sizes(), DType::kFloat64);
      return ops::sum(ops::mul(f(in), probe)).item<double>();
    };
    out[i] = (eval(base[i] + eps) - eval(base[i] - eps)) / (2 * eps);
  }
  return out;
}

// SequenceCase: an op under test and the ops backward of sum(f(leaves)) dispatches after
// sum's own (aten::ones_like, aten::expand), without the "aten::" prefix.
struct SequenceCase {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;
  std::function<Tensor(const std::vector<Tensor>&)> f;
  std::vector<std::string> ops;
};

// expect_backward_sequences: each case's backward op sequence (fresh leaves, seeds from 50).
inline void expect_backward_sequences(const std::vector<SequenceCase>& cases) {
  for (const SequenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i) inputs.push_back(leaf(c.shapes[i], static_cast<uint32_t>(50 + i)));
    std::vector<std::string> want = {"aten::ones_like", "aten::expand"};
    for (const std::string& op : c.ops) want.push_back("aten::" + op);
    EXPECT_EQ(backward_ops(ops::sum(c.f(inputs))), want);
  }
}

// GradCase: an op under test: leaves of these shapes, the function, the grad_fn name.
struct GradCase {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;
  std::function<Tensor(const std::vector<Tensor>&)> f;
  std::string grad_fn;
};

// expect_grads_match_central_differences: each case's grad_fn name, and its
// backward of sum(f * probe) against numeric_grad, input by input (within tol).
inline void expect_grads_match_central_differences(const std::vector<GradCase>& cases, double tol = 1e-6) {
  for (const GradCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i) inputs.push_back(leaf(c.shapes[i], static_cast<uint32_t>(20 + i)));
    const Tensor out = c.f(inputs);
    ASSERT_NE(out.grad_fn(), nullptr);
    EXPECT_EQ(out.grad_fn()->name(), c.grad_fn);
    const Tensor probe = random(out.sizes(), 99);
    autograd::backward({out}, {probe});
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<double> want = numeric_grad(c.f, inputs, i, probe);
      ASSERT_TRUE(inputs[i].grad().defined()) << "input " << i;
      const std::vector<double> got = inputs[i].grad().to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], want[j], tol) << "input " << i << " element " << j;
    }
  }
}

// expect_second_derivatives_match: the double backward of f: x's gradient of
// sum(first(x) * v), first(x) = d sum(f(x) * w) / dx taken with create_graph,
// against central differences of first, at a leaf of w's shape (seeded).
inline void expect_second_derivatives_match(const std::function<Tensor(const Tensor&)>& f, const Tensor& w,
                                            const Tensor& v, uint32_t seed, double tol = 1e-6) {
  auto first = [&](const Tensor& x) {
    return autograd::grad({ops::sum(ops::mul(f(x), w))}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  };
  const Tensor x = leaf(w.sizes(), seed);
  const Tensor g = first(x);
  ASSERT_TRUE(g.requires_grad());
  const Tensor gg = autograd::grad({ops::sum(ops::mul(g, v))}, {x})[0];
  const std::vector<double> base = x.to_vector<double>(), got = gg.to_vector<double>();
  for (size_t i = 0; i < base.size(); ++i) {
    auto eval = [&](double d) {
      std::vector<double> moved = base;
      moved[i] += d;
      Tensor xi = ops::tensor(moved, w.sizes(), DType::kFloat64);
      xi.requires_grad_();
      const Tensor gi = first(xi);
      autograd::NoGradGuard no_grad;
      return ops::sum(ops::mul(gi, v)).item<double>();
    };
    EXPECT_NEAR(got[i], (eval(1e-6) - eval(-1e-6)) / 2e-6, tol) << i;
  }
}

}  // namespace opspec::autograd_test
