// Tests for nn::Module, the layers, and the global forward hooks, with the
// Foo/Bar models of PyTorch's DebugMode tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/reference_models_test_util.h"
#include "runtime/nn/module.h"
#include "runtime/ops/ops.h"
#include "runtime/dispatch/op_names_test_util.h"

namespace opspec {
namespace module_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;

using nn::Bar;
using nn::Foo;

// Thrower: forward fails after calling a child.
struct Thrower : nn::Module {
  std::shared_ptr<nn::ReLU> act;
  Thrower() : Module("Thrower") { act = register_module("act", std::make_shared<nn::ReLU>()); }
  Tensor forward(const Tensor& x) override {
    (*act)(x);
    throw std::runtime_error("boom");
  }
};

using RecordingMode = test_util::OpNames;  // records the names of the ops it sees

// EventLog: registers hooks that log "pre X" / "post X" and check that
// current_module_fqn() agrees with the fqn they are given.
struct EventLog {
  std::vector<std::string> events;
  nn::ForwardHookHandle handle;
  EventLog() {
    handle = nn::register_module_forward_hooks(
        [this](const nn::Module&, std::string_view fqn) {
          EXPECT_EQ(nn::current_module_fqn(), fqn);
          events.push_back(str_cat("pre ", fqn));
        },
        [this](const nn::Module&, std::string_view fqn) {
          EXPECT_EQ(nn::current_module_fqn(), fqn);
          events.push_back(str_cat("post ", fqn));
        });
  }
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& params) {
  std::vector<std::string> out;
  for (const auto& [n, t] : params) out.push_back(n);
  return out;
}

class NnModuleTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(0); }
};

// ---- Structure ----

TEST_F(NnModuleTest, NamedParametersAreRecursiveWithDottedNames) {
  Bar bar;
  const auto params = bar.named_parameters();
  EXPECT_THAT(names_of(params), ElementsAre("abc.l1.weight", "abc.l1.bias", "abc.l2.weight", "abc.l2.bias",
                                            "xyz.weight", "xyz.bias"));
  for (const auto& [name, t] : params) {
    if (name.ends_with("weight")) {
      EXPECT_THAT(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), ElementsAre(4, 4)) << name;
    } else {
      EXPECT_THAT(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), ElementsAre(4)) << name;
    }
    EXPECT_EQ(t.dtype(), DType::kFloat32);
  }
  EXPECT_TRUE(params[0].second.is_same(bar.abc->l1->weight()));
  EXPECT_THAT(bar.named_parameters(/*recurse=*/false), IsEmpty());
  EXPECT_THAT(names_of(bar.xyz->named_parameters(false)), ElementsAre("weight", "bias"));
}

TEST_F(NnModuleTest, NamedChildrenAndModulesInRegistrationOrder) {
  Bar bar;
  const auto children = bar.named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].first, "abc");
  EXPECT_EQ(children[0].second.get(), bar.abc.get());
  EXPECT_EQ(children[1].first, "xyz");
  std::vector<std::string> names;
  for (const auto& [n, m] : bar.named_modules()) names.push_back(str_cat(n, ":", m->type_name()));
  EXPECT_THAT(names, ElementsAre(":Bar", "abc:Foo", "abc.l1:Linear", "abc.l2:Linear", "xyz:Linear"));
}

TEST_F(NnModuleTest, ParameterLooksUpDottedNamesAndNamesWhatIsMissing) {
  Bar bar;
  EXPECT_TRUE(bar.parameter("abc.l2.bias").is_same(*bar.abc->l2->bias()));
  EXPECT_TRUE(bar.xyz->parameter("weight").is_same(bar.xyz->weight()));
  EXPECT_THAT([&] { bar.parameter("abc.l1.foo"); },
              ThrowsMessage<Error>(AllOf(HasSubstr("Bar has no parameter 'abc.l1.foo'"),
                                         HasSubstr("Bar.abc.l1 (Linear) has no parameter 'foo'"),
                                         HasSubstr("weight, bias"))));
  EXPECT_THAT([&] { bar.parameter("abc.zz.weight"); },
              ThrowsMessage<Error>(HasSubstr("Bar.abc (Foo) has no submodule 'zz'")));
  EXPECT_THAT([&] { bar.parameter("weight"); }, ThrowsMessage<Error>(HasSubstr("(it has: none)")));
}

TEST_F(NnModuleTest, RegistrationRejectsBadNames) {
  Bar bar;
  EXPECT_THAT([&] { bar.register_module("abc", std::make_shared<nn::ReLU>()); },
              ThrowsMessage<Error>(HasSubstr("attribute 'abc' already exists")));
  EXPECT_THAT([&] { bar.register_parameter("xyz", ops::zeros({1})); },
              ThrowsMessage<Error>(HasSubstr("attribute 'xyz' already exists")));
  EXPECT_THAT([&] { bar.register_module("a.b", std::make_shared<nn::ReLU>()); },
              ThrowsMessage<Error>(HasSubstr("can't contain \".\", got: a.b")));
  EXPECT_THAT([&] { bar.register_parameter("", ops::zeros({1})); },
              ThrowsMessage<Error>(HasSubstr("can't be empty")));
  EXPECT_THAT([&] { bar.register_module("n", std::shared_ptr<nn::ReLU>()); },
              ThrowsMessage<Error>(HasSubstr("null module")));
  EXPECT_THAT([&] { bar.register_parameter("u", Tensor()); }, ThrowsMessage<Error>(HasSubstr("undefined tensor")));
  // The failed registrations left nothing behind.
  EXPECT_EQ(bar.named_children().size(), 2u);
  EXPECT_THAT(bar.named_parameters(false), IsEmpty());
}

// See Note [Parameters require grad].
TEST_F(NnModuleTest, ParametersRequireGradAndBuffersDoNot) {
  nn::Linear lin(3, 2);
  EXPECT_TRUE(lin.weight().requires_grad());
  EXPECT_TRUE(lin.weight().is_leaf());
  EXPECT_TRUE(lin.bias()->requires_grad());
  nn::BatchNorm2d bn(4);
  for (const auto& [name, b] : bn.named_buffers()) EXPECT_FALSE(b.requires_grad()) << name;
  // A forward records history (AddmmBackward0); under no_grad it records none.
  EXPECT_FALSE(lin(ops::randn({5, 3})).is_leaf());
  {
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(lin(ops::randn({5, 3})).is_leaf());
  }
  // requires_grad_(false) freezes the module and its children, as PyTorch's.
  Bar bar;
  bar.requires_grad_(false);
  for (const auto& [name, p] : bar.named_parameters()) EXPECT_FALSE(p.requires_grad()) << name;
  bar.abc->requires_grad_();
  EXPECT_TRUE(bar.abc->l1->weight().requires_grad());
  EXPECT_FALSE(bar.xyz->weight().requires_grad());
}

TEST_F(NnModuleTest, RegisterParameterMakesALeafOrKeepsItsFlag) {
  Bar bar;
  const Tensor w = ops::randn({2}).requires_grad_();
  const Tensor non_leaf = ops::mul(w, 2.0);
  const Tensor& p = bar.register_parameter("scaled", non_leaf);
  // As nn.Parameter(t): a leaf sharing the data, not the op's result itself.
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(p.is_alias_of(non_leaf));
  EXPECT_FALSE(bar.register_parameter("frozen", ops::zeros({2}), /*requires_grad=*/false).requires_grad());
  // An integer parameter must say it needs no gradient; nothing is registered otherwise.
  EXPECT_THAT([&] { bar.register_parameter("steps", ops::zeros({1}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(AllOf(HasSubstr("register_parameter('steps')"),
                                         HasSubstr("Only Tensors of floating point and complex dtype"))));
  EXPECT_FALSE(bar.register_parameter("steps", ops::zeros({1}, {.dtype = DType::kInt64}), false).requires_grad());
}

TEST_F(NnModuleTest, SharedModulesAndParametersAreListedOnce) {
  auto lin = std::make_shared<nn::Linear>(3, 3);
  nn::Sequential seq({lin, std::make_shared<nn::ReLU>(), lin});
  EXPECT_THAT(names_of(seq.named_parameters()), ElementsAre("0.weight", "0.bias"));
  const auto children = seq.named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].first, "0");
  EXPECT_EQ(children[1].first, "1");
  // The tied module still runs twice.
  const Tensor x = ops::randn({2, 3});
  const Tensor expected = ops::linear(ops::relu(ops::linear(x, lin->weight(), lin->bias())), lin->weight(), lin->bias());
  EXPECT_TRUE(ops::allclose(seq(x), expected));
}

// ---- Layers ----

TEST_F(NnModuleTest, LinearMatchesOpsLinearWithItsParameters) {
  nn::Linear lin(5, 3);
  EXPECT_EQ(lin.type_name(), "Linear");
  EXPECT_EQ(lin.in_features(), 5);
  EXPECT_EQ(lin.out_features(), 3);
  const Tensor x2 = ops::randn({4, 5});
  const Tensor y2 = lin(x2);
  EXPECT_THAT(std::vector<int64_t>(y2.sizes().begin(), y2.sizes().end()), ElementsAre(4, 3));
  EXPECT_TRUE(ops::equal(y2, ops::linear(x2, lin.parameter("weight"), lin.parameter("bias"))));
  EXPECT_TRUE(ops::allclose(y2, ops::add(ops::mm(x2, ops::t(lin.weight())), *lin.bias()), 1e-5, 1e-6));
  const Tensor x3 = ops::randn({2, 4, 5});
  EXPECT_TRUE(ops::equal(lin(x3), ops::linear(x3, lin.weight(), lin.bias())));

  nn::Linear no_bias(5, 3, /*bias=*/false);
  EXPECT_FALSE(no_bias.bias().has_value());
  EXPECT_THAT(names_of(no_bias.named_parameters()), ElementsAre("weight"));
  EXPECT_TRUE(ops::equal(no_bias(x2), ops::mm(x2, ops::t(no_bias.weight()))));
  EXPECT_THAT([] { nn::Linear bad(-1, 2); }, ThrowsMessage<Error>(HasSubstr("non-negative")));
}

TEST_F(NnModuleTest, LinearInitIsUniformWithinPyTorchBounds) {
  nn::Linear lin(16, 32);
  const double bound = 1.0 / std::sqrt(16.0);  // 0.25
  for (const Tensor& t : {lin.weight(), *lin.bias()}) {
    const auto v = t.to_vector<float>();
    float lo = v[0], hi = v[0];
    for (float e : v) {
      EXPECT_GE(e, -bound);
      EXPECT_LE(e, bound);
      lo = std::min(lo, e);
      hi = std::max(hi, e);
    }
    // Spread over the range (32 or 512 uniform draws), not all in one half.
    EXPECT_LT(lo, -0.5 * bound);
    EXPECT_GT(hi, 0.5 * bound);
  }
  // The default generator drives it: the same seed gives the same module.
  manual_seed(7);
  nn::Linear a(8, 8);
  manual_seed(7);
  nn::Linear b(8, 8);
  EXPECT_TRUE(ops::equal(a.weight(), b.weight()));
  EXPECT_TRUE(ops::equal(*a.bias(), *b.bias()));
  EXPECT_FALSE(ops::equal(a.weight(), nn::Linear(8, 8).weight()));
}

TEST_F(NnModuleTest, LinearOnMetaHasMetaParameters) {
  nn::Linear lin(4, 3, true, {.device = kMeta});
  EXPECT_TRUE(lin.weight().device().is_meta());
  EXPECT_TRUE(lin.bias()->device().is_meta());
  const Tensor y = lin(ops::empty({2, 4}, {.device = kMeta}));
  EXPECT_TRUE(y.device().is_meta());
  EXPECT_THAT(std::vector<int64_t>(y.sizes().begin(), y.sizes().end()), ElementsAre(2, 3));
}

TEST_F(NnModuleTest, ReLUAndSequentialChainInOrder) {
  auto l1 = std::make_shared<nn::Linear>(4, 3);
  auto act = std::make_shared<nn::ReLU>();
  nn::Sequential seq({l1, act});
  auto l2 = std::make_shared<nn::Linear>(3, 2);
  seq.push_back(l2);
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq[2].get(), l2.get());
  EXPECT_THAT([&] { seq[3]; }, ThrowsMessage<Error>(HasSubstr("index 3 is out of range (size 3)")));
  EXPECT_THAT(names_of(seq.named_parameters()), ElementsAre("0.weight", "0.bias", "2.weight", "2.bias"));
  const Tensor x = ops::randn({5, 4});
  const Tensor expected =
      ops::linear(ops::relu(ops::linear(x, l1->weight(), l1->bias())), l2->weight(), l2->bias());
  EXPECT_TRUE(ops::equal(seq(x), expected));
  // The order matters: relu in the middle clamps negatives.
  const Tensor mid = (*act)((*l1)(x));
  for (float v : mid.to_vector<float>()) EXPECT_GE(v, 0.0f);

  EventLog log;
  seq(x);
  EXPECT_THAT(log.events, ElementsAre("pre Sequential", "pre Sequential.0", "post Sequential.0", "pre Sequential.1",
                                      "post Sequential.1", "pre Sequential.2", "post Sequential.2",
                                      "post Sequential"));
  nn::Sequential empty;
  EXPECT_TRUE(empty(x).is_same(x));
}

TEST_F(NnModuleTest, LayerNormNormalizesEachRow) {
  nn::LayerNorm ln({8});
  EXPECT_THAT(names_of(ln.named_parameters()), ElementsAre("weight", "bias"));
  EXPECT_TRUE(ops::equal(*ln.weight(), ops::ones({8})));
  EXPECT_TRUE(ops::equal(*ln.bias(), ops::zeros({8})));
  const Tensor x = ops::add(ops::mul(ops::randn({3, 8}), 5.0), 2.0);
  const Tensor y = ln(x);
  EXPECT_TRUE(ops::equal(y, ops::layer_norm(x, {8}, ln.weight(), ln.bias(), 1e-5)));
  const auto v = y.to_vector<float>();
  for (int r = 0; r < 3; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < 8; ++c) mean += v[r * 8 + c];
    mean /= 8;
    for (int c = 0; c < 8; ++c) var += (v[r * 8 + c] - mean) * (v[r * 8 + c] - mean);
    var /= 8;  // biased, as layer_norm
    EXPECT_NEAR(mean, 0.0, 1e-5) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-3) << "row " << r;
  }
  nn::LayerNorm plain({8}, 1e-5, /*elementwise_affine=*/false);
  EXPECT_THAT(plain.named_parameters(), IsEmpty());
  EXPECT_TRUE(ops::allclose(plain(x), y, 1e-5, 1e-6));
  nn::LayerNorm no_bias({8}, 1e-5, true, /*bias=*/false);
  EXPECT_THAT(names_of(no_bias.named_parameters()), ElementsAre("weight"));
}

// ---- Hooks ----

TEST_F(NnModuleTest, HooksSeeQualifiedNamesInOrder) {
  Bar bar;
  EventLog log;
  EXPECT_EQ(nn::current_module_fqn(), "");
  bar(ops::randn({2, 4}));
  EXPECT_EQ(nn::current_module_fqn(), "");
  EXPECT_THAT(log.events, ElementsAre("pre Bar", "pre Bar.abc", "pre Bar.abc.l1", "post Bar.abc.l1",
                                      "pre Bar.abc.l2", "post Bar.abc.l2", "post Bar.abc", "pre Bar.xyz",
                                      "post Bar.xyz", "post Bar"));
}

TEST_F(NnModuleTest, HooksReceiveTheModule) {
  Bar bar;
  std::vector<const nn::Module*> seen;
  auto h = nn::register_module_forward_hooks([&](const nn::Module& m, std::string_view) { seen.push_back(&m); },
                                             nullptr);
  bar(ops::randn({1, 4}));
  EXPECT_THAT(seen, ElementsAre(&bar, bar.abc.get(), bar.abc->l1.get(), bar.abc->l2.get(), bar.xyz.get()));
}

TEST_F(NnModuleTest, ModuleCalledOnItsOwnGetsItsTypeName) {
  Bar bar;
  EventLog log;
  const Tensor x = ops::randn({2, 4});
  (*bar.abc->l1)(x);
  (*bar.abc)(x);
  EXPECT_THAT(log.events, ElementsAre("pre Linear", "post Linear", "pre Foo", "pre Foo.l1", "post Foo.l1",
                                      "pre Foo.l2", "post Foo.l2", "post Foo"));
}

// A grandchild called straight from its grandparent is not a direct child of
// the running module: it is named by its type (See Note [Module fqn]).
TEST_F(NnModuleTest, GrandchildCalledDirectlyGetsItsTypeName) {
  struct Skipper : nn::Module {
    std::shared_ptr<Foo> abc;
    Skipper() : Module("Skipper") { abc = register_module("abc", std::make_shared<Foo>()); }
    Tensor forward(const Tensor& x) override { return (*abc->l1)(x); }
  };
  Skipper s;
  EventLog log;
  s(ops::randn({1, 4}));
  EXPECT_THAT(log.events, ElementsAre("pre Skipper", "pre Linear", "post Linear", "post Skipper"));
}

TEST_F(NnModuleTest, PostHooksRunWhenForwardThrows) {
  Thrower t;
  EventLog log;
  EXPECT_THROW(t(ops::randn({3})), std::runtime_error);
  EXPECT_THAT(log.events, ElementsAre("pre Thrower", "pre Thrower.act", "post Thrower.act", "post Thrower"));
  EXPECT_EQ(nn::current_module_fqn(), "");

  // An op error deep inside: every level is closed, innermost first.
  Bar bar;
  log.events.clear();
  EXPECT_THAT([&] { bar(ops::randn({2, 5})); }, ThrowsMessage<Error>(HasSubstr("aten::addmm")));
  EXPECT_THAT(log.events,
              ElementsAre("pre Bar", "pre Bar.abc", "pre Bar.abc.l1", "post Bar.abc.l1", "post Bar.abc", "post Bar"));
  EXPECT_EQ(nn::current_module_fqn(), "");
}

TEST_F(NnModuleTest, PreHooksRunInOrderAndPostHooksInReverse) {
  std::vector<std::string> events;
  auto hook = [&](std::string tag) {
    return [&events, tag](const nn::Module&, std::string_view fqn) { events.push_back(str_cat(tag, " ", fqn)); };
  };
  auto a = nn::register_module_forward_hooks(hook("preA"), hook("postA"));
  auto b = nn::register_module_forward_hooks(hook("preB"), hook("postB"));
  nn::ReLU relu;
  relu(ops::randn({2}));
  EXPECT_THAT(events, ElementsAre("preA ReLU", "preB ReLU", "postB ReLU", "postA ReLU"));
}

TEST_F(NnModuleTest, HandleUnregistersOnDestructionAndRemove) {
  nn::ReLU relu;
  const Tensor x = ops::randn({2});
  int calls = 0;
  auto count = [&](const nn::Module&, std::string_view) { ++calls; };
  {
    auto h = nn::register_module_forward_hooks(count, count);
    EXPECT_TRUE(h.active());
    relu(x);
    EXPECT_EQ(calls, 2);
  }
  relu(x);
  EXPECT_EQ(calls, 2);

  auto h = nn::register_module_forward_hooks(count, nullptr);
  nn::ForwardHookHandle moved = std::move(h);
  EXPECT_FALSE(h.active());  // NOLINT(bugprone-use-after-move): moved-from handles are empty
  relu(x);
  EXPECT_EQ(calls, 3);
  moved.remove();
  EXPECT_FALSE(moved.active());
  relu(x);
  EXPECT_EQ(calls, 3);
}

TEST_F(NnModuleTest, PreHookThrowingClosesTheHooksThatEntered) {
  std::vector<std::string> events;
  auto a = nn::register_module_forward_hooks(
      [&](const nn::Module&, std::string_view f) { events.push_back(str_cat("preA ", f)); },
      [&](const nn::Module&, std::string_view f) { events.push_back(str_cat("postA ", f)); });
  auto b = nn::register_module_forward_hooks([&](const nn::Module&, std::string_view) { throw Error("hook failed"); },
                                             [&](const nn::Module&, std::string_view f) {
                                               events.push_back(str_cat("postB ", f));
                                             });
  struct Never : nn::Module {
    bool ran = false;
    Never() : Module("Never") {}
    Tensor forward(const Tensor& x) override {
      ran = true;
      return x;
    }
  } never;
  EXPECT_THAT([&] { never(ops::randn({1})); }, ThrowsMessage<Error>(HasSubstr("hook failed")));
  EXPECT_FALSE(never.ran);
  EXPECT_THAT(events, ElementsAre("preA Never", "postA Never"));
  EXPECT_EQ(nn::current_module_fqn(), "");
}

TEST_F(NnModuleTest, PostHookExceptionPropagatesAfterTheOtherPostHooks) {
  std::vector<std::string> events;
  auto a = nn::register_module_forward_hooks(nullptr, [&](const nn::Module&, std::string_view f) {
    events.push_back(str_cat("postA ", f));
  });
  auto b = nn::register_module_forward_hooks(nullptr, [&](const nn::Module&, std::string_view) {
    throw Error("post failed");
  });
  nn::ReLU relu;
  EXPECT_THAT([&] { relu(ops::randn({1})); }, ThrowsMessage<Error>(HasSubstr("post failed")));
  EXPECT_THAT(events, ElementsAre("postA ReLU"));
  EXPECT_EQ(nn::current_module_fqn(), "");
}

TEST_F(NnModuleTest, HooksMayRegisterAndUnregisterHooksWhileRunning) {
  Foo foo;
  std::vector<std::string> events;
  nn::ForwardHookHandle late;
  nn::ForwardHookHandle self;
  self = nn::register_module_forward_hooks(
      [&](const nn::Module&, std::string_view fqn) {
        events.push_back(str_cat("pre ", fqn));
        if (fqn == "Foo") {
          // Registered mid-call: sees later calls, and no unmatched post for Foo.
          late = nn::register_module_forward_hooks(
              [&](const nn::Module&, std::string_view f) { events.push_back(str_cat("late-pre ", f)); },
              [&](const nn::Module&, std::string_view f) { events.push_back(str_cat("late-post ", f)); });
        }
        if (fqn == "Foo.l2") self.remove();  // no post for l2 or Foo afterwards
      },
      [&](const nn::Module&, std::string_view fqn) { events.push_back(str_cat("post ", fqn)); });
  foo(ops::randn({1, 4}));
  EXPECT_THAT(events, ElementsAre("pre Foo", "pre Foo.l1", "late-pre Foo.l1", "late-post Foo.l1", "post Foo.l1",
                                  "pre Foo.l2", "late-pre Foo.l2", "late-post Foo.l2"));
}

TEST_F(NnModuleTest, FqnStackIsPerThreadAndHooksAreGlobal) {
  std::mutex mu;
  std::map<std::thread::id, std::vector<std::string>> per_thread;
  auto h = nn::register_module_forward_hooks(
      [&](const nn::Module&, std::string_view fqn) {
        std::lock_guard<std::mutex> lock(mu);
        per_thread[std::this_thread::get_id()].push_back(std::string(fqn));
      },
      nullptr);
  auto bar = std::make_shared<Bar>();
  auto foo = std::make_shared<Foo>();
  const Tensor x = ops::randn({2, 4});
  std::thread t1([&] {
    for (int i = 0; i < 50; ++i) (*bar)(x);
  });
  std::thread t2([&] {
    for (int i = 0; i < 50; ++i) (*foo)(x);
  });
  t1.join();
  t2.join();
  ASSERT_EQ(per_thread.size(), 2u);
  for (const auto& [id, events] : per_thread) {
    ASSERT_FALSE(events.empty());
    const bool is_bar = events[0] == "Bar";
    const std::vector<std::string> one =
        is_bar ? std::vector<std::string>{"Bar", "Bar.abc", "Bar.abc.l1", "Bar.abc.l2", "Bar.xyz"}
               : std::vector<std::string>{"Foo", "Foo.l1", "Foo.l2"};
    ASSERT_EQ(events.size(), one.size() * 50);
    for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i], one[i % one.size()]);
  }
}

// ---- Modes ----

TEST_F(NnModuleTest, ModesDoNotSeeInitialisation) {
  RecordingMode mode;
  {
    ModeGuard g(mode);
    nn::Linear lin(4, 4);
    nn::LayerNorm ln({4});
    Bar bar;
  }
  EXPECT_THAT(mode.names, IsEmpty());
}

TEST_F(NnModuleTest, ModesSeeTheForwardOps) {
  nn::Linear lin(4, 3);
  Bar bar;
  const Tensor x = ops::randn({2, 4});
  RecordingMode mode;
  {
    ModeGuard g(mode);
    lin(x);
  }
  EXPECT_THAT(mode.names, ElementsAre("aten::t", "aten::addmm"));
  mode.names.clear();
  {
    ModeGuard g(mode);
    bar(x);
  }
  EXPECT_THAT(mode.names,
              ElementsAre("aten::t", "aten::addmm", "aten::t", "aten::addmm", "aten::t", "aten::addmm"));
}

}  // namespace
}  // namespace opspec
