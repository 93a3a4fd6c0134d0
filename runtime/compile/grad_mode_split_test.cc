// Grad mode inside a compiled function (See Note [Grad mode splits a graph]):
// ops under no_grad or enable_grad give what they give eagerly (history,
// gradients), on every backend, cold and warm, replayed and under trace_once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "runtime/autograd/grad_mode.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/export.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace grad_mode_split_test {

// no_grad_block: a = 2x; b = sin(a) under no_grad; returns (a, b, b + a).
std::vector<Tensor> no_grad_block(const std::vector<Tensor>& in) {
  const Tensor a = ops::mul(in[0], 2.0);
  Tensor b;
  {
    autograd::NoGradGuard no_grad;
    b = ops::sin(a);
  }
  return {a, b, ops::add(b, a)};
}

Tensor leaf() {
  Tensor x = ops::div(ops::arange(4.0), 3.0);
  x.requires_grad_();
  return x;
}

TEST(GradModeSplit, ANoGradBlockHasNoHistoryAndNoGradient) {
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    for (bool trace_once : {false, true}) {
      SCOPED_TRACE(testing::Message() << backend << (trace_once ? " trace_once" : ""));
      CompiledFunction f(&no_grad_block, {.backend = backend, .trace_once = trace_once});
      for (int call = 0; call < 3; ++call) {  // cold, replayed (or a plan), and again
        Tensor x = leaf();
        const std::vector<Tensor> out = f({x});
        EXPECT_TRUE(out[0].requires_grad());
        EXPECT_FALSE(out[1].requires_grad()) << "call " << call;
        EXPECT_TRUE(out[2].requires_grad());
        ops::sum(out[2]).backward();
        // d(sin(2x) + 2x)/dx with sin(2x) constant: 2 everywhere.
        EXPECT_EQ(x.grad().to_vector<double>(), std::vector<double>(4, 2.0)) << "call " << call;
      }
      // Three graphs a call (before, inside and after the block), no break.
      EXPECT_EQ(f.stats().graphs_run, 9);
      EXPECT_TRUE(f.stats().breaks.empty());
    }
  }
}

// enable_grad inside a function called under no_grad: the block's results
// have history, the rest none, as eagerly.
TEST(GradModeSplit, AnEnableGradBlockUnderNoGradRecordsHistory) {
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor a = ops::mul(in[0], 2.0);
    Tensor b;
    {
      autograd::EnableGradGuard enable_grad;
      b = ops::exp(in[0]);
    }
    return std::vector<Tensor>{a, b};
  };
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    CompiledFunction f(fn, {.backend = backend, .trace_once = true});
    for (bool outer_grad : {false, true, false}) {
      autograd::AutoGradMode mode(outer_grad);
      Tensor x = leaf();
      const std::vector<Tensor> eager = fn({x});
      const std::vector<Tensor> out = f({x});
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].requires_grad(), eager[i].requires_grad()) << "outer grad " << outer_grad << ", out " << i;
      }
      EXPECT_TRUE(out[1].requires_grad());
      EXPECT_EQ(out[0].requires_grad(), outer_grad);
    }
  }
}

// A function whose ops all run under no_grad: one graph, run under no_grad
// even when the flush that runs it happens after the block ended.
TEST(GradModeSplit, AGraphRunsUnderItsOwnModeAfterTheBlockEnds) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor y;
    {
      autograd::NoGradGuard no_grad;
      y = ops::tanh(ops::mul(in[0], 3.0));
    }
    return std::vector<Tensor>{y};
  };
  CompiledFunction f(fn, {.backend = "aot_eager"});
  Tensor x = leaf();
  EXPECT_FALSE(f({x})[0].requires_grad());
  EXPECT_EQ(f.stats().graphs_run, 1);
  EXPECT_TRUE(autograd::is_grad_enabled());
}

// Export refuses a grad mode change rather than dropping it (its trace is
// one graph); make_fx below Autograd traces the forward ops, the mode only
// deciding what autograd records.
TEST(GradModeSplit, ExportRefusesAGradModeChange) {
  Tensor x = leaf();
  EXPECT_THAT([&] { export_program(&no_grad_block, {.name = "f"})({x}); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr(
                  "export(f) needs one graph: the grad mode changes inside the program (a no_grad or enable_grad block)")));
  const Graph g = make_fx(&no_grad_block)({x});
  EXPECT_THAT(g.str(), ::testing::HasSubstr("aten::sin"));
}

}  // namespace grad_mode_split_test
}  // namespace opspec
