// Tests of the override layer (PyTorch's py_impl + _EnablePythonDispatcher).
// See Note [Override layer]. The dispatcher is process-wide: every override a
// test adds to a builtin op is a ScopedOverride, gone when the test ends; the
// permanent ones (Library::impl_override) sit on private ops (override_test::).
#include <atomic>
#include <cmath>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace override_test {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pointwise;
using ::testing::ThrowsMessage;

const std::vector<double> kInputs = {-1.0, 0.0, 0.5, 1.0, 2.0};

Tensor input() { return ops::tensor(kInputs, {5}); }

std::vector<float> expected(double (*f)(double)) {
  std::vector<float> out;
  for (double v : kInputs) out.push_back(static_cast<float>(f(v)));
  return out;
}
std::vector<float> cos_values() { return expected([](double v) { return std::cos(v); }); }
std::vector<float> sin_values() { return expected([](double v) { return std::sin(v); }); }

void expect_values(const Tensor& t, const std::vector<float>& want) {
  EXPECT_THAT(t.to_vector<float>(), Pointwise(FloatNear(1e-6f), want));
}

const OperatorHandle& op_named(std::string_view name) { return Dispatcher::singleton().get(name); }

// Events seen by typed (captureless) overrides and modes, in order.
std::vector<std::string>& events() {
  static std::vector<std::string> e;
  return e;
}

Tensor cos_as_sin(const Tensor& x) { return ops::sin(x); }

// Records every op that reaches its key, then runs it.
class RecordingMode : public DispatchMode {
 public:
  explicit RecordingMode(std::string tag = "") : tag_(std::move(tag)) {}
  bool dispatch(OpCall& call) override {
    log.push_back(call.name());
    if (!tag_.empty()) events().push_back(tag_ + call.name());
    call.proceed();
    return true;
  }
  std::vector<std::string> log;

 private:
  std::string tag_;
};

class RecordingFunctionMode : public FunctionMode {
 public:
  bool dispatch(OpCall& call) override {
    log.push_back(call.name());
    call.proceed();
    return true;
  }
  std::vector<std::string> log;
};

// ---- Private ops (namespace override_test) ----

Tensor plus_one_cpu(const Tensor& x) {
  Tensor out = internal::make_tensor(x.sizes(), x.dtype(), kCPU);
  const std::vector<float> v = x.to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) out.data_ptr<float>()[i] = v[i] + 1.0f;
  return out;
}

std::atomic<int>& plus_one_override_calls() {
  static std::atomic<int> n{0};
  return n;
}

// plus_one: CPU kernel only, plus permanent overrides (Library::impl_override):
// a boxed capturing one at CPU (adds `offset`) and a typed Meta one.
// no_meta: CPU kernel only, never overridden permanently.
void register_test_ops() {
  static const bool done = [] {
    Library lib("override_test");
    lib.def("no_meta(Tensor x) -> Tensor", OpKind::kUnary).impl("no_meta", DispatchKey::kCPU, &plus_one_cpu);
    const float offset = 100.0f;
    std::atomic<int>* calls = &plus_one_override_calls();
    lib.def("plus_one(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("plus_one", DispatchKey::kCPU, &plus_one_cpu)
        .impl_override("plus_one", DispatchKey::kCPU,
                       [offset, calls](const OperatorHandle&, DispatchKeySet, Stack& stack) {
                         calls->fetch_add(1);
                         Tensor x = stack.at(0).to_tensor();
                         Tensor out = plus_one_cpu(x);
                         for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] += offset - 1.0f;
                         stack.clear();
                         stack.emplace_back(out);
                       })
        .impl_override("plus_one", DispatchKey::kMeta,
                       [](const Tensor& x) { return internal::make_tensor(x.sizes(), x.dtype(), kMeta); });
    return true;
  }();
  (void)done;
}

Tensor no_meta(const Tensor& x) {
  static const TypedOp<Tensor(const Tensor&)> op("override_test::no_meta");
  return op(x);
}
Tensor plus_one(const Tensor& x) {
  static const TypedOp<Tensor(const Tensor&)> op("override_test::plus_one");
  return op(x);
}

class OverrideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_ops();
    events().clear();
    ASSERT_FALSE(override_layer_enabled());
  }
  void TearDown() override {
    // Every override a test put on a builtin op is gone, and no guard leaked.
    for (const char* name : {"aten::cos", "aten::relu", "aten::matmul", "aten::linear"}) {
      EXPECT_TRUE(op_named(name).override_keys().empty()) << name;
    }
    EXPECT_TRUE(op_named("override_test::no_meta").override_keys().empty());
    EXPECT_FALSE(override_layer_enabled());
  }
};

// ---- 1. The guard switches a typed override on and off ----

TEST_F(OverrideTest, TypedOverrideRunsOnlyInsideTheGuard) {
  const OperatorHandle& cos = op_named("aten::cos");
  const DispatchKeySet cpu_call = DispatchKeySet(DispatchKey::kCPU) | kDefaultOnKeys;
  {
    ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, &cos_as_sin);
    EXPECT_EQ(cos.override_keys(), DispatchKeySet(DispatchKey::kCPU));
    expect_values(ops::cos(input()), cos_values());  // registered but not enabled
    EXPECT_EQ(Dispatcher::singleton().resolve(cos, cpu_call).kernel, &cos.kernel(DispatchKey::kCPU));
    {
      EnablePythonDispatcherGuard on;
      EXPECT_TRUE(override_layer_enabled());
      expect_values(ops::cos(input()), sin_values());
      const Dispatcher::ResolvedKernel r = Dispatcher::singleton().resolve(cos, cpu_call);
      EXPECT_EQ(r.key, DispatchKey::kCPU);
      EXPECT_EQ(r.kernel, &cos.override_kernel(DispatchKey::kCPU));
      EXPECT_FALSE(r.is_fallback);
      // Boxed calls and strided inputs go through the same override.
      Stack s = cos.schema().bind({input()});
      cos.call_boxed(s);
      expect_values(s.at(0).to_tensor(), sin_values());
      Tensor m = ops::tensor({0.0, 1.0, 2.0, 3.0}, {2, 2});
      expect_values(ops::cos(ops::t(m)), {0.0f, std::sin(2.0f), std::sin(1.0f), std::sin(3.0f)});
      // Only the CPU key is overridden: a meta tensor still runs aten::cos's Meta kernel.
      Tensor meta = ops::cos(internal::make_tensor({3}, DType::kFloat32, kMeta));
      EXPECT_TRUE(meta.device().is_meta());
    }
    expect_values(ops::cos(input()), cos_values());
  }
  EXPECT_TRUE(cos.override_keys().empty());
  EXPECT_FALSE(cos.override_kernel(DispatchKey::kCPU).valid());
  EnablePythonDispatcherGuard on;
  expect_values(ops::cos(input()), cos_values());  // removed, so enabling changes nothing
}

// Ended first-in first-out, the earlier override took out the later one's
// (still alive) and the later one then put back the earlier's kernel, gone
// with its scope: a call afterwards ran a dead override.
TEST_F(OverrideTest, ScopedOverridesEndedOutOfOrderLeaveTheLiveOne) {
  const OperatorHandle& cos = op_named("aten::cos");
  std::optional<ScopedOverride> first(std::in_place, "aten::cos", DispatchKey::kCPU, &cos_as_sin);
  std::optional<ScopedOverride> second(std::in_place, "aten::cos", DispatchKey::kCPU,
                                       [](const Tensor& x) { return ops::neg(x); });
  EnablePythonDispatcherGuard on;
  first.reset();
  expect_values(ops::cos(input()), expected([](double v) { return -v; }));  // the live override still runs
  second.reset();
  EXPECT_TRUE(cos.override_keys().empty());
  expect_values(ops::cos(input()), cos_values());
}

// ---- 2. Disable guard and exact TLS restoration ----

TEST_F(OverrideTest, DisableGuardNestsAndGuardsRestoreTheKeySetsExactly) {
  ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, &cos_as_sin);
  const LocalDispatchKeySet before = local_dispatch_key_set();
  {
    EnablePythonDispatcherGuard on;
    const LocalDispatchKeySet enabled = local_dispatch_key_set();
    EXPECT_TRUE(enabled.included.has(DispatchKey::kPythonDispatcher));
    {
      DisablePythonDispatcherGuard off;
      EXPECT_FALSE(override_layer_enabled());
      EXPECT_TRUE(local_dispatch_key_set().excluded.has(DispatchKey::kPythonDispatcher));
      expect_values(ops::cos(input()), cos_values());
      {
        // The innermost guard decides, as c10's PythonDispatcherTLS (make_fx
        // enables inside a caller's disable): exclusion used to win.
        EnablePythonDispatcherGuard again;
        EXPECT_TRUE(override_layer_enabled());
        expect_values(ops::cos(input()), sin_values());
      }
      EXPECT_FALSE(override_layer_enabled());
    }
    EXPECT_EQ(local_dispatch_key_set().included, enabled.included);
    EXPECT_EQ(local_dispatch_key_set().excluded, enabled.excluded);
    expect_values(ops::cos(input()), sin_values());
    {
      EnablePythonDispatcherGuard nested;  // an inner enable does not end the outer one
    }
    EXPECT_TRUE(override_layer_enabled());
    expect_values(ops::cos(input()), sin_values());
  }
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_EQ(local_dispatch_key_set().excluded, before.excluded);
  EXPECT_EQ(local_dispatch_key_set().modes, before.modes);
}

TEST_F(OverrideTest, GuardsRestoreTheKeySetsWhenAnExceptionLeavesTheScope) {
  ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, &cos_as_sin);
  const LocalDispatchKeySet before = local_dispatch_key_set();
  EXPECT_THROW(
      {
        EnablePythonDispatcherGuard on;
        DisablePythonDispatcherGuard off;
        throw std::runtime_error("boom");
      },
      std::runtime_error);
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_EQ(local_dispatch_key_set().excluded, before.excluded);
  {
    EnablePythonDispatcherGuard on;
    const LocalDispatchKeySet enabled = local_dispatch_key_set();
    try {
      DisablePythonDispatcherGuard off;
      throw Error("boom");
    } catch (const Error&) {
    }
    EXPECT_EQ(local_dispatch_key_set().included, enabled.included);
    EXPECT_EQ(local_dispatch_key_set().excluded, enabled.excluded);
    expect_values(ops::cos(input()), sin_values());  // the disable guard is gone
  }
  // An override that throws leaves the state as it was too.
  ScopedOverride relu_throws("aten::relu", DispatchKey::kCPU,
                             [](const Tensor&) -> Tensor { OPSPEC_FAIL("relu override failed"); });
  {
    EnablePythonDispatcherGuard on;
    const LocalDispatchKeySet enabled = local_dispatch_key_set();
    EXPECT_THAT([] { ops::relu(input()); }, ThrowsMessage<Error>(HasSubstr("relu override failed")));
    EXPECT_EQ(local_dispatch_key_set().included, enabled.included);
    EXPECT_EQ(local_dispatch_key_set().excluded, enabled.excluded);
  }
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_EQ(local_dispatch_key_set().excluded, before.excluded);
  EXPECT_NO_THROW(ops::relu(input()));
}

// ---- 3. Thread-local ----

TEST_F(OverrideTest, TheSwitchIsPerThread) {
  ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, &cos_as_sin);
  {
    EnablePythonDispatcherGuard on;
    expect_values(ops::cos(input()), sin_values());
    std::vector<float> other;
    bool other_enabled = true;
    std::thread([&] {
      other_enabled = override_layer_enabled();
      other = ops::cos(input()).to_vector<float>();
    }).join();
    EXPECT_FALSE(other_enabled);
    EXPECT_THAT(other, Pointwise(FloatNear(1e-6f), cos_values()));
  }
  // A thread with its own guard sees the override while this thread, at the
  // same time and without a guard, does not.
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<float> in_thread;
  std::thread worker([&] {
    EnablePythonDispatcherGuard on;
    in_thread = ops::cos(input()).to_vector<float>();
    entered.set_value();
    released.wait();
    in_thread = ops::cos(input()).to_vector<float>();  // still on after the main thread ran
  });
  entered.get_future().wait();
  expect_values(ops::cos(input()), cos_values());
  EXPECT_FALSE(override_layer_enabled());
  release.set_value();
  worker.join();
  EXPECT_THAT(in_thread, Pointwise(FloatNear(1e-6f), sin_values()));
}

// ---- 4. Overrides at CompositeImplicit change the decomposition ----

TEST_F(OverrideTest, CompositeImplicitOverrideChangesTheDecompositionModesSee) {
  Tensor a = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = ops::tensor({1, -1, 0, 2, 3, 1}, {3, 2});
  const std::vector<float> product = {10, 6, 22, 12};  // hand-computed a @ b
  // a @ b as (b^T a^T)^T.
  ScopedOverride matmul_by_transposes("aten::matmul", DispatchKey::kCompositeImplicit,
                                      [](const Tensor& x, const Tensor& y) {
                                        return ops::t(ops::mm(ops::t(y), ops::t(x)));
                                      });
  auto run = [&](bool enabled) {
    RecordingFunctionMode function_mode;
    RecordingMode mode;
    ModeGuard g1(function_mode);
    ModeGuard g2(mode);
    std::optional<EnablePythonDispatcherGuard> on;
    if (enabled) on.emplace();
    expect_values(ops::matmul(a, b), product);
    // The FunctionMode sits above the layer's key: it sees matmul either way.
    EXPECT_THAT(function_mode.log, ElementsAre("aten::matmul"));
    return mode.log;
  };
  EXPECT_THAT(run(false), ElementsAre("aten::mm"));
  EXPECT_THAT(run(true), ElementsAre("aten::t", "aten::t", "aten::mm", "aten::t"));
  EXPECT_THAT(run(false), ElementsAre("aten::mm"));
}

TEST_F(OverrideTest, LinearOverriddenByMatmulPlusAdd) {
  Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2});
  Tensor w = ops::tensor({1, 0, 1, 1, 2, -1}, {3, 2});
  Tensor bias = ops::tensor({0.5, 1, -1}, {3});
  const std::vector<float> want = {1.5, 4, -1, 3.5, 8, 1};  // x @ w^T + bias
  ScopedOverride linear_as_matmul_add(
      "aten::linear", DispatchKey::kCompositeImplicit,
      [](const Tensor& in, const Tensor& weight, const std::optional<Tensor>& b) {
        Tensor out = ops::matmul(in, ops::t(weight));
        return b ? ops::add(out, *b) : out;
      });
  RecordingMode mode;
  ModeGuard g(mode);
  expect_values(ops::linear(x, w, bias), want);
  EXPECT_THAT(mode.log, ElementsAre("aten::t", "aten::addmm"));
  mode.log.clear();
  {
    EnablePythonDispatcherGuard on;
    expect_values(ops::linear(x, w, bias), want);
  }
  // The override's own matmul still decomposes with the builtin kernel.
  EXPECT_THAT(mode.log, ElementsAre("aten::t", "aten::mm", "aten::add.Tensor"));
}

// ---- 5. Redispatch below a mode consults the override ----

TEST_F(OverrideTest, ModeSeesTheOpAndItsRedispatchRunsTheOverride) {
  ScopedOverride relu_is_abs("aten::relu", DispatchKey::kCPU, [](const Tensor& x) {
    events().push_back("override");
    return ops::abs(x);  // below the Python key: the mode does not see it
  });
  RecordingMode mode("mode:");
  ModeGuard g(mode);
  expect_values(ops::relu(input()), {0, 0, 0.5, 1, 2});
  EXPECT_THAT(events(), ElementsAre("mode:aten::relu"));
  events().clear();
  {
    EnablePythonDispatcherGuard on;
    expect_values(ops::relu(input()), {1, 0, 0.5, 1, 2});
  }
  EXPECT_THAT(events(), ElementsAre("mode:aten::relu", "override"));
  EXPECT_THAT(mode.log, ElementsAre("aten::relu", "aten::relu"));
}

// ---- 6. Deferring to the builtin kernel ----

TEST_F(OverrideTest, BoxedOverrideCountsThenDefersToTheBuiltinKernel) {
  int calls = 0;
  std::vector<std::string> keys_seen;
  ScopedOverride counting("aten::cos", DispatchKey::kCPU, [&](const OperatorHandle& op, DispatchKeySet ks, Stack& s) {
    ++calls;
    Dispatcher::singleton().call_builtin_kernel(op, DispatchKey::kCPU, ks, s);
  });
  const std::vector<float> builtin = ops::cos(input()).to_vector<float>();
  EXPECT_EQ(calls, 0);
  EnablePythonDispatcherGuard on;
  EXPECT_EQ(ops::cos(input()).to_vector<float>(), builtin);  // typed call, boxed override
  const OperatorHandle& cos = op_named("aten::cos");
  Stack s = cos.schema().bind({input()});
  cos.call_boxed(s);
  EXPECT_EQ(s.at(0).to_tensor().to_vector<float>(), builtin);
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(cos.override_kernel(DispatchKey::kCPU).debug_name, HasSubstr("(boxed)"));
}

TEST_F(OverrideTest, CompositeOverrideMayDeferToTheBuiltinDecomposition) {
  int calls = 0;
  ScopedOverride counting("aten::matmul", DispatchKey::kCompositeImplicit,
                          [&](const OperatorHandle& op, DispatchKeySet ks, Stack& s) {
                            ++calls;
                            Dispatcher::singleton().call_builtin_kernel(op, DispatchKey::kCompositeImplicit, ks, s);
                          });
  RecordingMode mode;
  ModeGuard g(mode);
  EnablePythonDispatcherGuard on;
  expect_values(ops::matmul(ops::tensor({1, 2}, {1, 2}), ops::tensor({3, 4}, {2, 1})), {11});
  EXPECT_EQ(calls, 1);
  EXPECT_THAT(mode.log, ElementsAre("aten::mm"));
}

// ---- 7. An override where the op has no kernel ----

TEST_F(OverrideTest, MetaOverrideLetsAnOpWithoutMetaKernelRunUnderFakeMode) {
  const OperatorHandle& op = op_named("override_test::no_meta");
  Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    FakeTensorMode fake;
    ModeGuard g(fake);
    EXPECT_THAT([&] { no_meta(x); },
                ThrowsMessage<NoMetaKernelError>(HasSubstr("override_test::no_meta has no meta kernel")));
  }
  int meta_calls = 0;
  ScopedOverride meta("override_test::no_meta", DispatchKey::kMeta,
                      [&](const OperatorHandle&, DispatchKeySet, Stack& s) {
                        ++meta_calls;
                        Tensor in = s.at(0).to_tensor();
                        s.clear();
                        s.emplace_back(internal::make_tensor(in.sizes(), in.dtype(), kMeta));
                      });
  EXPECT_FALSE(op.has_kernel(DispatchKey::kMeta));
  {
    FakeTensorMode fake;
    ModeGuard g(fake);
    EXPECT_THROW(no_meta(x), NoMetaKernelError);  // registered but not enabled
    EnablePythonDispatcherGuard on;
    Tensor out = no_meta(x);
    EXPECT_TRUE(is_fake(out));
    EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
    EXPECT_EQ(out.dtype(), DType::kFloat32);
    EXPECT_TRUE(out.device().is_cpu());
    EXPECT_EQ(meta_calls, 1);
  }
  {
    EnablePythonDispatcherGuard on;
    // Real tensors still reach the CPU kernel; meta tensors reach the override.
    expect_values(no_meta(x), {2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(no_meta(internal::make_tensor({4}, DType::kFloat32, kMeta)).device().is_meta());
    EXPECT_EQ(meta_calls, 2);
    // There is no builtin kernel to defer to.
    Stack s = op.schema().bind({internal::make_tensor({4}, DType::kFloat32, kMeta)});
    EXPECT_THAT([&] { Dispatcher::singleton().call_builtin_kernel(op, DispatchKey::kMeta, DispatchKey::kMeta, s); },
                ThrowsMessage<Error>(HasSubstr("no built-in kernel at Meta to defer to")));
  }
  FakeTensorMode fake;
  ModeGuard g(fake);
  EXPECT_THROW(no_meta(x), NoMetaKernelError);  // guard gone: still throws
}

// ---- 8. ScopedOverride nesting ----

TEST_F(OverrideTest, InnerScopedOverrideReplacesAndRestoresTheOuterOne) {
  const OperatorHandle& cos = op_named("aten::cos");
  EnablePythonDispatcherGuard on;
  {
    ScopedOverride outer("aten::cos", DispatchKey::kCPU, &cos_as_sin);
    expect_values(ops::cos(input()), sin_values());
    {
      ScopedOverride inner("aten::cos", DispatchKey::kCPU, [](const Tensor& x) { return ops::neg(x); });
      expect_values(ops::cos(input()), {1, 0, -0.5, -1, -2});
      EXPECT_EQ(cos.override_keys(), DispatchKeySet(DispatchKey::kCPU));
    }
    expect_values(ops::cos(input()), sin_values());
    EXPECT_EQ(cos.override_keys(), DispatchKeySet(DispatchKey::kCPU));
  }
  EXPECT_TRUE(cos.override_keys().empty());
  expect_values(ops::cos(input()), cos_values());
  // Removing an override that is not there is harmless.
  Dispatcher::singleton().remove_override(cos, DispatchKey::kCPU);
  EXPECT_TRUE(cos.override_keys().empty());
}

// ---- 9. Permanent overrides from Library::impl_override ----

TEST_F(OverrideTest, LibraryImplOverrideRegistersPermanentBoxedAndTypedOverrides) {
  const OperatorHandle& op = op_named("override_test::plus_one");
  EXPECT_EQ(op.override_keys(), DispatchKeySet({DispatchKey::kCPU, DispatchKey::kMeta}));
  EXPECT_THAT(op.override_kernel(DispatchKey::kCPU).debug_name, HasSubstr("(boxed)"));
  EXPECT_EQ(op.override_kernel(DispatchKey::kMeta).debug_name, "override_test::plus_one/Meta/override");
  const int before = plus_one_override_calls().load();
  Tensor x = ops::tensor({1, 2}, {2});
  expect_values(plus_one(x), {2, 3});
  EXPECT_EQ(plus_one_override_calls().load(), before);
  {
    EnablePythonDispatcherGuard on;
    expect_values(plus_one(x), {101, 102});  // the captured offset
    EXPECT_EQ(plus_one_override_calls().load(), before + 1);
    FakeTensorMode fake;
    ModeGuard g(fake);
    EXPECT_THAT(plus_one(ops::zeros({3, 4})).sizes(), ElementsAre(3, 4));  // the typed Meta override
  }
  expect_values(plus_one(x), {2, 3});
  EXPECT_EQ(plus_one_override_calls().load(), before + 1);
  // A later test does not undo it: it is still there.
  EXPECT_EQ(op.override_keys(), DispatchKeySet({DispatchKey::kCPU, DispatchKey::kMeta}));
}

// ---- 10. dump_dispatch_table ----

TEST_F(OverrideTest, DumpMentionsTheOverrideOnlyWhileItIsRegistered) {
  const OperatorHandle& cos = op_named("aten::cos");
  const OperatorHandle& matmul = op_named("aten::matmul");
  EXPECT_THAT(Dispatcher::singleton().dump_dispatch_table(cos), Not(HasSubstr("override")));
  {
    ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, &cos_as_sin);
    ScopedOverride matmul_mm("aten::matmul", DispatchKey::kCompositeImplicit,
                             [](const Tensor& x, const Tensor& y) { return ops::mm(x, y); });
    const std::string dump = Dispatcher::singleton().dump_dispatch_table(cos);
    const size_t cpu_line = dump.find("\n  CPU: ");
    ASSERT_NE(cpu_line, std::string::npos) << dump;
    const std::string line = dump.substr(cpu_line + 1, dump.find('\n', cpu_line + 1) - cpu_line - 1);
    EXPECT_THAT(line, HasSubstr("CPU: kernel ["));
    EXPECT_THAT(line, HasSubstr(" + override [aten::cos/CPU/override] when the override layer is enabled"));
    EXPECT_EQ(dump.find("override ["), dump.rfind("override ["));  // on that line only
    EXPECT_THAT(Dispatcher::singleton().dump_dispatch_table(matmul),
                HasSubstr("CompositeImplicit: kernel [aten::matmul/CompositeImplicit, unboxed] + override "
                          "[aten::matmul/CompositeImplicit/override] when the override layer is enabled"));
  }
  EXPECT_THAT(Dispatcher::singleton().dump_dispatch_table(cos), Not(HasSubstr("override")));
  EXPECT_THAT(Dispatcher::singleton().dump_dispatch_table(matmul), Not(HasSubstr("override")));
}

// ---- 11. Rejected registrations ----

TEST_F(OverrideTest, OverrideAtThePythonDispatcherKeyIsRejected) {
  const OperatorHandle& cos = op_named("aten::cos");
  EXPECT_THAT(
      [&] {
        Dispatcher::singleton().register_override(
            cos, DispatchKey::kPythonDispatcher,
            KernelFunction::from_boxed([](const OperatorHandle&, DispatchKeySet, Stack&) {}));
      },
      ThrowsMessage<Error>(HasSubstr("PythonDispatcher is the switch of the override layer")));
  EXPECT_THAT([] { ScopedOverride s("aten::cos", DispatchKey::kPythonDispatcher, &cos_as_sin); },
              ThrowsMessage<Error>(HasSubstr("register_override: aten::cos")));
  EXPECT_THAT([&] { Dispatcher::singleton().register_override(cos, DispatchKey::kCPU, KernelFunction()); },
              ThrowsMessage<Error>(HasSubstr("register_override: empty kernel for aten::cos at CPU")));
  EXPECT_TRUE(cos.override_keys().empty());
}

TEST_F(OverrideTest, TypedOverrideWithTheWrongSignatureIsRejectedAtRegistration) {
  const OperatorHandle& cos = op_named("aten::cos");
  EXPECT_THAT([] { ScopedOverride s("aten::cos", DispatchKey::kCPU, [](const Tensor& x, double) { return x; }); },
              ThrowsMessage<Error>(HasSubstr("aten::cos kernel for CPU takes 2 argument(s) but the schema has 1")));
  EXPECT_THAT([] { ScopedOverride s("aten::cos", DispatchKey::kCPU, [](int64_t) { return Tensor(); }); },
              ThrowsMessage<Error>(HasSubstr("parameter 1 ('self') is Tensor in the schema")));
  EXPECT_THAT([] { ScopedOverride s("aten::cos", DispatchKey::kCPU, [](const Tensor&) { return Scalar(1.0); }); },
              ThrowsMessage<Error>(HasSubstr("returns the wrong type")));
  EXPECT_THAT(
      [] {
        Library("override_test").impl_override("no_meta", DispatchKey::kMeta, [](const Tensor& x, const Tensor&) {
          return x;
        });
      },
      ThrowsMessage<Error>(HasSubstr("override_test::no_meta kernel for Meta takes 2 argument(s)")));
  EXPECT_TRUE(cos.override_keys().empty());
  EXPECT_TRUE(op_named("override_test::no_meta").override_keys().empty());
}

}  // namespace
}  // namespace opspec
