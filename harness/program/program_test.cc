// The key property of the program language: a program records exactly the
// ops, with exactly the arguments, that the equivalent public C++ calls
// record, at the aten level and at the function-mode level. See Note
// [ops.cc conventions] in resolve.h.
#include "harness/program/program.h"

#include <cstdio>
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "harness/program/fixture.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace program_test {

using ::testing::ElementsAre;

// Recorder: logs every op it sees as "aten::name(arg, ...) -> results", with
// tensors named by first appearance (t0, t1, ...) plus their metadata, and
// every other value with its boxed type, so an int 1 differs from 1.0, from
// a wrapped number and from a list [1].
class Recorder : public DispatchMode {
 public:
  explicit Recorder(DispatchKey key) : key_(key) {}
  DispatchKey key() const override { return key_; }
  std::string_view name() const override { return "Recorder"; }

  bool dispatch(OpCall& call) override {
    std::string line = call.name() + "(";
    for (size_t i = 0; i < call.num_args(); ++i) str_append(&line, i ? ", " : "", render(call.arg(i)));
    call.proceed();
    line += ") ->";
    for (const Value& r : call.stack()) str_append(&line, " ", render(r));
    lines.push_back(std::move(line));
    return true;
  }

  std::vector<std::string> lines;

 private:
  std::string tensor(const Tensor& t) {
    if (!t.defined()) return "undefined";
    if (t.is_wrapped_number()) return str_cat("wrapped(", Value(t).to_scalar().str(), ")");
    auto [it, inserted] = ids_.try_emplace(t.impl(), static_cast<int>(ids_.size()));
    if (inserted) seen_.push_back(t);  // kept alive: a freed impl's address must not be reused
    return str_cat("t", it->second, ":", t.meta_str(), t.device().is_cpu() ? "" : t.device().str());
  }
  std::string render(const Value& v) {
    if (v.is_tensor()) return tensor(v.to_tensor());
    if (v.is_tensor_list()) {
      std::string s = "[";
      for (const Tensor& t : v.to_tensor_list()) str_append(&s, s.size() > 1 ? ", " : "", tensor(t));
      return s + "]";
    }
    return str_cat(v.type_name(), ":", v.repr());
  }

  DispatchKey key_;
  std::map<const TensorImpl*, int> ids_;
  std::vector<Tensor> seen_;
};

// Inputs: one set of tensors per case, shared by the C++ and the program run.
struct Inputs {
  Tensor x, y, m, w, b, v, v2, c, c2, u, s, bm;
  std::vector<std::pair<std::string, Value>> named() const {
    return {{"x", x}, {"y", y}, {"m", m}, {"w", w}, {"b", b}, {"v", v}, {"v2", v2},
            {"c", c}, {"c2", c2}, {"u", u}, {"s", s}, {"bm", bm}};
  }
};

Inputs make_inputs() {
  manual_seed(7);
  Inputs in;
  in.x = ops::randn({2, 3});
  in.y = ops::randn({2, 3});
  in.m = ops::randn({3, 4});
  in.w = ops::randn({4, 3});
  in.b = ops::randn({4});
  in.v = ops::randn({3});
  in.v2 = ops::randn({3});
  in.c = ops::gt(in.x, 0.0);
  in.c2 = ops::lt(in.y, 0.5);
  in.u = ops::randn({1, 3});
  in.s = ops::randn({1});
  in.bm = ops::randn({2, 3, 3});
  return in;
}

struct Levels {
  std::vector<std::string> aten, function;
};

Levels record(const std::function<void()>& fn) {
  Recorder aten(DispatchKey::kPython), function(DispatchKey::kFunctionMode);
  {
    ModeGuard g1(aten), g2(function);
    fn();
  }
  return {aten.lines, function.lines};
}

struct Case {
  std::string program;
  std::function<void(const Inputs&)> cpp;
};

// Shorthand for the C++ side; every call below is a public function of ops.h.
using namespace ops;  // NOLINT

std::vector<Case> cases() {
  using I = const Inputs&;
  return {
      // Elementwise binary, tensors and numbers.
      {"add(x, y)", [](I i) { add(i.x, i.y); }},
      {"add(x, 1)", [](I i) { add(i.x, 1); }},
      {"add(x, 2.5, alpha=2)", [](I i) { add(i.x, 2.5, 2); }},
      {"add(x, y, alpha=0.5)", [](I i) { add(i.x, i.y, 0.5); }},
      {"add(x, True)", [](I i) { add(i.x, true); }},
      {"sub(x, 1)", [](I i) { sub(i.x, 1); }},
      {"sub(x, y, alpha=3)", [](I i) { sub(i.x, i.y, 3); }},
      {"rsub(x, 1)", [](I i) { rsub(i.x, 1); }},
      {"mul(x, 2.0)", [](I i) { mul(i.x, 2.0); }},
      {"mul(x, y)", [](I i) { mul(i.x, i.y); }},
      {"div(x, 2)", [](I i) { div(i.x, 2); }},
      {"div(x, y)", [](I i) { div(i.x, i.y); }},
      {"pow(x, 2)", [](I i) { pow(i.x, 2); }},
      {"pow(x, 0.5)", [](I i) { pow(i.x, 0.5); }},
      {"pow(x, y)", [](I i) { pow(i.x, i.y); }},
      {"maximum(x, y)", [](I i) { maximum(i.x, i.y); }},
      {"minimum(x, y)", [](I i) { minimum(i.x, i.y); }},
      // Comparisons: numbers go to the .Scalar overloads, as in PyTorch.
      {"eq(x, y)", [](I i) { eq(i.x, i.y); }},
      {"eq(x, 0)", [](I i) { eq(i.x, 0); }},
      {"ne(x, 1.5)", [](I i) { ne(i.x, 1.5); }},
      {"lt(x, y)", [](I i) { lt(i.x, i.y); }},
      {"le(x, -1)", [](I i) { le(i.x, -1); }},
      {"gt(x, 0.5)", [](I i) { gt(i.x, 0.5); }},
      {"ge(x, y)", [](I i) { ge(i.x, i.y); }},
      {"logical_and(c, c2)", [](I i) { logical_and(i.c, i.c2); }},
      {"logical_or(c, c2)", [](I i) { logical_or(i.c, i.c2); }},
      {"logical_not(c)", [](I i) { logical_not(i.c); }},
      {"where(c, x, y)", [](I i) { where(i.c, i.x, i.y); }},
      {"where(c, x, 0.0)", [](I i) { where(i.c, i.x, 0.0); }},
      // Unary.
      {"neg(x)\nabs(x)\nrelu(x)\nsin(x)\ncos(x)\nexp(x)\nlog(abs(x))\ntanh(x)",
       [](I i) { neg(i.x), abs(i.x), relu(i.x), sin(i.x), cos(i.x), exp(i.x), log(abs(i.x)), tanh(i.x); }},
      {"sigmoid(x)\nsqrt(abs(x))\nrsqrt(abs(x))\nreciprocal(x)\nerf(x)\nsilu(x)",
       [](I i) { sigmoid(i.x), sqrt(abs(i.x)), rsqrt(abs(i.x)), reciprocal(i.x), erf(i.x), silu(i.x); }},
      {"gelu(x)", [](I i) { gelu(i.x); }},
      {"gelu(x, approximate=\"tanh\")", [](I i) { gelu(i.x, "tanh"); }},
      // Reductions.
      {"sum(x)", [](I i) { sum(i.x); }},
      {"sum(x, 1)", [](I i) { sum(i.x, {1}); }},
      {"sum(x, [0, 1], True)", [](I i) { sum(i.x, {0, 1}, true); }},
      {"sum(x, dtype=f64)", [](I i) { sum(i.x, DType::kFloat64); }},
      {"sum(x, 1, keepdim=True, dtype=torch.float64)", [](I i) { sum(i.x, {1}, true, DType::kFloat64); }},
      {"mean(x)", [](I i) { mean(i.x); }},
      {"mean(x, [1])", [](I i) { mean(i.x, {1}); }},
      {"mean(x, 0, True)", [](I i) { mean(i.x, {0}, true); }},
      {"amax(x)", [](I i) { amax(i.x); }},
      {"amax(x, 1)", [](I i) { amax(i.x, {1}); }},
      {"amin(x, [0], True)", [](I i) { amin(i.x, {0}, true); }},
      {"linalg_vector_norm(x)", [](I i) { linalg_vector_norm(i.x); }},
      {"linalg_vector_norm(x, 1, [1], True)", [](I i) { linalg_vector_norm(i.x, 1, std::vector<int64_t>{1}, true); }},
      {"linalg_vector_norm(x, inf)",
       [](I i) { linalg_vector_norm(i.x, std::numeric_limits<double>::infinity()); }},
      // Normalisation.
      {"softmax(x, 1)", [](I i) { softmax(i.x, 1); }},
      {"softmax(x, -1, f64)", [](I i) { softmax(i.x, -1, DType::kFloat64); }},
      {"log_softmax(x, 0)", [](I i) { log_softmax(i.x, 0); }},
      {"_softmax(x, 1, False)", [](I i) { _softmax(i.x, 1); }},
      {"layer_norm(x, [3])", [](I i) { layer_norm(i.x, {3}); }},
      {"layer_norm(x, [3], v, v2, 1e-6)", [](I i) { layer_norm(i.x, {3}, i.v, i.v2, 1e-6); }},
      {"a, mu, rstd = native_layer_norm(x, [3], v, None, 1e-5)",
       [](I i) { native_layer_norm(i.x, {3}, i.v, std::nullopt, 1e-5); }},
      {"rms_norm(x, [3])", [](I i) { rms_norm(i.x, {3}); }},
      {"rms_norm(x, [3], v, 1e-6)", [](I i) { rms_norm(i.x, {3}, i.v, 1e-6); }},
      {"rms_norm(x, [2, 3], eps=0.5)", [](I i) { rms_norm(i.x, {2, 3}, std::nullopt, 0.5); }},
      {"dropout(x, 0.5, True)", [](I i) { dropout(i.x, 0.5, true); }},
      {"o, mask = native_dropout(x, 0.25, True)", [](I i) { native_dropout(i.x, 0.25, true); }},
      // Views.
      {"view(x, [3, 2])", [](I i) { view(i.x, {3, 2}); }},
      {"reshape(x, [-1])", [](I i) { reshape(i.x, {-1}); }},
      {"reshape(t(x), [6])", [](I i) { reshape(t(i.x), {6}); }},
      {"permute(x, [1, 0])", [](I i) { permute(i.x, {1, 0}); }},
      {"t(x)\nnumpy_T(x)", [](I i) { t(i.x), numpy_T(i.x); }},
      {"transpose(x, 0, 1)", [](I i) { transpose(i.x, 0, 1); }},
      {"expand(v, [2, 3])", [](I i) { expand(i.v, {2, 3}); }},
      {"unsqueeze(x, 0)", [](I i) { unsqueeze(i.x, 0); }},
      {"squeeze(u)\nsqueeze(u, 0)", [](I i) { squeeze(i.u), squeeze(i.u, 0); }},
      {"slice(x, 1, 0, 2)", [](I i) { slice(i.x, 1, 0, 2); }},
      {"slice(x, 0, 1)", [](I i) { slice(i.x, 0, 1); }},
      {"slice(x, 1, None, None, 2)", [](I i) { slice(i.x, 1, std::nullopt, std::nullopt, 2); }},
      {"select(x, 0, 1)", [](I i) { select(i.x, 0, 1); }},
      {"flatten(x)\nflatten(bm, 1)", [](I i) { flatten(i.x), flatten(i.bm, 1); }},
      {"alias(x)\n_unsafe_view(x, [6])", [](I i) { alias(i.x), _unsafe_view(i.x, {6}); }},
      {"as_strided(x, [2, 2], [1, 2])", [](I i) { as_strided(i.x, {2, 2}, {1, 2}); }},
      {"as_strided(x, [2], [1], 1)", [](I i) { as_strided(i.x, {2}, {1}, 1); }},
      {"contiguous(t(x))\ncontiguous(x)", [](I i) { contiguous(t(i.x)), contiguous(i.x); }},
      // Copies, conversion, joins.
      {"clone(x)", [](I i) { clone(i.x); }},
      {"_to_copy(x, dtype=f64)", [](I i) { _to_copy(i.x, {.dtype = DType::kFloat64}); }},
      {"to(x, f64)", [](I i) { to(i.x, DType::kFloat64); }},
      {"to(x, bf16, copy=True)", [](I i) { to(i.x, DType::kBFloat16, true); }},
      {"to(x, \"cpu\")", [](I i) { to(i.x, kCPU); }},
      {"to(x, \"cpu\", f16)", [](I i) { to(i.x, kCPU, DType::kFloat16); }},
      {"cat([x, y])", [](I i) { cat({i.x, i.y}); }},
      {"cat([x, y], 1)", [](I i) { cat({i.x, i.y}, 1); }},
      {"stack([x, y], dim=1)", [](I i) { stack({i.x, i.y}, 1); }},
      {"item(s)", [](I i) { item(i.s); }},
      // Matrix products.
      {"mm(x, m)", [](I i) { mm(i.x, i.m); }},
      {"bmm(bm, bm)", [](I i) { bmm(i.bm, i.bm); }},
      {"addmm(b, x, t(w))", [](I i) { addmm(i.b, i.x, t(i.w)); }},
      {"addmm(b, x, t(w), beta=0.5, alpha=2)", [](I i) { addmm(i.b, i.x, t(i.w), 0.5, 2); }},
      {"dot(v, v2)\nmv(x, v)", [](I i) { dot(i.v, i.v2), mv(i.x, i.v); }},
      {"matmul(x, m)\nmatmul(bm, m)", [](I i) { matmul(i.x, i.m), matmul(i.bm, i.m); }},
      {"linear(x, w, b)\nlinear(x, w)", [](I i) { linear(i.x, i.w, i.b), linear(i.x, i.w); }},
      // Factories: device=cpu and pin_memory=False unless given.
      {"zeros([2, 3])", [](I) { zeros({2, 3}); }},
      {"zeros(2, 3)", [](I) { zeros({2, 3}); }},
      {"zeros([2, 3], dtype=f64)", [](I) { zeros({2, 3}, {.dtype = DType::kFloat64}); }},
      {"ones([4], device=\"meta\")", [](I) { ones({4}, {.device = kMeta}); }},
      {"full([2, 2], 1.5)", [](I) { full({2, 2}, 1.5); }},
      {"full([2], 3, dtype=i64)", [](I) { full({2}, 3, {.dtype = DType::kInt64}); }},
      {"arange(5)", [](I) { arange(5); }},
      {"arange(1, 5)", [](I) { arange(1, 5); }},
      {"arange(0, 10, 2)", [](I) { arange(0, 10, 2); }},
      {"arange(5.0, dtype=f64)", [](I) { arange(5.0, {.dtype = DType::kFloat64}); }},
      {"rand([2, 3])", [](I) { rand({2, 3}); }},
      {"randn([4], dtype=f64, device=\"cpu\")", [](I) { randn({4}, {.dtype = DType::kFloat64, .device = kCPU}); }},
      {"empty([2, 3])", [](I) { empty({2, 3}); }},
      {"empty_strided([2, 3], [1, 2])", [](I) { empty_strided({2, 3}, {1, 2}); }},
      {"scalar_tensor(2.5)", [](I) { scalar_tensor(2.5); }},
      // *_like: dtype, layout and device from self.
      {"zeros_like(x)", [](I i) { zeros_like(i.x); }},
      {"ones_like(x, dtype=f64)", [](I i) { ones_like(i.x, {.dtype = DType::kFloat64}); }},
      {"full_like(x, 7)", [](I i) { full_like(i.x, 7); }},
      {"rand_like(x)\nrandn_like(x, device=\"meta\")", [](I i) { rand_like(i.x), randn_like(i.x, {.device = kMeta}); }},
      {"empty_like(x)", [](I i) { empty_like(i.x); }},
      // In-place.
      {"fill_(x, 1.5)\nzero_(y)", [](I i) { Tensor x = i.x, y = i.y; fill_(x, 1.5), zero_(y); }},
      {"copy_(x, y)", [](I i) { Tensor x = i.x; copy_(x, i.y); }},
      {"add_(x, y)\nadd_(x, y, alpha=2)", [](I i) { Tensor x = i.x; add_(x, i.y), add_(x, i.y, 2); }},
      {"mul_(x, y)\ndiv_(x, 2)", [](I i) { Tensor x = i.x; mul_(x, i.y), div_(x, 2); }},
      {"bernoulli_(x, 0.5)\nsqueeze_(u, 0)", [](I i) { Tensor x = i.x, u = i.u; bernoulli_(x, 0.5), squeeze_(u, 0); }},
      // Programs of several statements.
      {"h = linear(x, w, b)\na = gelu(h, approximate='tanh')\nreturn softmax(a, -1)",
       [](I i) { softmax(gelu(linear(i.x, i.w, i.b), "tanh"), -1); }},
      {"n = item(sum(x))\nreturn mul(y, n), add(y, -n)",
       [](I i) {
         const Scalar n = item(sum(i.x));
         mul(i.y, n), add(i.y, -n.to_double());
       }},
  };
}

TEST(ProgramEquivalence, RecordsExactlyWhatThePublicFunctionsRecord) {
  const std::vector<Case> all = cases();
  ASSERT_GE(all.size(), 40u);
  for (const Case& c : all) {
    SCOPED_TRACE(c.program);
    auto program = parse_program(c.program);
    if (!program.ok()) {
      ADD_FAILURE() << program.status();
      continue;
    }
    // Fresh (equal) inputs for each side: in-place ops change them.
    const Inputs cpp_in = make_inputs(), program_in = make_inputs();
    manual_seed(1);
    const Levels want = record([&] { c.cpp(cpp_in); });
    manual_seed(1);
    const Levels got = record([&] { program->run(program_in.named()); });
    EXPECT_FALSE(want.function.empty());
    EXPECT_EQ(got.aten, want.aten);
    EXPECT_EQ(got.function, want.function);
  }
}

TEST(ProgramEquivalence, RecorderTellsArgumentKindsApart) {
  // The comparison above is only as strong as the rendering: an int, a
  // float, a wrapped number and a list must all render differently.
  const Inputs in = make_inputs();
  const Levels a = record([&] { ops::add(in.x, 1); });
  const Levels b = record([&] { ops::add(in.x, 1.0); });
  const Levels c = record([&] { ops::sum(in.x, {1}); });
  EXPECT_THAT(a.aten, ElementsAre("aten::add.Tensor(t0:f32[2, 3], wrapped(1), int:1) -> t1:f32[2, 3]"));
  EXPECT_THAT(b.aten, ElementsAre("aten::add.Tensor(t0:f32[2, 3], wrapped(1.0), int:1) -> t1:f32[2, 3]"));
  EXPECT_THAT(c.aten, ElementsAre("aten::sum.dim_IntList(t0:f32[2, 3], int[]:[1], bool:False, None:None) -> "
                                  "t1:f32[2]"));
}

TEST(ProgramEquivalence, ResultsMatchTheCppValues) {
  const Inputs in = make_inputs();
  auto p = parse_program("h = linear(x, w, b)\nreturn gelu(h, approximate=\"tanh\"), item(sum(h)), tensor([[1, 2], [3, 4]])");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<Value> out = p->run(in.named());
  ASSERT_EQ(out.size(), 3u);
  const Tensor h = ops::linear(in.x, in.w, in.b);
  EXPECT_TRUE(ops::equal(out[0].to_tensor(), ops::gelu(h, "tanh")));
  EXPECT_EQ(out[1].to_double(), ops::item(ops::sum(h)).to_double());
  EXPECT_TRUE(ops::equal(out[2].to_tensor(), ops::tensor({1, 2, 3, 4}, {2, 2})));
}

// Two OPSPEC_FIXTUREs with one name (a user's `mlp` and opspec's) aborted the
// program before main; the clash is now kept and every lookup reports it,
// naming both places (issue 22.8). In a death test: the clash stays for the process.
TEST(FixtureRegistry, ANameClashIsAClearErrorNotAnAbortBeforeMain) {
  EXPECT_EXIT(
      {
        const auto make = [] { return FixtureFn([](const std::vector<Tensor>& in) { return in; }); };
        internal::FixtureRegistrar first(Fixture{"clash_test_fixture", "first", {{"x", {1}}}, make, "a.cc", 3});
        internal::FixtureRegistrar second(Fixture{"clash_test_fixture", "second", {{"x", {1}}}, make, "b.cc", 7});
        try {
          find_fixture("clash_test_fixture");
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      testing::ExitedWithCode(3),
      "fixture 'clash_test_fixture' is registered twice: at a.cc:3 and at b.cc:7; fixture names are global");
}

}  // namespace
}  // namespace opspec
