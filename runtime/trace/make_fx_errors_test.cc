// make_fx with decomposition tables, overrides, fake models, and failing
// programs: errors name the traced op and leave no state behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "runtime/core/allocator.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/library.h"
#include "runtime/graph/interpreter.h"
#include "runtime/nn/layers.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"
#include "runtime/dispatch/op_names_test_util.h"

namespace opspec {
namespace make_fx_errors_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

// Everything a trace could leave behind on this thread.
struct ThreadState {
  LocalDispatchKeySet keys = local_dispatch_key_set();
  std::vector<std::shared_ptr<DispatchMode>> python = mode_stack(DispatchKey::kPython);
  std::vector<std::shared_ptr<DispatchMode>> pre_dispatch = mode_stack(DispatchKey::kPreDispatch);
  std::shared_ptr<DispatchMode> proxy = infra_mode(ModeKind::kProxy);
  std::shared_ptr<DispatchMode> fake = infra_mode(ModeKind::kFake);

  void expect_unchanged() const {
    const ThreadState now;
    EXPECT_EQ(now.keys.included, keys.included);
    EXPECT_EQ(now.keys.excluded, keys.excluded);
    EXPECT_EQ(now.keys.modes, keys.modes);
    EXPECT_EQ(now.python, python);
    EXPECT_EQ(now.pre_dispatch, pre_dispatch);
    EXPECT_EQ(now.proxy, proxy);
    EXPECT_EQ(now.fake, fake);
  }
};

using Recorder = test_util::OpNames;  // records the names of the ops it sees

TEST(MakeFxErrors, AFailingOpNamesItselfAndRestoresState) {
  Recorder outer;  // a mode the user had on before tracing stays on after
  ModeGuard guard(outer);
  const ThreadState before;
  for (TracingMode mode : {TracingMode::kFake, TracingMode::kReal}) {
    for (bool pre_dispatch : {false, true}) {
      auto f = [](const Tensor& a, const Tensor& b) { return ops::mm(ops::relu(a), b); };
      EXPECT_THAT([&] { make_fx(f, {.tracing_mode = mode, .pre_dispatch = pre_dispatch})(ops::ones({2, 3}), ops::ones({4, 5})); },
                  ThrowsMessage<Error>(AllOf(StartsWith("make_fx: while tracing aten::mm (called from make_fx_errors_test.cc:"),
                                             HasSubstr("): aten::mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"))));
      before.expect_unchanged();
    }
  }
}

TEST(MakeFxErrors, AUserExceptionPropagatesUnchangedAndRestoresState) {
  const ThreadState before;
  auto f = [](const Tensor& a) -> Tensor {
    ops::relu(a);
    throw std::runtime_error("user code failed");
  };
  EXPECT_THAT([&] { make_fx(f, {.pre_dispatch = true})(ops::ones({2})); },
              ThrowsMessage<std::runtime_error>("user code failed"));
  before.expect_unchanged();
  // The thread is usable afterwards: a plain op runs real kernels.
  EXPECT_EQ(ops::relu(ops::ones({2})).to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(MakeFxErrors, DataDependentOpsNeedRealTracing) {
  auto f = [](const Tensor& a) { return ops::mul(a, ops::sum(a).item().to<double>()); };
  EXPECT_THAT([&] { make_fx(f)(ops::ones({3})); },
              ThrowsMessage<DataDependentOutputError>(
                  AllOf(StartsWith("make_fx: while tracing aten::_local_scalar_dense"), HasSubstr("fake tensor"))));
  // Real tracing runs the op and records the value as a constant argument.
  const Graph g = make_fx(f, {.tracing_mode = TracingMode::kReal})(ops::ones({3}));
  EXPECT_THAT(g.str(), HasSubstr("%_local_scalar_dense = aten::_local_scalar_dense(%sum) : Scalar"));
  EXPECT_THAT(g.str(), HasSubstr("aten::mul.Tensor(%arg0_1, 3.0)"));
}

TEST(MakeFxErrors, MissingMetaKernelAndMixedDevicesUnderFakeTracing) {
  static const bool registered = [] {
    Library lib("make_fx_test");
    lib.def("cpu_only(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("cpu_only", DispatchKey::kCPU, [](const Tensor& x) { return ops::clone(x); });
    return true;
  }();
  (void)registered;
  const OperatorHandle& op = Dispatcher::singleton().get("make_fx_test::cpu_only");
  auto f = [&](const Tensor& a) { return op.call<Tensor>(a); };
  EXPECT_THAT([&] { make_fx(f)(ops::ones({3})); },
              ThrowsMessage<NoMetaKernelError>(AllOf(StartsWith("make_fx: while tracing make_fx_test::cpu_only"),
                                                     HasSubstr("make_fx_test::cpu_only has no meta kernel"))));
  EXPECT_THAT(make_fx(f, {.tracing_mode = TracingMode::kReal})(ops::ones({3})).str(),
              HasSubstr("%cpu_only = make_fx_test::cpu_only(%arg0_1) : f32[3]"));
  // Fake inputs may claim cuda; mixing them with cpu raises as a real run would.
  Tensor cuda_input;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    cuda_input = ops::ones({3}, {.device = Device(DeviceType::kCUDA, 0)});
  }
  auto add = [](const Tensor& a, const Tensor& b) { return ops::add(a, b); };
  EXPECT_THAT([&] { make_fx(add)(ops::ones({3}), cuda_input); },
              ThrowsMessage<Error>(AllOf(StartsWith("make_fx: while tracing aten::add.Tensor"),
                                         HasSubstr("Expected all tensors to be on the same device"))));
  EXPECT_THAT(make_fx(add)(cuda_input, cuda_input).str(), HasSubstr(": f32[3] (cuda:0)"));
}

TEST(MakeFxErrors, ArityMismatchIsReported) {
  auto f = [](const Tensor& a, const Tensor& b) { return ops::add(a, b); };
  EXPECT_THAT([&] { make_fx(f)(ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("the traced function takes 2 tensors but 1 inputs were given")));
}

TEST(DecompositionTables, AWrongDecompositionTracesAndChangesResults) {
  // The reference's example: cos decomposed to sin. Tracing accepts it; the
  // graph differs from eager only in values, which a hash comparison catches.
  DecompositionTable wrong;
  wrong.add("aten::cos", [](const Tensor& x) { return ops::sin(x); });
  auto f = [](const Tensor& x) { return ops::relu(ops::cos(x)); };
  const Tensor x = ops::arange(0.0, 1.0, 0.25);
  const Graph g = make_fx(f, {.decomposition_table = &wrong})(x);
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[4]\n"
            "%sin = aten::sin(%arg0_1) : f32[4]\n"
            "%relu = aten::relu(%sin) : f32[4]\n"
            "return %relu\n");
  EXPECT_NE(run_graph(g, {x})[0].to_vector<float>(), f(x).to_vector<float>());
  EXPECT_EQ(run_graph(make_fx(f)(x), {x})[0].to_vector<float>(), f(x).to_vector<float>());
}

TEST(DecompositionTables, DefaultTableDecomposesIntoFusableOps) {
  const DecompositionTable& table = default_decompositions();
  for (const char* op : {"aten::linear", "aten::matmul", "aten::softmax.int", "aten::silu", "aten::gelu",
                         "aten::_softmax", "aten::_log_softmax", "aten::native_layer_norm", "aten::addmm"}) {
    EXPECT_TRUE(table.contains(Dispatcher::singleton().get(op))) << op;
  }
  manual_seed(0);
  const Tensor x = ops::randn({4, 8}), w = ops::randn({6, 8}), b = ops::randn({6});
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    const Tensor h = ops::silu(ops::linear(x, w, b)) + ops::sum(ops::gelu(x, "tanh"));
    return std::vector<Tensor>{ops::softmax(h, -1), ops::log_softmax(h, 0), ops::layer_norm(h, {6}, b, b)};
  };
  for (bool pre_dispatch : {false, true}) {
    const Graph g = make_fx(f, {.pre_dispatch = pre_dispatch, .decomposition_table = &table})(x, w, b);
    for (const char* gone : {"aten::linear", "aten::silu", "aten::gelu", "aten::_softmax", "aten::_log_softmax",
                             "aten::native_layer_norm", "aten::addmm"}) {
      EXPECT_THAT(g.str(), Not(HasSubstr(std::string(gone) + "("))) << gone;
    }
    const std::vector<Tensor> eager = f(x, w, b), traced = run_graph(g, {x, w, b});
    for (size_t i = 0; i < eager.size(); ++i) {
      EXPECT_TRUE(ops::allclose(traced[i], eager[i], 1e-5, 1e-5)) << "output " << i;
    }
  }
}

TEST(DecompositionTables, PreDispatchDecomposesComposites) {
  DecompositionTable table;
  table.add("aten::linear", [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
    return ops::add(ops::matmul(x, ops::t(w)), *b);
  });
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) { return ops::linear(x, w, b); };
  EXPECT_EQ(make_fx(f, {.pre_dispatch = true, .decomposition_table = &table})(ops::ones({2, 3}), ops::ones({4, 3}),
                                                                             ops::ones({4}))
                .str(),
            "%arg0_1 = placeholder : f32[2, 3]\n"
            "%arg1_1 = placeholder : f32[4, 3]\n"
            "%arg2_1 = placeholder : f32[4]\n"
            "%t = aten::t(%arg1_1) : f32[3, 4]\n"
            "%matmul = aten::matmul(%arg0_1, %t) : f32[2, 4]\n"
            "%add = aten::add.Tensor(%matmul, %arg2_1) : f32[2, 4]\n"
            "return %add\n");
}

TEST(DecompositionTables, EntriesAreCheckedAndTablesCompose) {
  DecompositionTable table;
  EXPECT_THAT([&] { table.add("aten::no_such_op", [](const Tensor& x) { return x; }); },
              ThrowsMessage<Error>(HasSubstr("unknown op 'aten::no_such_op'")));
  EXPECT_THROW(table.add("aten::cos", [](const Tensor& x, const Tensor& y) { return x; }), Error);
  table.add("aten::cos", [](const Tensor& x) { return ops::sin(x); });
  DecompositionTable other;
  other.add("aten::silu", [](const Tensor& x) { return ops::mul(x, ops::sigmoid(x)); });
  table.merge(other);
  EXPECT_EQ(table.op_names(), (std::vector<std::string>{"aten::cos", "aten::silu"}));
  table.remove("aten::cos");
  EXPECT_EQ(table.size(), 1u);
  Stack stack{ops::ones({1})};
  EXPECT_FALSE(table.apply(Dispatcher::singleton().get("aten::cos"), stack));
  EXPECT_TRUE(table.apply(Dispatcher::singleton().get("aten::silu"), stack));
  EXPECT_NEAR(stack[0].to_tensor().item<double>(), 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

TEST(MakeFxOverrides, OverridesApplyWhileTracing) {
  // make_fx enables the override layer, as PyTorch's enables the Python dispatcher.
  ScopedOverride relu_via_max("aten::relu", DispatchKey::kCompositeImplicit,
                              [](const Tensor& x) { return ops::maximum(x, ops::zeros_like(x)); });
  auto f = [](const Tensor& x) { return ops::relu(x); };
  EXPECT_THAT(make_fx(f)(ops::ones({2})).str(), HasSubstr("aten::maximum"));
  Recorder recorder;
  const Tensor ones = ops::ones({2});
  {
    ModeGuard guard(recorder);
    ops::relu(ones);  // outside tracing: the built-in kernel
  }
  EXPECT_EQ(recorder.names, (std::vector<std::string>{"aten::relu"}));
}

TEST(MakeFxFake, ModelWithAGigabyteOfParametersTracesWithoutData) {
  get_allocator(DeviceType::kCPU)->reset_peak_stats();
  const AllocatorStats before = get_allocator(DeviceType::kCPU)->stats();
  FakeTensorMode fake;
  std::shared_ptr<nn::Sequential> model;
  {
    ModeGuard guard(fake);
    model = std::make_shared<nn::Sequential>();
    model->push_back(std::make_shared<nn::Linear>(1 << 14, 1 << 14));  // 1 GiB
    model->push_back(std::make_shared<nn::ReLU>());
    model->push_back(std::make_shared<nn::Linear>(1 << 14, 16));
  }
  Recorder recorder;  // user modes see the traced program too
  Graph g;
  const Tensor input = ops::ones({8, 1 << 14});
  {
    ModeGuard guard(recorder);
    g = make_fx([&](const Tensor& x) { return model->forward(x); }, {.fake_mode = &fake})(input);
  }
  const AllocatorStats after = get_allocator(DeviceType::kCPU)->stats();
  EXPECT_LT(after.peak_bytes - before.bytes_in_use, int64_t{1} << 20);  // the 512 KiB input, no parameters
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[8, 16384]\n"
            "%_tensor_constant0 = constant : f32[16384, 16384]\n"
            "%t = aten::t(%_tensor_constant0) : f32[16384, 16384]\n"
            "%_tensor_constant1 = constant : f32[16384]\n"
            "%addmm = aten::addmm(%_tensor_constant1, %arg0_1, %t) : f32[8, 16384]\n"
            "%relu = aten::relu(%addmm) : f32[8, 16384]\n"
            "%_tensor_constant2 = constant : f32[16, 16384]\n"
            "%t_1 = aten::t(%_tensor_constant2) : f32[16384, 16]\n"
            "%_tensor_constant3 = constant : f32[16]\n"
            "%addmm_1 = aten::addmm(%_tensor_constant3, %relu, %t_1) : f32[8, 16]\n"
            "return %addmm_1\n");
  EXPECT_EQ(recorder.names, (std::vector<std::string>{"aten::t", "aten::addmm", "aten::relu", "aten::t", "aten::addmm"}));
  EXPECT_THAT([&] { run_graph(g, {input}); },
              ThrowsMessage<Error>(HasSubstr("constant %_tensor_constant0 is a fake tensor")));
}

TEST(MakeFxThreads, TracesOnTwoThreadsAreIndependent) {
  auto f = [](const Tensor& x) { return ops::exp(ops::neg(x)); };
  std::string other;
  std::thread t([&] { other = make_fx(f)(ops::ones({3})).str(); });
  const std::string here = make_fx(f)(ops::ones({3})).str();
  t.join();
  EXPECT_EQ(here, other);
  EXPECT_THAT(here, HasSubstr("%exp = aten::exp(%neg) : f32[3]"));
}

}  // namespace
}  // namespace opspec
