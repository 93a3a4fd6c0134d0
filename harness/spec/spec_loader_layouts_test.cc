// spec_loader_layouts_test.cc: the loader's layout keys: an input's
// `memory_format:` (names, torch names, PyTorch's rank rule, calls and bench
// overrides) and `expect.strides:` (both forms; bad values at their position).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace spec_loader_layouts_test {

using ::testing::HasSubstr;

// case_errors: every case's own YAML errors, one per line ("" when none).
std::string case_errors(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  if (!s.ok()) return std::string(s.status().message());
  std::string errors;
  for (const CaseSpec& c : s->cases) {
    if (c.spec_error) errors += (errors.empty() ? "" : "\n") + *c.spec_error;
  }
  return errors;
}

CaseSpec one(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok() || s->cases.empty()) return {};
  EXPECT_FALSE(s->cases[0].spec_error.has_value()) << *s->cases[0].spec_error;
  return s->cases[0];
}

// with_input: one case whose input x is `input` (a flow mapping), plus extra lines.
std::string with_input(std::string_view input, std::string_view extra = "") {
  return str_cat("cases:\n  - name: c\n    inputs:\n      x: ", input, "\n    program: return relu(x)\n", extra);
}

std::string with_strides(std::string_view strides) {
  return str_cat("cases:\n  - name: c\n    program: return 1\n    expect: {strides: ", strides, "}\n");
}

TEST(SpecLoaderLayouts, MemoryFormatNames) {
  auto format = [](std::string_view input) { return one(with_input(input)).inputs.at(0).memory_format; };
  EXPECT_EQ(format("{shape: [1, 2, 3, 4], memory_format: channels_last}"), MemoryFormat::kChannelsLast);
  EXPECT_EQ(format("{shape: [1, 2, 3, 4], memory_format: torch.channels_last}"), MemoryFormat::kChannelsLast);
  EXPECT_EQ(format("{shape: [1, 2, 3, 4, 5], memory_format: channels_last_3d}"), MemoryFormat::kChannelsLast3d);
  EXPECT_EQ(format("{shape: [2], memory_format: torch.contiguous_format}"), MemoryFormat::kContiguous);
  EXPECT_EQ(format("{shape: [2]}"), std::nullopt);
  const InputSpec leaf = one(with_input("{shape: [1, 2, 3, 4], memory_format: channels_last, requires_grad: true}"))
                             .inputs.at(0);
  EXPECT_TRUE(leaf.requires_grad);
  EXPECT_EQ(leaf.memory_format, MemoryFormat::kChannelsLast);
}

TEST(SpecLoaderLayouts, MemoryFormatErrors) {
  EXPECT_EQ(case_errors(with_input("{shape: [1, 2, 3, 4], memory_format: channel_last}")),
            "t.yaml:4:47: error: unknown memory_format 'channel_last'; did you mean 'channels_last'? (allowed: "
            "contiguous_format, channels_last, channels_last_3d, or torch names like torch.channels_last)");
  EXPECT_THAT(case_errors(with_input("{shape: [1, 2, 3, 4], memory_format: torch.chanels_last_3d}")),
              HasSubstr("did you mean 'channels_last_3d'?"));
  EXPECT_EQ(case_errors(with_input("{shape: [2], memory_format: preserve_format}")),
            "t.yaml:4:38: error: memory_format 'preserve_format' is not a layout an input can be made in (allowed: "
            "contiguous_format, channels_last, channels_last_3d)");
  EXPECT_EQ(case_errors(with_input("{shape: [2], memory_format: [channels_last]}")),
            "t.yaml:4:38: error: 'memory_format' must be a string, got a sequence");
  // PyTorch's words, at the key, naming the input.
  EXPECT_EQ(case_errors(with_input("{shape: [2, 3, 4], memory_format: channels_last}")),
            "t.yaml:4:29: error: input 'x': required rank 4 tensor to use channels_last format (shape [2, 3, 4] "
            "has 3 dims)");
  EXPECT_EQ(case_errors(with_input("{values: [1, 2], memory_format: torch.channels_last_3d}")),
            "t.yaml:4:27: error: input 'x': required rank 5 tensor to use channels_last_3d format (shape [2] has "
            "1 dim)");
}

TEST(SpecLoaderLayouts, CallsAndBenchOverridesKeepOrChangeTheFormat) {
  const CaseSpec c = one(with_input("{shape: [1, 2, 3, 4], memory_format: channels_last}",
                                    "    compile:\n      calls:\n        - x: {memory_format: contiguous_format}\n"
                                    "        - x: {shape: [2, 2, 2, 2]}\n"));
  ASSERT_EQ(c.compile->calls.size(), 2u);
  EXPECT_EQ(c.compile->calls[0].at(0).memory_format, MemoryFormat::kContiguous);
  EXPECT_EQ(c.compile->calls[1].at(0).memory_format, MemoryFormat::kChannelsLast);  // kept from the input
  EXPECT_EQ(c.compile->calls[1].at(0).shape, (SizeVec{2, 2, 2, 2}));
  // A call that changes the shape under a kept format: the error is at the new shape.
  EXPECT_EQ(case_errors(with_input("{shape: [1, 2, 3, 4], memory_format: channels_last}",
                                   "    compile: {calls: [{x: {shape: [4]}}]}\n")),
            "t.yaml:6:35: error: input 'x': required rank 4 tensor to use channels_last format (shape [4] has 1 dim)");
  EXPECT_EQ(case_errors(with_input("{shape: [2]}", "    compile: {calls: [{x: {memory_format: channels_last}}]}\n")),
            "t.yaml:6:28: error: input 'x': required rank 4 tensor to use channels_last format (shape [2] has 1 dim)");
  EXPECT_THAT(case_errors(with_input("{shape: [1, 2, 3, 4], memory_format: channels_last}",
                                     "    bench: {sizes: {x: [[1, 2, 3, 4], [8]]}}\n")),
              HasSubstr("input 'x': required rank 4 tensor to use channels_last format (shape [8] has 1 dim)"));
}

TEST(SpecLoaderLayouts, StridesForms) {
  auto strides = [](std::string_view s) { return one(with_strides(s)).expect.strides; };
  std::optional<StridesSpec> flat = strides("[1, 3]");
  ASSERT_TRUE(flat.has_value());
  EXPECT_FALSE(flat->per_output);
  EXPECT_EQ(flat->strides, (std::vector<SizeVec>{{1, 3}}));
  std::optional<StridesSpec> lists = strides("[[1, 3], [60, 1, 15, 3], []]");
  ASSERT_TRUE(lists.has_value());
  EXPECT_TRUE(lists->per_output);
  EXPECT_EQ(lists->strides, (std::vector<SizeVec>{{1, 3}, {60, 1, 15, 3}, {}}));
  EXPECT_EQ(strides("[]")->strides, (std::vector<SizeVec>{{}}));  // a 0-dim output
  EXPECT_EQ(strides("[+2, 0]")->strides, (std::vector<SizeVec>{{2, 0}}));
}

TEST(SpecLoaderLayouts, StridesErrorsAtTheirPosition) {
  EXPECT_EQ(case_errors(with_strides("3")),
            "t.yaml:4:23: error: 'strides' must be a list of non-negative integers, or one list per output, got an "
            "integer");
  EXPECT_EQ(case_errors(with_strides("[1, -3]")),
            "t.yaml:4:27: error: stride -3 is negative; strides are non-negative integers");
  EXPECT_EQ(case_errors(with_strides("[1, 2.5]")),
            "t.yaml:4:27: error: 'strides' entries must be non-negative integers, got a float");
  EXPECT_EQ(case_errors(with_strides("[[1], [a]]")),
            "t.yaml:4:30: error: 'strides' entries must be non-negative integers, got a string");
  EXPECT_EQ(case_errors(with_strides("[[1], 2]")),
            "t.yaml:4:29: error: 'strides' mixes lists and numbers: give one list per output, or the single "
            "output's strides");
  EXPECT_EQ(case_errors(with_strides("[[[1]]]")),
            "t.yaml:4:25: error: 'strides' entries must be non-negative integers, got a sequence");
  EXPECT_EQ(case_errors(with_strides("[99999999999999999999]")),
            "t.yaml:4:24: error: stride 99999999999999999999 is out of range; strides are non-negative integers");
  EXPECT_THAT(case_errors("cases:\n  - name: c\n    program: return 1\n    expect: {stride: [1]}\n"),
              HasSubstr("unknown key 'stride' in expect of case 'c'; did you mean 'strides'?"));
  EXPECT_THAT(case_errors(with_input("{shape: [2], memory_fromat: channels_last}")),
              HasSubstr("did you mean 'memory_format'?"));
}

TEST(SpecLoaderLayouts, FullSuiteHasTheLayoutKeys) {
  const std::filesystem::path full = std::filesystem::path(__FILE__).parent_path() / "testdata" / "full.yaml";
  auto s = load_suite_file(full.string());
  ASSERT_TRUE(s.ok()) << s.status();
  const CaseSpec& c = s->cases.at(0);
  EXPECT_EQ(c.inputs.at(3).memory_format, std::nullopt);
  EXPECT_EQ(c.inputs.at(4).memory_format, MemoryFormat::kChannelsLast);
  ASSERT_TRUE(c.expect.strides.has_value());
  EXPECT_EQ(c.expect.strides->strides, (std::vector<SizeVec>{{1}}));
}

}  // namespace spec_loader_layouts_test
}  // namespace opspec::spec
