#include "runtime/graph/interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/allocator.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace interpreter_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

const OperatorHandle& op(std::string_view name) { return Dispatcher::singleton().get(name); }
NodeArg N(Node* n) { return NodeArg::node(n); }
NodeArg V(Value v) { return NodeArg::value(std::move(v)); }
std::vector<OutputMeta> M(const Tensor& t) { return {TensorMeta::of(t)}; }

void expect_bitwise_equal(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(TensorMeta::of(a).sizes, TensorMeta::of(b).sizes);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
}

// Eager: y = layer_norm(relu(addmm(b, x, w.t())).add_(x) + 0.5), and the graph of it.
struct Program {
  Graph g;
  std::vector<Tensor> eager;  // getitem 0, getitem 1, relu (mutated by add_), add_, t, cat
};

Program linear_program(const Tensor& x, const Tensor& w, const Tensor& b) {
  Program p;
  Tensor t = ops::t(w);
  Tensor addmm = ops::addmm(b, x, t);
  Tensor relu = ops::relu(addmm);
  Tensor add_ = ops::add_(relu, x);
  Tensor add = ops::add(add_, 0.5);
  auto [y, mean, rstd] = ops::native_layer_norm(add, {5}, std::nullopt, std::nullopt, 1e-5);
  Tensor cat = ops::cat({y, add}, 0);

  Graph& g = p.g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* wn = g.add_placeholder("w", TensorMeta::of(w));
  Node* bn = g.add_placeholder("b", TensorMeta::of(b));
  Node* tn = g.add_call(op("aten::t"), {N(wn)}, M(t));
  Node* addmm_n = g.add_call(op("aten::addmm"), {N(bn), N(xn), N(tn), V(1), V(1)}, M(addmm));
  Node* relu_n = g.add_call(op("aten::relu"), {N(addmm_n)}, M(relu));
  Node* add__n = g.add_call(op("aten::add_.Tensor"), {N(relu_n), N(xn), V(1)}, M(add_));
  Node* add_n = g.add_call(op("aten::add.Tensor"),
                           {N(add__n), V(internal::make_wrapped_number(Scalar(0.5))), V(1)}, M(add));
  Node* ln = g.add_call(op("aten::native_layer_norm"),
                        {N(add_n), V(std::vector<int64_t>{5}), V(std::nullopt), V(std::nullopt), V(1e-5)},
                        {TensorMeta::of(y), TensorMeta::of(mean), TensorMeta::of(rstd)});
  Node* g0 = g.add_getitem(ln, 0);
  Node* g1 = g.add_getitem(ln, 1);
  Node* cat_n = g.add_call(op("aten::cat"), {NodeArg::nodes({g0, add_n}), V(0)}, M(cat));
  g.set_output({g0, g1, relu_n, add__n, tn, cat_n});
  p.eager = {y, mean, relu, add_, t, cat};
  return p;
}

TEST(InterpreterTest, MatchesEagerBitForBit) {
  Tensor x = ops::randn({4, 5}), w = ops::randn({5, 5}), b = ops::randn({5});
  Program p = linear_program(x, w, b);
  p.g.lint();
  std::vector<Tensor> out = run_graph(p.g, {x, w, b});
  ASSERT_EQ(out.size(), p.eager.size());
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    expect_bitwise_equal(out[i], p.eager[i]);
  }
  // The view and the in-place op keep their aliasing.
  EXPECT_TRUE(out[4].is_alias_of(w));
  EXPECT_EQ(out[4].strides(), ops::t(w).strides());
  EXPECT_TRUE(out[3].is_same(out[2]));
  // The inputs are not touched (add_ wrote to relu's fresh tensor).
  EXPECT_FALSE(out[2].is_alias_of(x));
}

TEST(InterpreterTest, GraphRunnerRunsAgainAndAgainLikeRunGraph) {
  Tensor x = ops::randn({4, 5}), w = ops::randn({5, 5}), b = ops::randn({5});
  Program p = linear_program(x, w, b);
  const GraphRunner runner(p.g);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out = runner({x, w, b});
    ASSERT_EQ(out.size(), p.eager.size());
    for (size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE(i);
      expect_bitwise_equal(out[i], p.eager[i]);
    }
    EXPECT_TRUE(out[4].is_alias_of(w));
    EXPECT_TRUE(out[3].is_same(out[2]));
  }
  EXPECT_THAT([&] { runner({x}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: the graph takes 3 input(s) (%x, %w, %b) but 1 were given")));
  const GraphRunner any_size(p.g, {.check_sizes = false});
  EXPECT_THAT([&] { any_size({ops::randn({4}), w, b}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: input 0 (%x) is f32[4] but the graph was traced with f32[4, 5]")));
}

TEST(InterpreterTest, AcceptsInputsWithOtherStrides) {
  Tensor x = ops::contiguous(ops::t(ops::randn({5, 4}))), w = ops::randn({5, 5}), b = ops::randn({5});
  Tensor xt = ops::t(ops::randn({5, 4}));  // f32[4, 5] with strides (1, 4)
  Program p = linear_program(x, w, b);
  Program eager_on_xt = linear_program(xt, w, b);
  std::vector<Tensor> out = run_graph(p.g, {xt, w, b});
  for (size_t i = 0; i < out.size(); ++i) expect_bitwise_equal(out[i], eager_on_xt.eager[i]);
}

TEST(InterpreterTest, InputMismatchErrors) {
  Tensor x = ops::randn({4, 5}), w = ops::randn({5, 5}), b = ops::randn({5});
  Program p = linear_program(x, w, b);
  EXPECT_THAT([&] { run_graph(p.g, {x}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: the graph takes 3 input(s) (%x, %w, %b) but 1 were given")));
  EXPECT_THAT([&] { run_graph(p.g, {ops::randn({4}), w, b}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: input 0 (%x) is f32[4] but the graph was traced with f32[4, 5]")));
  EXPECT_THAT([&] { run_graph(p.g, {x, ops::to(w, DType::kFloat64), b}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: input 1 (%w) is f64[5, 5] but the graph was traced with f32[5, 5]")));
  EXPECT_THAT([&] { run_graph(p.g, {x, w, ops::zeros({5}, {.device = kMeta})}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: input 2 (%b) is f32[5] (meta) but the graph was traced with f32[5]")));
}

TEST(InterpreterTest, ConstantsWithoutDataAreRejected) {
  auto graph_with = [](Tensor constant) {
    Graph g;
    Node* c = g.add_constant(constant);
    g.set_output({g.add_call(op("aten::neg"), {N(c)}, M(constant))});
    return g;
  };
  Tensor real = ops::tensor({1, -2, 3}, {3});
  std::vector<Tensor> out = run_graph(graph_with(real), {});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{-1, 2, -3}));

  EXPECT_THAT([&] { run_graph(graph_with(internal::make_tensor({3}, DType::kFloat32, kMeta)), {}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: constant %_tensor_constant0 is a meta tensor (f32[3] (meta)) "
                                             "and has no data; trace with real constants to run this graph")));
  // A fake tensor: claims cpu, but its storage is on meta.
  const SizeVec sizes{3}, strides{1};
  Tensor fake(IntrusivePtr<TensorImpl>::make(Storage::make(12, kMeta), sizes, strides, 0, DType::kFloat32, kCPU));
  EXPECT_THAT([&] { run_graph(graph_with(fake), {}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: constant %_tensor_constant0 is a fake tensor (f32[3]) "
                                             "and has no data; trace with real constants to run this graph")));
}

Tensor not_implemented_kernel(const Tensor&) { internal::throw_not_implemented("graphtest::unfinished: no kernel yet"); }

TEST(InterpreterTest, OpErrorsNameTheNode) {
  Tensor x = ops::randn({4, 5});
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* view = g.add_call(op("aten::view"), {N(xn), V(std::vector<int64_t>{3, 3})}, M(x));
  g.set_output({view});
  try {
    run_graph(g, {x});
    FAIL() << "expected an error";
  } catch (const NotImplementedError&) {
    FAIL() << "expected a plain Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("run_graph: node %view (aten::view): "));
    EXPECT_THAT(e.what(), HasSubstr("[3, 3]"));
  }

  static const bool registered = [] {
    Library("graphtest").def("unfinished(Tensor x) -> Tensor").impl("unfinished", DispatchKey::kCPU,
                                                                    &not_implemented_kernel);
    return true;
  }();
  (void)registered;
  Graph h;
  Node* hx = h.add_placeholder("x", TensorMeta::of(x));
  h.set_output({h.add_call(op("graphtest::unfinished"), {N(hx)}, M(x))});
  EXPECT_THAT([&] { run_graph(h, {x}); },
              ThrowsMessage<NotImplementedError>(
                  HasSubstr("run_graph: node %unfinished (graphtest::unfinished): graphtest::unfinished: no kernel yet")));
}

TEST(InterpreterTest, ScalarOutputsAreRejectedAndMissingOutput) {
  Tensor x = ops::randn({3});
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* s = g.add_call(op("aten::sum"), {N(xn), V(std::nullopt)}, M(ops::sum(x)));
  Node* item = g.add_call(op("aten::_local_scalar_dense"), {N(s)}, {std::nullopt});
  EXPECT_THAT([&] { run_graph(g, {x}); }, ThrowsMessage<Error>(HasSubstr("run_graph: the graph has no output node")));
  g.set_output({item});
  EXPECT_THAT([&] { run_graph(g, {x}); },
              ThrowsMessage<Error>(HasSubstr("run_graph: output %_local_scalar_dense is a float, not a tensor")));
  g.set_output({});
  EXPECT_TRUE(run_graph(g, {x}).empty());
}

TEST(InterpreterTest, ReleasesValuesAfterTheirLastUse) {
  constexpr int64_t kNumel = 1 << 18;  // 1 MiB of f32
  const int64_t bytes = kNumel * 4;
  Tensor x = ops::randn({kNumel});
  Graph g;
  Node* n = g.add_placeholder("x", TensorMeta::of(x));
  for (int i = 0; i < 6; ++i) n = g.add_call(op("aten::neg"), {N(n)}, M(x));
  g.set_output({n});
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  const GraphRunner runner(g);
  for (int run = 0; run < 2; ++run) {  // the first run's steps are boxed, the second's typed
    SCOPED_TRACE(run);
    const int64_t before = cpu->stats().bytes_in_use;
    cpu->reset_peak_stats();
    std::vector<Tensor> out = runner({x});
    // Eager holds at most the previous and the current result: two buffers.
    EXPECT_LE(cpu->stats().peak_bytes - before, 2 * bytes + bytes / 2);
    EXPECT_EQ(cpu->stats().bytes_in_use - before, bytes);  // only the result remains
    EXPECT_EQ(out[0].to_vector<float>(), x.to_vector<float>());
  }
}

// OpLog: a mode that records every op it sees, with its arguments' kinds.
class OpLog : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    std::string entry = call.name();
    for (const Value& v : call.stack()) str_append(&entry, " ", v.type_name());
    log.push_back(std::move(entry));
    call.proceed();
    return true;
  }
  std::vector<std::string> log;
};

// See Note [Typed graph steps]: from its second run on, a step whose op takes
// only tensors and scalars runs unboxed; modes see the same calls, results equal eager.
TEST(InterpreterTest, TypedStepsRunLikeTheBoxedFirstRun) {
  const Tensor x = ops::randn({4, 4}), w = ops::randn({4, 4});
  const Tensor mm = ops::mm(x, w);
  const Tensor add = ops::add(mm, x, 2);
  const Tensor mul = ops::mul(add, 0.5);
  const Tensor relu = ops::relu(mul);
  const Tensor add_s = ops::add(relu, 3.0, 0.5);
  const Tensor addmm = ops::addmm(add_s, x, w, 0.5, 2.0);
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* wn = g.add_placeholder("w", TensorMeta::of(w));
  Node* mm_n = g.add_call(op("aten::mm"), {N(xn), N(wn)}, M(mm));                              // TT
  Node* add_n = g.add_call(op("aten::add.Tensor"), {N(mm_n), N(xn), V(2)}, M(add));            // TTS
  Node* mul_n = g.add_call(op("aten::mul.Tensor"),
                           {N(add_n), V(internal::make_wrapped_number(Scalar(0.5)))}, M(mul));  // TT
  Node* relu_n = g.add_call(op("aten::relu"), {N(mul_n)}, M(relu));                            // T
  Node* add_s_n = g.add_call(op("aten::add.Scalar"), {N(relu_n), V(3.0), V(0.5)}, M(add_s));   // TSS
  Node* addmm_n = g.add_call(op("aten::addmm"), {N(add_s_n), N(xn), N(wn), V(0.5), V(2.0)}, M(addmm));  // TTTSS
  g.set_output({mm_n, relu_n, addmm_n});
  const GraphRunner runner(g);
  std::vector<std::vector<std::string>> logs;
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    OpLog seen;
    std::vector<Tensor> out;
    {
      ModeGuard guard(seen);
      out = runner({x, w});
    }
    ASSERT_EQ(out.size(), 3u);
    expect_bitwise_equal(out[0], mm);
    expect_bitwise_equal(out[1], relu);
    expect_bitwise_equal(out[2], addmm);
    logs.push_back(seen.log);
  }
  EXPECT_THAT(logs[0], ::testing::ElementsAre("aten::mm Tensor Tensor", "aten::add.Tensor Tensor Tensor int",
                                              "aten::mul.Tensor Tensor Tensor", "aten::relu Tensor",
                                              "aten::add.Scalar Tensor float float",
                                              "aten::addmm Tensor Tensor Tensor float float"));
  EXPECT_EQ(logs[1], logs[0]);
  EXPECT_EQ(logs[2], logs[0]);
}

TEST(InterpreterTest, TypedStepErrorsNameTheNode) {
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(ops::randn({4, 5})));
  Node* wn = g.add_placeholder("w", TensorMeta::of(ops::randn({5, 3})));
  g.set_output({g.add_call(op("aten::mm"), {N(xn), N(wn)}, M(ops::randn({4, 3})))});
  const GraphRunner any_size(g, {.check_sizes = false});
  const Tensor r = any_size({ops::randn({4, 5}), ops::randn({5, 3})})[0];
  EXPECT_EQ(r.size(0), 4);
  EXPECT_EQ(r.size(1), 3);
  EXPECT_THAT([&] { any_size({ops::randn({4, 6}), ops::randn({5, 3})}); },
              ThrowsMessage<Error>(StartsWith("run_graph: node %mm (aten::mm): ")));
}

}  // namespace
}  // namespace opspec
