// Grad mode inside a traced or compiled function (See Note [Grad mode nodes]):
// one graph with _set_grad_enabled nodes; ops under no_grad or enable_grad
// give what they give eagerly (history, gradients) on every backend, cold and
// warm, replayed and under trace_once; make_fx(pre_dispatch) and export
// record the nodes too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "runtime/compile/compile.h"
#include "runtime/compile/export.h"
#include "runtime/core/grad_mode.h"
#include "runtime/graph/interpreter.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace grad_mode_nodes_test {

using ::testing::HasSubstr;
using ::testing::Not;

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

// count: how many times needle occurs in text.
int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(GradModeNodes, ANoGradBlockIsPartOfOneGraphAndHasNoHistoryOrGradient) {
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
        EXPECT_TRUE(autograd::is_grad_enabled());
      }
      // One graph a call, no break, as Dynamo.
      const CompileStats stats = f.stats();
      EXPECT_EQ(stats.graphs_run, 3);
      EXPECT_EQ(stats.traced_calls, trace_once ? 2 : 0);
      EXPECT_TRUE(stats.breaks.empty());
      ASSERT_EQ(stats.graphs.size(), 1u);
      const std::string& g = stats.graphs[0];
      EXPECT_THAT(g, HasSubstr("%mul = aten::mul.Tensor(%x0, 2.0) : f32[4]\n%_set_grad_enabled = "));
      EXPECT_THAT(g, HasSubstr("%_set_grad_enabled = torch._C::_set_grad_enabled(False) : ()\n%sin = aten::sin"));
      EXPECT_THAT(g, HasSubstr("%_set_grad_enabled_1 = torch._C::_set_grad_enabled(True) : ()\n%add = aten::add"));
      // The joint graph differentiates the ops outside the block only.
      ASSERT_FALSE(stats.aot_graphs.empty());
      EXPECT_THAT(stats.aot_graphs[0], Not(HasSubstr("aten::cos")));
    }
  }
}

// enable_grad inside a function called under no_grad: the block's results
// have history, the rest none, as eagerly.
TEST(GradModeNodes, AnEnableGradBlockUnderNoGradRecordsHistory) {
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor a = ops::mul(in[0], 2.0);
    Tensor b;
    {
      autograd::EnableGradGuard enable_grad;
      b = ops::exp(in[0]);
    }
    return std::vector<Tensor>{a, b, ops::add(a, 1.0)};
  };
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    for (bool trace_once : {false, true}) {
      SCOPED_TRACE(testing::Message() << backend << (trace_once ? " trace_once" : ""));
      CompiledFunction f(fn, {.backend = backend, .trace_once = trace_once});
      for (bool outer_grad : {false, true, false, true, false}) {
        autograd::AutoGradMode mode(outer_grad);
        Tensor x = leaf();
        const std::vector<Tensor> eager = fn({x});
        const std::vector<Tensor> out = f({x});
        for (size_t i = 0; i < out.size(); ++i) {
          EXPECT_EQ(out[i].requires_grad(), eager[i].requires_grad()) << "outer grad " << outer_grad << ", out " << i;
        }
        EXPECT_TRUE(out[1].requires_grad());
        EXPECT_EQ(out[0].requires_grad(), outer_grad);
        {
          autograd::EnableGradGuard grad;
          ops::sum(out[1]).backward();
        }
        EXPECT_EQ(x.grad().to_vector<float>(), ops::exp(x.detach()).to_vector<float>());
        EXPECT_EQ(autograd::is_grad_enabled(), outer_grad);
      }
      // Entered under no_grad the block is a change (a node); under grad it is none.
      EXPECT_TRUE(f.stats().breaks.empty());
      EXPECT_EQ(f.stats().compiles, 2);
    }
  }
}

// A function whose ops all run under no_grad: Dynamo's graph, the block's
// change and its restore around the ops; called under no_grad, no node.
TEST(GradModeNodes, ABlockAroundEveryOpIsEnteredAndRestored) {
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
  EXPECT_EQ(f.stats().graphs[0],
            "%_set_grad_enabled = torch._C::_set_grad_enabled(False) : ()\n"
            "%x0 = placeholder : f32[4]\n"
            "%mul = aten::mul.Tensor(%x0, 3.0) : f32[4]\n"
            "%tanh = aten::tanh(%mul) : f32[4]\n"
            "%_set_grad_enabled_1 = torch._C::_set_grad_enabled(True) : ()\n"
            "return %tanh\n");
  EXPECT_TRUE(autograd::is_grad_enabled());
  EXPECT_FALSE(f({leaf()})[0].requires_grad());  // replayed
  {
    autograd::NoGradGuard no_grad;
    EXPECT_FALSE(f({leaf()})[0].requires_grad());
  }
  ASSERT_EQ(f.stats().graphs.size(), 2u);
  EXPECT_THAT(f.stats().graphs[1], Not(HasSubstr("_set_grad_enabled")));
  EXPECT_EQ(f.stats().graphs_run, 3);
}

// An optimizer step inside a compiled function: a parameter that requires
// grad written in place under no_grad, after an op that used it.
TEST(GradModeNodes, AnInPlaceUpdateUnderNoGradWritesTheParameter) {
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor y = ops::mul(in[0], 2.0);
    {
      autograd::NoGradGuard no_grad;
      Tensor w = in[0];
      ops::div_(w, 2.0);
    }
    return std::vector<Tensor>{y};
  };
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    CompiledFunction f(fn, {.backend = backend});
    for (int call = 0; call < 2; ++call) {
      Tensor w = leaf(), w_eager = leaf();
      const Tensor y = f({w})[0];
      const Tensor y_eager = fn({w_eager})[0];
      EXPECT_EQ(w.to_vector<float>(), w_eager.to_vector<float>()) << "call " << call;
      EXPECT_EQ(y.to_vector<float>(), y_eager.to_vector<float>());
      EXPECT_TRUE(y.requires_grad());
      ops::sum(y).backward();
      EXPECT_EQ(w.grad().to_vector<double>(), std::vector<double>(4, 2.0)) << "call " << call;
    }
    EXPECT_EQ(f.stats().graphs_run, 2);
  }
}

// The same program traced at PreDispatch records the entry mode's restore
// too, as PyTorch's pre-dispatch graph does; at the Python key it records
// no node (the mode only decides what autograd records above the tracer).
TEST(GradModeNodes, MakeFxAtPreDispatchRecordsTheChanges) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor y;
    {
      autograd::NoGradGuard no_grad;
      y = ops::sin(in[0]);
    }
    return std::vector<Tensor>{y};
  };
  Tensor x = leaf();
  const Graph g = make_fx(fn, {.pre_dispatch = true})({x});
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[4]\n"
            "%_set_grad_enabled = torch._C::_set_grad_enabled(False) : ()\n"
            "%sin = aten::sin(%arg0_1) : f32[4]\n"
            "%_set_grad_enabled_1 = torch._C::_set_grad_enabled(True) : ()\n"
            "return %sin\n");
  EXPECT_THAT(make_fx(fn)({x}).str(), Not(HasSubstr("_set_grad_enabled")));
  // Dead-code elimination keeps the nodes: they return nothing and set state.
  Graph copy = g.clone();
  EXPECT_EQ(eliminate_dead_code(copy), 0);
  EXPECT_TRUE(is_impure(*copy.find("_set_grad_enabled")));
  // Running the graph sets the mode for its ops and restores the caller's.
  {
    autograd::NoGradGuard outer;
    EXPECT_FALSE(run_graph(g, {x})[0].requires_grad());
    EXPECT_FALSE(autograd::is_grad_enabled());
  }
  EXPECT_TRUE(autograd::is_grad_enabled());
}

// A graph with nodes run inside another trace: its node sets the mode, and
// the tracer notes the change at the next op, recording it once.
TEST(GradModeNodes, AGraphRunUnderATracerIsRecordedOnce) {
  auto inner = [](const std::vector<Tensor>& in) {
    Tensor y = ops::cos(in[0]);
    {
      autograd::NoGradGuard no_grad;
      y = ops::sin(y);
    }
    return std::vector<Tensor>{ops::neg(y)};
  };
  Tensor x = leaf();
  const Graph g = make_fx(inner, {.pre_dispatch = true})({x});
  auto run = [&g](const std::vector<Tensor>& in) { return run_graph(g, in); };
  const std::string again = make_fx(run, {.pre_dispatch = true})({x}).str();
  EXPECT_EQ(count(again, "_set_grad_enabled("), 2);
  EXPECT_EQ(again, g.str());
  CompiledFunction f(run, {.backend = "eager"});
  const std::vector<Tensor> out = f({x});
  EXPECT_FALSE(out[0].requires_grad());  // neg of a no_grad result, as eagerly
  EXPECT_EQ(out[0].requires_grad(), inner({x})[0].requires_grad());
  EXPECT_EQ(out[0].to_vector<float>(), inner({x})[0].to_vector<float>());
  EXPECT_EQ(count(f.stats().graphs[0], "_set_grad_enabled("), 2);
  EXPECT_TRUE(autograd::is_grad_enabled());
}

// Export keeps the one graph and its nodes; running it restores the mode.
TEST(GradModeNodes, ExportRecordsTheChanges) {
  Tensor x = leaf();
  const ExportedProgram ep = export_program(&no_grad_block, {.name = "f"})({x});
  const std::string code = ep.graph().str();
  EXPECT_EQ(count(code, "torch._C::_set_grad_enabled(False)"), 1);
  EXPECT_EQ(count(code, "torch._C::_set_grad_enabled(True)"), 1);
  const std::vector<Tensor> out = ep.run({x});
  EXPECT_EQ(out[2].to_vector<float>(), no_grad_block({x})[2].to_vector<float>());
  EXPECT_TRUE(autograd::is_grad_enabled());
  // The JSON form keeps the nodes (their op is found by its dotted namespace).
  EXPECT_EQ(ExportedProgram::from_json(ep.to_json()).graph().str(), code);
}

}  // namespace grad_mode_nodes_test
}  // namespace opspec
