#include "runtime/dispatch/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/error.h"

namespace opspec {
namespace schema_test {

using ::testing::HasSubstr;

TEST(SchemaTest, ParsesNameOverloadAndKeywordOnlyArguments) {
  auto s = FunctionSchema::parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.qualified_name(), "aten::add.Tensor");
  EXPECT_EQ(s.base_name(), "aten::add");
  ASSERT_EQ(s.arguments().size(), 3u);
  EXPECT_EQ(s.num_positional(), 2);
  EXPECT_TRUE(s.arguments()[2].kwarg_only);
  ASSERT_TRUE(s.arguments()[2].default_value.has_value());
  EXPECT_TRUE(s.arguments()[2].default_value->is_int());
  EXPECT_EQ(s.arguments()[2].default_value->to_int(), 1);
  EXPECT_EQ(s.str(), "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST(SchemaTest, ParsesOptionalsListsAliasesAndTupleReturns) {
  auto s = FunctionSchema::parse(
      "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
      "(Tensor, Tensor, Tensor)");
  EXPECT_EQ(s.returns().size(), 3u);
  EXPECT_TRUE(s.arguments()[1].type.is_list);
  EXPECT_TRUE(s.arguments()[2].type.is_optional);
  auto v = FunctionSchema::parse("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)");
  EXPECT_TRUE(v.is_mutable());
  EXPECT_EQ(v.arguments()[0].alias_set, "a");
  auto sum = FunctionSchema::parse("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  EXPECT_EQ(sum.arguments()[1].type.list_size, 1);
  EXPECT_TRUE(sum.arguments()[1].type.is_optional);
  EXPECT_EQ(sum.str(), "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
}

TEST(SchemaTest, NamespaceAndFloatDefaults) {
  auto s = FunctionSchema::parse("myops::scale(Tensor x, float s=0.5, str mode='none') -> Tensor");
  EXPECT_EQ(s.qualified_name(), "myops::scale");
  EXPECT_DOUBLE_EQ(s.arguments()[1].default_value->to_double(), 0.5);
  EXPECT_EQ(s.arguments()[2].default_value->to_string(), "none");
}

// A Python module's dots belong to the namespace; a dot after the name is the overload.
TEST(SchemaTest, DottedNamespaceBeforeTheOverload) {
  auto s = FunctionSchema::parse("torch._C::_set_grad_enabled(bool enabled) -> ()");
  EXPECT_EQ(s.ns(), "torch._C");
  EXPECT_EQ(s.qualified_name(), "torch._C::_set_grad_enabled");
  EXPECT_TRUE(s.returns().empty());
  auto o = FunctionSchema::parse("a.b.c::f.out(Tensor x) -> Tensor");
  EXPECT_EQ(o.ns(), "a.b.c");
  EXPECT_EQ(o.name(), "f");
  EXPECT_EQ(o.overload(), "out");
  EXPECT_EQ(FunctionSchema::parse("add.Tensor(Tensor self) -> Tensor").qualified_name(), "aten::add.Tensor");
}

TEST(SchemaTest, MalformedSchemaReportsColumn) {
  EXPECT_THAT([] { FunctionSchema::parse("mm(Tensor self, Tensr mat2) -> Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("unknown type 'Tensr' at column 17")));
  EXPECT_THAT([] { FunctionSchema::parse("mm(Tensor self"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected ','")));
  EXPECT_THAT([] { FunctionSchema::parse("mm(Tensor self) Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected '->'")));
}

TEST(SchemaTest, BindFillsDefaultsAndRejectsBadArguments) {
  auto s = FunctionSchema::parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  Tensor a = internal::make_tensor({2}, DType::kFloat32, kCPU);
  Stack st = s.bind({a, a});
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[2].to_int(), 1);
  st = s.bind({a, a}, {{"alpha", Value(2.5)}});
  EXPECT_DOUBLE_EQ(st[2].to_double(), 2.5);
  EXPECT_THAT([&] { s.bind({a, a, a}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("aten::add.Tensor() takes at most 2 positional argument(s) but 3 were given")));
  EXPECT_THAT([&] { s.bind({a}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("missing required argument 'other'")));
  EXPECT_THAT([&] { s.bind({a, Value(int64_t{3})}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("argument 'other' (position 2) must be Tensor, not int")));
  EXPECT_THAT([&] { s.bind({a, a}, {{"beta", Value(1)}}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("unexpected keyword argument 'beta'")));
}

// Memory format defaults name the format ("memory_format=channels_last"); each
// parses to c10::MemoryFormat's value.
TEST(SchemaTest, ParsesMemoryFormatDefaults) {
  const std::pair<std::string_view, int64_t> formats[] = {
      {"contiguous_format", 0}, {"preserve_format", 1}, {"channels_last", 2}, {"channels_last_3d", 3}};
  for (const auto& [name, value] : formats) {
    const FunctionSchema s =
        FunctionSchema::parse(str_cat("f(Tensor self, *, MemoryFormat memory_format=", name, ") -> Tensor"));
    ASSERT_TRUE(s.arguments()[1].default_value.has_value()) << name;
    EXPECT_EQ(s.arguments()[1].default_value->to_int(), value) << name;
    EXPECT_THAT(s.str(), HasSubstr(str_cat("memory_format=", name)));
  }
  EXPECT_THAT([] { FunctionSchema::parse("f(Tensor self, *, MemoryFormat memory_format=channels_first) -> Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("bad default value 'channels_first'")));
}

TEST(SchemaTest, FormatsArgumentsAsPyTorchPrintsACall) {
  auto randn = FunctionSchema::parse(
      "randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
  Stack st = randn.bind({Value(std::vector<int64_t>{8, 8})}, {{"device", Value(kCPU)}, {"pin_memory", Value(false)}});
  EXPECT_EQ(randn.format_arguments(st), "[8, 8], device=cpu, pin_memory=False");
  auto clone = FunctionSchema::parse("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor");
  Tensor t = internal::make_tensor({2, 3}, DType::kFloat32, kCPU);
  EXPECT_EQ(clone.format_arguments(clone.bind({t}, {{"memory_format", Value(int64_t{0})}})),
            "f32[2, 3], memory_format=torch.contiguous_format");
  // Every c10::MemoryFormat prints as Python names it; another int stays an int.
  const std::pair<int64_t, std::string_view> formats[] = {{1, "torch.preserve_format"},
                                                          {2, "torch.channels_last"},
                                                          {3, "torch.channels_last_3d"},
                                                          {4, "4"}};
  for (const auto& [value, printed] : formats) {
    EXPECT_EQ(clone.format_arguments(clone.bind({t}, {{"memory_format", Value(value)}})),
              str_cat("f32[2, 3], memory_format=", printed));
  }
  auto add = FunctionSchema::parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(add.format_arguments(add.bind({t, internal::make_wrapped_number(1.0)})), "f32[2, 3], 1.0");
  // Trailing positional defaults are dropped; an earlier default before a set one stays.
  auto norm = FunctionSchema::parse(
      "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  EXPECT_EQ(norm.format_arguments(norm.bind({t, Value(int64_t{1})})), "f32[2, 3], 1");
  EXPECT_EQ(norm.format_arguments(norm.bind({t})), "f32[2, 3]");
  EXPECT_EQ(norm.format_arguments(norm.bind({t, Value(int64_t{2}), Value(), Value(true)})), "f32[2, 3], 2, None, True");
}

}  // namespace
}  // namespace opspec
