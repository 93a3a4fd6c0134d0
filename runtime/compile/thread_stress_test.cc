// Compiled functions called from eight threads at once with changing shapes,
// on every backend, with a graph break, dynamic dims and recompiles: results
// equal eager bit for bit. ci/sanitize runs it under TSan (Note [Sanitizers]
// in ci/sanitize), where it is the test that finds races if there are any.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/guards.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace thread_stress_test {

constexpr int kThreads = 8;
constexpr int kCallsPerThread = 60;

Tensor chain(const Tensor& x, const Tensor& w) {
  const Tensor h = ops::relu(ops::mm(x, w));
  return ops::add(ops::mul(h, 0.5), ops::tanh(h));
}

Tensor with_break(const Tensor& x, const Tensor& w) {
  const Tensor h = ops::sigmoid(ops::mm(x, w));
  graph_break();
  return ops::sum(ops::mul(h, h), std::vector<int64_t>{1});
}

TEST(CompileStress, EightThreadsWithChangingShapesMatchEager) {
  const Tensor w = ops::full({6, 4}, 0.125);
  const std::vector<CompiledFunction> fns = {
      compile(&chain, {.backend = "eager"}), compile(&chain, {.backend = "aot_eager"}),
      compile(&chain, {.backend = "fused"}), compile(&with_break, {.backend = "fused"})};
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        try {
          const int64_t rows = 1 + (t * 7 + i) % 5;  // five shapes: recompiles, then cache hits
          Tensor x = ops::add(ops::full({rows, 6}, 0.01 * (t + 1)), ops::view(ops::arange(static_cast<double>(rows * 6)), {rows, 6}));
          if (i % 11 == 0) mark_dynamic(x, 0);
          const size_t f = static_cast<size_t>(t + i) % fns.size();
          const Tensor expected = f == 3 ? with_break(x, w) : chain(x, w);
          const Tensor got = fns[f](x, w)[0];
          if (got.sizes() != expected.sizes() || got.to_vector<float>() != expected.to_vector<float>()) ++mismatches;
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  int calls = 0;
  for (const CompiledFunction& f : fns) calls += f.stats().calls;
  EXPECT_EQ(calls, kThreads * kCallsPerThread);
}

}  // namespace
}  // namespace opspec
