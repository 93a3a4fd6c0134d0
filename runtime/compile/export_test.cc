// export_program: one graph with guards, specs and symbolic sizes; run()
// refuses inputs that break a guard; save/load round-trips bit for bit;
// graph breaks and specialized dynamic dims are errors naming them.
#include "runtime/compile/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "runtime/compile/controls.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace export_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

Tensor mlp(const Tensor& x, const Tensor& w) { return ops::relu(ops::linear(x, w)); }

TEST(Export, OneGraphWithSpecsRangesAndSymbolicSizes) {
  const Tensor x = ops::randn({4, 3}), w = ops::randn({5, 3});
  const ExportedProgram ep =
      export_program(&mlp, {.input_names = {"x", "w"}, .dynamic_shapes = {{"x", {0}}}, .name = "mlp"})(x, w);
  const std::string text = ep.str();
  EXPECT_THAT(text, HasSubstr("%x = placeholder : f32[s0, 3]"));
  EXPECT_THAT(text, HasSubstr("%w = placeholder : f32[5, 3]"));
  EXPECT_THAT(text, HasSubstr("aten::linear(%x, %w) : f32[s0, 5]"));
  EXPECT_THAT(text, HasSubstr("Graph signature: inputs [x: f32[s0, 3] (user_input), w: f32[5, 3] (user_input)], "
                              "outputs [relu: f32[s0, 5] (user_output)]"));
  EXPECT_THAT(text, HasSubstr("Range constraints: {s0: VR[2, int_oo]}"));
  EXPECT_THAT(text, HasSubstr("LAMBDA_GUARD: 2 <= L['x'].size()[0]"));
  // Any batch of 2 or more runs the one graph, as eager computes it.
  const Tensor x7 = ops::randn({7, 3});
  EXPECT_EQ(values(ep.run(x7, w)[0]), values(mlp(x7, w)));
}

TEST(Export, SymbolicSizesFollowTheProgram) {
  auto f = [](const Tensor& x) { return ops::reshape(ops::cat({x, x}, 0), {-1}); };
  const ExportedProgram ep = export_program(f, {.input_names = {"x"}, .dynamic_shapes = {{"x", {0, 1}}}})(
      ops::ones({4, 3}));
  EXPECT_THAT(ep.str(), HasSubstr(": f32[2*s0, s1]"));  // the cat
  EXPECT_EQ(ep.output_specs()[0].meta, "f32[2*s0*s1]");
  auto g = [](const Tensor& x, const Tensor& y) { return ops::cat({x, y}, 0); };
  const ExportedProgram sum = export_program(g, {.input_names = {"x", "y"},
                                                 .dynamic_shapes = {{"x", {0}}, {"y", {0}}}})(ops::ones({4}),
                                                                                              ops::ones({6}));
  EXPECT_EQ(sum.output_specs()[0].meta, "f32[s0 + s1]");
}

TEST(Export, SaveLoadRunsBitwiseAndRefusesBrokenGuards) {
  const Tensor c = ops::tensor({1.5, INFINITY, -2.0}, {3});
  auto f = [c](const Tensor& x) { return ops::add(ops::mul(x, c), 1); };
  const ExportedProgram ep = export_program(f, {.input_names = {"x"}, .dynamic_shapes = {{"x", {0}}}, .name = "f"})(
      ops::randn({4, 3}));
  const std::string path = ::testing::TempDir() + "export_test_program.json";
  ep.save(path);
  const ExportedProgram loaded = ExportedProgram::load(path);
  std::remove(path.c_str());
  EXPECT_EQ(loaded.str(), ep.str());
  const Tensor x = ops::randn({6, 3});
  const std::vector<float> expected = values(f(x));
  const std::vector<float> got = values(loaded.run(x)[0]);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i] == expected[i] || (std::isnan(got[i]) && std::isnan(expected[i]))) << i;
  }
  EXPECT_THAT([&] { loaded.run(ops::randn({1, 3})); },
              ThrowsMessage<Error>(HasSubstr("ExportedProgram f: the inputs do not satisfy its guards: "
                                             "2 <= L['x'].size()[0]")));
  EXPECT_THAT([&] { loaded.run(ops::randn({6, 3}, {.dtype = DType::kFloat64})); },
              ThrowsMessage<Error>(HasSubstr("tensor 'L['x']' dtype mismatch. expected Float, actual Double")));
  EXPECT_THAT([&] { loaded.run(ops::randn({6, 4})); },
              ThrowsMessage<Error>(HasSubstr("tensor 'L['x']' size mismatch at index 1. expected 3, actual 4")));
}

TEST(Export, LoadNamesWhatIsWrong) {
  const ExportedProgram ep = export_program([](const Tensor& x) { return ops::neg(x); })(ops::ones({2}));
  const std::string good = ep.to_json();
  EXPECT_THAT([] { ExportedProgram::from_json("{not json"); }, ThrowsMessage<Error>(HasSubstr("not JSON")));
  EXPECT_THAT([] { ExportedProgram::from_json("{}"); }, ThrowsMessage<Error>(HasSubstr("not an exported program")));
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_THAT([&] { ExportedProgram::from_json(replaced("\"version\": 1", "\"version\": 9")); },
              ThrowsMessage<Error>(HasSubstr("format version 9 is not supported")));
  EXPECT_THAT([&] { ExportedProgram::from_json(replaced("\"aten::neg\": \"", "\"aten::no_such_op\": \"")); },
              ThrowsMessage<Error>(HasSubstr("the graph calls 'aten::no_such_op', which is not registered")));
  EXPECT_THAT([&] { ExportedProgram::from_json(replaced("neg(Tensor self)", "neg(Tensor input)")); },
              ThrowsMessage<Error>(HasSubstr("the schema of 'aten::neg' changed since the program was saved")));
  EXPECT_THAT([] { ExportedProgram::load("/no/such/dir/p.json"); },
              ThrowsMessage<Error>(HasSubstr("cannot read '/no/such/dir/p.json'")));
}

TEST(Export, AGraphBreakIsAnError) {
  auto f = [](const Tensor& x) {
    const Tensor a = ops::sin(x);
    graph_break();
    return ops::cos(a);
  };
  EXPECT_THAT([&] { export_program(f)(ops::ones({3})); },
              ThrowsMessage<GraphBreakError>(HasSubstr("export(fn) needs one graph: ")));
}

TEST(Export, ASpecializedDynamicDimViolatesTheConstraint) {
  auto baked = [](const Tensor& x) { return ops::view(x, {x.size(0) * 3}); };  // a C++ int: not symbolic
  EXPECT_THAT([&] { export_program(baked, {.input_names = {"x"}, .dynamic_shapes = {{"x", {0}}}})(ops::ones({4, 3})); },
              ThrowsMessage<ConstraintViolationError>(HasSubstr(
                  "Constraints violated (L['x'].size()[0])!\n  - Not all values of L['x'].size()[0] in the specified "
                  "range are valid because L['x'].size()[0] was inferred to be a constant (4)")));
  const Tensor fixed = ops::ones({4});
  auto with_fixed = [fixed](const Tensor& x) { return ops::add(x, fixed); };
  EXPECT_THAT([&] { export_program(with_fixed, {.input_names = {"x"}, .dynamic_shapes = {{"x", {0}}}})(ops::ones({4})); },
              ThrowsMessage<ConstraintViolationError>(HasSubstr("with 5 the program fails")));
  EXPECT_THAT([&] { export_program(with_fixed, {.input_names = {"x"}, .dynamic_shapes = {{"x", {0}}}})(ops::ones({1})); },
              ThrowsMessage<ConstraintViolationError>(HasSubstr("a size of 0 or 1 is specialized")));
  EXPECT_THAT([&] { export_program(with_fixed, {.input_names = {"x"}, .dynamic_shapes = {{"y", {0}}}})(ops::ones({4})); },
              ThrowsMessage<Error>(HasSubstr("dynamic_shapes names 'y', which is not an input (inputs: x)")));
}

}  // namespace export_test
}  // namespace opspec
