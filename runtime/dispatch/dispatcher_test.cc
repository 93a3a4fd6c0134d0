// Tests of the dispatcher itself with private test ops (namespace disptest),
// so they do not depend on any builtin kernel.
#include "runtime/dispatch/dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "runtime/dispatch/library.h"
#include "runtime/dispatch/mode.h"

namespace opspec {
namespace dispatcher_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<std::string>& trace() {
  static std::vector<std::string> t;
  return t;
}

Tensor filled(int64_t n, float v, Device device = kCPU) {
  Tensor t = internal::make_tensor({n}, DType::kFloat32, device);
  if (device.is_cpu()) {
    for (int64_t i = 0; i < n; ++i) t.data_ptr<float>()[i] = v;
  }
  return t;
}

Tensor ident_cpu(const Tensor& x) {
  trace().push_back("CPU");
  return x;
}
Tensor ident_meta(const Tensor& x) {
  trace().push_back("Meta");
  return x;
}
Tensor make_cpu(int64_t n, std::optional<Device>) { return filled(n, static_cast<float>(n)); }
Tensor make_meta(int64_t n, std::optional<Device>) { return filled(n, 0, kMeta); }
Tensor scale_cpu(const Tensor& x, double s) {
  Tensor out = filled(x.numel(), 0);
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] * static_cast<float>(s);
  return out;
}
const TypedOp<Tensor(const Tensor&)>& ident_op();
Tensor twice_composite(const Tensor& x) { return ident_op()(ident_op()(x)); }

// Registers the test ops once; the library is open, so they behave as builtins do.
void register_test_ops() {
  static const bool done = [] {
    Library lib("disptest");
    lib.def("ident(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("ident", DispatchKey::kCPU, &ident_cpu)
        .impl("ident", DispatchKey::kMeta, &ident_meta);
    lib.def("layered(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("layered", DispatchKey::kCPU, &ident_cpu)
        .impl_boxed("layered", DispatchKey::kAutograd, [](const OperatorHandle& op, DispatchKeySet ks, Stack& s) {
          trace().push_back("Autograd");
          Dispatcher::singleton().redispatch_boxed(op, ks & DispatchKeySet::below(DispatchKey::kAutograd), s);
        });
    lib.def("make(int n, *, Device? device=None) -> Tensor", OpKind::kFactory)
        .impl("make", DispatchKey::kCPU, &make_cpu)
        .impl("make", DispatchKey::kMeta, &make_meta);
    lib.def("scale(Tensor x, float s) -> Tensor", OpKind::kUnary).impl("scale", DispatchKey::kCPU, &scale_cpu);
    lib.def("twice(Tensor x) -> Tensor").impl("twice", DispatchKey::kCompositeImplicit, &twice_composite);
    lib.def("boxed_only(Tensor x) -> Tensor")
        .impl_boxed("boxed_only", DispatchKey::kCPU, [](const OperatorHandle&, DispatchKeySet, Stack& s) {
          Tensor x = s[0].to_tensor();
          s.clear();
          s.emplace_back(scale_cpu(x, 3.0));
        });
    return true;
  }();
  (void)done;
}

const TypedOp<Tensor(const Tensor&)>& ident_op() {
  static const TypedOp<Tensor(const Tensor&)> op("disptest::ident");
  return op;
}
Tensor ident(const Tensor& x) { return ident_op()(x); }
Tensor layered(const Tensor& x) {
  static const TypedOp<Tensor(const Tensor&)> op("disptest::layered");
  return op(x);
}
Tensor twice(const Tensor& x) {
  static const TypedOp<Tensor(const Tensor&)> op("disptest::twice");
  return op(x);
}
Tensor make(int64_t n, std::optional<Device> device = std::nullopt) {
  static const TypedOp<Tensor(int64_t, std::optional<Device>)> op("disptest::make");
  return op(n, device);
}

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_ops();
    trace().clear();
  }
};

// ---- Dispatch order and keys ----

TEST_F(DispatcherTest, BackendKeyOfTheTensorPicksTheKernel) {
  ident(filled(2, 1));
  ident(filled(2, 1, kMeta));
  EXPECT_THAT(trace(), ElementsAre("CPU", "Meta"));
}

// A tensor that requires grad carries the Autograd key (plain tensors do not:
// it is not a default-on key), and the op's own Autograd kernel runs first.
TEST_F(DispatcherTest, HigherKeyRunsFirstAndRedispatchesBelowItself) {
  layered(filled(1, 1));
  EXPECT_THAT(trace(), ElementsAre("CPU"));
  trace().clear();
  layered(filled(1, 1).requires_grad_());
  EXPECT_THAT(trace(), ElementsAre("Autograd", "CPU"));
}

TEST_F(DispatcherTest, ExcludedKeyIsSkippedAndExclusionWinsOverInclusion) {
  {
    IncludeDispatchKeyGuard include(DispatchKey::kAutograd);
    layered(filled(1, 1));
    ExcludeDispatchKeyGuard exclude(DispatchKey::kAutograd);
    layered(filled(1, 1));
  }
  EXPECT_THAT(trace(), ElementsAre("Autograd", "CPU", "CPU"));
  trace().clear();
  layered(filled(1, 1));  // guards restored on scope exit
  EXPECT_THAT(trace(), ElementsAre("CPU"));
}

TEST_F(DispatcherTest, GuardsNestAndRestoreThreadLocalState) {
  const LocalDispatchKeySet before = local_dispatch_key_set();
  {
    EnablePreDispatchGuard pre;
    EXPECT_TRUE(local_dispatch_key_set().included.has(DispatchKey::kPreDispatch));
    {
      EnablePythonDispatcherGuard on;
      DisablePythonDispatcherGuard off;  // the innermost decides, as c10's PythonDispatcherTLS
      EXPECT_FALSE(override_layer_enabled());
      EXPECT_TRUE(local_dispatch_key_set().excluded.has(DispatchKey::kPythonDispatcher));
      EXPECT_FALSE(compute_dispatch_key_set({}).has(DispatchKey::kPythonDispatcher));
    }
    EXPECT_FALSE(local_dispatch_key_set().included.has(DispatchKey::kPythonDispatcher));
    EXPECT_FALSE(local_dispatch_key_set().excluded.has(DispatchKey::kPythonDispatcher));
  }
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_EQ(local_dispatch_key_set().excluded, before.excluded);
}

// Guards ended out of order (first in, first out) leave no key behind: each
// takes out the keys it added (Note [Out-of-order guard release]); they used
// to restore the set they saved, which still held the other guard's key.
TEST_F(DispatcherTest, GuardsEndedOutOfOrderLeaveNoKeyBehind) {
  const LocalDispatchKeySet before = local_dispatch_key_set();
  {
    std::optional<IncludeDispatchKeyGuard> pre;
    std::optional<EnablePythonDispatcherGuard> on;
    pre.emplace(DispatchKey::kPreDispatch);
    on.emplace();
    pre.reset();
    EXPECT_FALSE(local_dispatch_key_set().included.has(DispatchKey::kPreDispatch));
    EXPECT_TRUE(override_layer_enabled());  // the later guard's key stays until it ends
    on.reset();
  }
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_FALSE(override_layer_enabled());
  {
    std::optional<ExcludeDispatchKeyGuard> a, b;
    a.emplace(DispatchKey::kAutograd);
    b.emplace(DispatchKeySet{DispatchKey::kPython, DispatchKey::kAutograd});  // Autograd already excluded
    a.reset();
    EXPECT_TRUE(local_dispatch_key_set().excluded.has(DispatchKey::kPython));
    b.reset();
  }
  EXPECT_EQ(local_dispatch_key_set().excluded, before.excluded);
  {
    // A key that was already in the set stays after the inner guard ends.
    EnablePreDispatchGuard outer;
    { EnablePreDispatchGuard inner; }
    EXPECT_TRUE(local_dispatch_key_set().included.has(DispatchKey::kPreDispatch));
  }
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
}

TEST_F(DispatcherTest, GuardsAreThreadLocal) {
  EnablePreDispatchGuard pre;
  bool other_thread_sees_it = true;
  std::thread([&] { other_thread_sees_it = local_dispatch_key_set().included.has(DispatchKey::kPreDispatch); }).join();
  EXPECT_FALSE(other_thread_sees_it);
}

TEST_F(DispatcherTest, MissingKernelIsAClearError) {
  ExcludeDispatchKeyGuard no_backends({DispatchKey::kCPU, DispatchKey::kMeta});
  EXPECT_THAT([] { ident(filled(1, 1)); },
              ThrowsMessage<NotImplementedError>(HasSubstr("disptest::ident: no kernel for dispatch keys")));
}

TEST_F(DispatcherTest, FactoriesPickTheBackendFromTheirDeviceArgument) {
  EXPECT_TRUE(make(3).device().is_cpu());
  EXPECT_EQ(make(3).to_vector<float>(), std::vector<float>({3, 3, 3}));
  EXPECT_TRUE(make(3, kMeta).device().is_meta());
  EXPECT_TRUE(Dispatcher::singleton().get("disptest::make").has_kernel(DispatchKey::kBackendSelect));
}

TEST_F(DispatcherTest, BoxedAndUnboxedCallsReachTheSameKernels) {
  const OperatorHandle& scale = Dispatcher::singleton().get("disptest::scale");
  Stack s = scale.schema().bind({filled(2, 2), Value(1.5)});
  scale.call_boxed(s);
  EXPECT_EQ(s.at(0).to_tensor().to_vector<float>(), std::vector<float>({3, 3}));
  Tensor typed = scale.call<Tensor>(filled(2, 2), 1.5);
  EXPECT_EQ(typed.to_vector<float>(), std::vector<float>({3, 3}));
  // A boxed-only kernel still serves a typed call (it boxes the arguments).
  const TypedOp<Tensor(const Tensor&)> boxed_only("disptest::boxed_only");
  EXPECT_EQ(boxed_only(filled(2, 2)).to_vector<float>(), std::vector<float>({6, 6}));
}

TEST_F(DispatcherTest, DumpShowsKernelsFallbacksAndFallthroughs) {
  const std::string dump = Dispatcher::singleton().dump_dispatch_table(Dispatcher::singleton().get("disptest::layered"));
  EXPECT_THAT(dump, HasSubstr("disptest::layered (unary)"));
  EXPECT_THAT(dump, HasSubstr("CPU: kernel [disptest::layered/CPU, unboxed]"));
  EXPECT_THAT(dump, HasSubstr("Autograd: kernel [disptest::layered/Autograd, boxed]"));
  EXPECT_THAT(dump, HasSubstr("Python: fallback [python_mode_fallback]"));
  EXPECT_THAT(dump, HasSubstr("Meta: fallthrough"));
  // Highest priority first.
  EXPECT_LT(dump.find("PythonDispatcher"), dump.find("CUDA"));
  EXPECT_LT(dump.find("CUDA"), dump.find("CPU:"));
}

// A typed call whose kernel is a fallback with an entry for its signature
// calls the entry; other signatures, and boxed calls, take the boxed fallback.
// See Note [Typed fallback entries].
Tensor typed_autograd_entry(const OperatorHandle& op, DispatchKeySet ks, const Tensor& x) {
  trace().push_back("typed " + op.name());
  return Dispatcher::singleton().redispatch<Tensor, const Tensor&>(op, ks & DispatchKeySet::below(DispatchKey::kAutograd), x);
}

TEST_F(DispatcherTest, FallbackTypedEntryServesItsSignatureOnly) {
  Dispatcher& d = Dispatcher::singleton();
  struct Restore {  // the builtin Autograd fallback comes back whatever happens
    KernelFunction saved = Dispatcher::singleton().fallback(DispatchKey::kAutograd);
    ~Restore() { Dispatcher::singleton().register_fallback(DispatchKey::kAutograd, saved); }
  } restore;
  KernelFunction k = KernelFunction::from_boxed(
      [](const OperatorHandle& op, DispatchKeySet ks, Stack& s) {
        trace().push_back("boxed " + op.name());
        Dispatcher::singleton().redispatch_boxed(op, ks & DispatchKeySet::below(DispatchKey::kAutograd), s);
      },
      "test_fallback");
  k.add_typed(&typed_autograd_entry);
  d.register_fallback(DispatchKey::kAutograd, k);
  EXPECT_THAT(d.dump_dispatch_table(d.get("disptest::ident")),
              HasSubstr("Autograd: fallback [test_fallback, 1 typed entries]"));

  IncludeDispatchKeyGuard autograd(DispatchKey::kAutograd);
  EXPECT_EQ(ident(filled(2, 1)).to_vector<float>(), std::vector<float>({1, 1}));
  EXPECT_THAT(trace(), ElementsAre("typed disptest::ident", "CPU"));
  trace().clear();
  const OperatorHandle& scale = d.get("disptest::scale");  // Tensor(const Tensor&, double): no entry
  EXPECT_EQ(scale.call<Tensor>(filled(2, 2), 1.5).to_vector<float>(), std::vector<float>({3, 3}));
  Stack s = d.get("disptest::ident").schema().bind({filled(1, 1)});
  d.get("disptest::ident").call_boxed(s);
  EXPECT_THAT(trace(), ElementsAre("boxed disptest::scale", "boxed disptest::ident", "CPU"));
}

// ---- Registry ----

TEST_F(DispatcherTest, RegistryRejectsDuplicatesAndSuggestsOverloads) {
  EXPECT_THAT([] { Library("disptest").def("ident(Tensor x) -> Tensor"); },
              ThrowsMessage<Error>(HasSubstr("op disptest::ident is already registered")));
  EXPECT_THAT([] { Dispatcher::singleton().get("aten::add"); },
              ThrowsMessage<Error>(HasSubstr("did you mean one of: aten::add.Scalar, aten::add.Tensor?")));
  EXPECT_THAT([] { Dispatcher::singleton().get("aten::no_such_op"); },
              ThrowsMessage<Error>(HasSubstr("unknown op 'aten::no_such_op'")));
  EXPECT_NE(Dispatcher::singleton().find("add.Tensor"), nullptr);
}

TEST_F(DispatcherTest, KernelSignatureIsCheckedAgainstTheSchema) {
  Library lib("disptest");
  EXPECT_THAT([&] { lib.impl("scale", DispatchKey::kMeta, +[](const Tensor& x, int64_t s) { return x; }); },
              ThrowsMessage<Error>(HasSubstr("parameter 2 ('s') is float in the schema")));
  EXPECT_THAT([&] { lib.impl("scale", DispatchKey::kMeta, +[](const Tensor& x) { return x; }); },
              ThrowsMessage<Error>(HasSubstr("takes 1 argument(s) but the schema has 2")));
  EXPECT_THAT([&] { lib.impl("nope", DispatchKey::kCPU, &ident_cpu); },
              ThrowsMessage<Error>(HasSubstr("unknown op 'disptest::nope'")));
}

// ---- Modes ----

class LoggingMode : public DispatchMode {
 public:
  LoggingMode(std::vector<std::string>* log, std::string tag) : log_(log), tag_(std::move(tag)) {}
  bool dispatch(OpCall& call) override {
    log_->push_back(tag_ + call.name());
    call.proceed();
    return true;
  }

 private:
  std::vector<std::string>* log_;
  std::string tag_;
};

TEST_F(DispatcherTest, ModeSeesFactoryFunctionsAndOps) {
  std::vector<std::string> log;
  LoggingMode mode(&log, "");
  {
    ModeGuard g(mode);
    ident(make(2));
  }
  ident(make(2));  // not recorded after the scope
  EXPECT_THAT(log, ElementsAre("disptest::make", "disptest::ident"));
}

TEST_F(DispatcherTest, NestedModesEachSeeTheOpInnermostFirst) {
  std::vector<std::string> log;
  LoggingMode outer(&log, "outer:"), inner(&log, "inner:");
  ModeGuard g1(outer);
  ModeGuard g2(inner);
  ident(filled(1, 1));
  EXPECT_THAT(log, ElementsAre("inner:disptest::ident", "outer:disptest::ident"));
  EXPECT_THAT(trace(), ElementsAre("CPU"));
}

TEST_F(DispatcherTest, ModeIsPoppedInsideItsOwnHandler) {
  struct Reentrant : DispatchMode {
    std::vector<size_t> depths;
    bool dispatch(OpCall& call) override {
      depths.push_back(mode_stack().size());
      // Calling the op again from the handler must not re-enter this mode.
      Tensor again = ident(call.arg(0).to_tensor());
      call.stack().clear();
      call.stack().emplace_back(again);
      return true;
    }
  };
  Reentrant mode;
  {
    ModeGuard g(mode);
    EXPECT_EQ(mode_stack().size(), 1u);
    ident(filled(1, 1));
    EXPECT_EQ(mode_stack().size(), 1u);  // restored after the handler
  }
  EXPECT_THAT(mode.depths, ElementsAre(0u));
  EXPECT_THAT(trace(), ElementsAre("CPU"));
}

TEST_F(DispatcherTest, DecliningModeLetsTheOpContinue) {
  struct Decliner : DispatchMode {
    int seen = 0;
    bool dispatch(OpCall&) override {
      ++seen;
      return false;
    }
  };
  std::vector<std::string> log;
  LoggingMode outer(&log, "outer:");
  Decliner decliner;
  ModeGuard g1(outer);
  ModeGuard g2(decliner);
  Tensor out = Dispatcher::singleton().get("disptest::scale").call<Tensor>(filled(2, 2), 2.0);
  EXPECT_EQ(decliner.seen, 1);
  EXPECT_THAT(log, ElementsAre("outer:disptest::scale"));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>({4, 4}));
}

TEST_F(DispatcherTest, ModeMayReplaceTheResult) {
  struct Replace : DispatchMode {
    bool dispatch(OpCall& call) override {
      call.stack().clear();
      call.stack().emplace_back(filled(1, 42));
      return true;
    }
  };
  Replace mode;
  ModeGuard g(mode);
  EXPECT_EQ(ident(filled(1, 1)).to_vector<float>(), std::vector<float>({42}));
  EXPECT_TRUE(trace().empty());  // the kernel never ran
}

TEST_F(DispatcherTest, ThrowingHandlerLeavesModeStackAndKeysIntact) {
  struct Thrower : DispatchMode {
    bool dispatch(OpCall&) override { throw Error("boom"); }
  };
  Thrower mode;
  ModeGuard g(mode);
  const LocalDispatchKeySet before = local_dispatch_key_set();
  EXPECT_THROW(ident(filled(1, 1)), Error);
  EXPECT_EQ(mode_stack().size(), 1u);
  EXPECT_EQ(local_dispatch_key_set().modes, before.modes);
  EXPECT_TRUE(local_dispatch_key_set().modes.has(DispatchKey::kPython));
}

TEST_F(DispatcherTest, FunctionModeSeesCompositesDispatchModeSeesTheirParts) {
  struct FunctionLogger : FunctionMode {
    std::vector<std::string> log;
    bool dispatch(OpCall& call) override {
      log.push_back(call.name());
      call.proceed();
      return true;
    }
  };
  std::vector<std::string> dispatch_log;
  FunctionLogger fmode;
  LoggingMode dmode(&dispatch_log, "");
  ModeGuard g1(fmode);
  ModeGuard g2(dmode);
  twice(filled(1, 1));
  EXPECT_THAT(fmode.log, ElementsAre("disptest::twice"));
  EXPECT_THAT(dispatch_log, ElementsAre("disptest::ident", "disptest::ident"));
}

// Records its tag and declines, so every handler in the chain runs.
struct Tagger : DispatchMode {
  Tagger(std::vector<std::string>* log, std::string tag, ModeKind kind) : log(log), tag(std::move(tag)), kind_(kind) {}
  bool dispatch(OpCall&) override {
    log->push_back(tag);
    return false;
  }
  ModeKind kind() const override { return kind_; }
  std::vector<std::string>* log;
  std::string tag;
  ModeKind kind_;
};

struct TaggingSubclass : TensorSubclass {
  TaggingSubclass(std::vector<std::string>* log, std::string tag, ModeKind kind) : log(log), tag(std::move(tag)), kind_(kind) {}
  bool dispatch(OpCall& call) override {
    log->push_back(tag + ":" + call.name());
    return false;
  }
  ModeKind kind() const override { return kind_; }
  std::string_view name() const override { return "TaggingSubclass"; }
  std::vector<std::string>* log;
  std::string tag;
  ModeKind kind_;
};

TEST_F(DispatcherTest, HandlersRunInPyTorchOrderUserModesSubclassesProxyFake) {
  std::vector<std::string> log;
  Tagger fake(&log, "fake_mode", ModeKind::kFake), proxy(&log, "proxy_mode", ModeKind::kProxy);
  Tagger user1(&log, "user_mode_outer", ModeKind::kUser), user2(&log, "user_mode_inner", ModeKind::kUser);
  // Pushed in an arbitrary order: infra modes still come last.
  ModeGuard g1(fake);
  ModeGuard g2(user1);
  ModeGuard g3(proxy);
  ModeGuard g4(user2);
  Tensor x = with_subclass(filled(1, 1), std::make_shared<TaggingSubclass>(&log, "user_subclass", ModeKind::kUser));
  ident(x);
  EXPECT_THAT(log, ElementsAre("user_mode_inner", "user_mode_outer", "user_subclass:disptest::ident", "proxy_mode",
                               "fake_mode"));
  EXPECT_THAT(trace(), ElementsAre("CPU"));
}

TEST_F(DispatcherTest, SubclassHandlerSeesEveryOpItsTensorTakesPartIn) {
  struct Doubler : TensorSubclass {
    std::vector<std::string> ops;
    bool dispatch(OpCall& call) override {
      ops.push_back(call.name());
      call.proceed();
      return true;
    }
    std::string_view name() const override { return "Doubler"; }
  };
  auto handler = std::make_shared<Doubler>();
  Tensor x = with_subclass(filled(2, 2), handler);
  EXPECT_TRUE(x.key_set().has(DispatchKey::kPython));
  Tensor y = Dispatcher::singleton().get("disptest::scale").call<Tensor>(x, 2.0);
  ident(filled(1, 1));  // plain tensors do not reach the handler
  EXPECT_THAT(handler->ops, ElementsAre("disptest::scale"));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>({4, 4}));
}

TEST_F(DispatcherTest, InfraModeSlotsNestWithGuardsButNotWithPush) {
  std::vector<std::string> log;
  auto a = std::make_shared<Tagger>(&log, "a", ModeKind::kFake);
  auto b = std::make_shared<Tagger>(&log, "b", ModeKind::kFake);
  {
    ModeGuard ga(a);
    {
      ModeGuard gb(b);
      EXPECT_EQ(infra_mode(ModeKind::kFake), b);
    }
    EXPECT_EQ(infra_mode(ModeKind::kFake), a);
    EXPECT_THAT([&] { push_mode(b); }, ThrowsMessage<Error>(HasSubstr("a fake mode")));
  }
  EXPECT_EQ(infra_mode(ModeKind::kFake), nullptr);
  EXPECT_FALSE(dispatch_mode_enabled());
}

TEST_F(DispatcherTest, PreDispatchModeCapturesAboveDecompositions) {
  struct PreLogger : DispatchMode {
    std::vector<std::string> log;
    bool dispatch(OpCall& call) override {
      log.push_back(call.name());
      call.proceed();
      return true;
    }
    DispatchKey key() const override { return DispatchKey::kPreDispatch; }
  };
  PreLogger mode;
  {
    ModeGuard g(mode);
    twice(filled(1, 1));
  }
  EXPECT_THAT(mode.log, ElementsAre("disptest::twice"));
}

}  // namespace
}  // namespace opspec
