#include "harness/debug_diff.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/ops/ops.h"

namespace opspec {
namespace debug_diff_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

RecordedValue tensor_value(SizeVec sizes, std::string name = "") {
  RecordedValue v;
  v.kind = RecordedValue::Kind::kTensor;
  v.tensors.push_back(RecordedTensor{DType::kFloat32, std::move(sizes)});
  v.name = std::move(name);
  return v;
}

RecordedValue other_value(Value value, std::string name = "") {
  RecordedValue v;
  v.value = std::move(value);
  v.name = std::move(name);
  return v;
}

HashNode hash_node(std::vector<HashValue> hashes, std::string name = "") {
  HashNode n;
  n.kind = HashNode::Kind::kHashes;
  n.hashes = std::move(hashes);
  n.name = std::move(name);
  return n;
}
HashNode hash_node(double h) { return hash_node({HashValue::of_float(h)}); }

HashNode list_node(std::vector<HashNode> items) {
  HashNode n;
  n.kind = HashNode::Kind::kList;
  n.items = std::move(items);
  return n;
}

// A unary op on a [3, 3] tensor at depth 1 with a bare norm output hash and,
// when given, an input hash.
DebugCall op(std::string name, double out_hash, std::optional<double> in_hash = std::nullopt) {
  DebugCall c;
  c.depth = 1;
  c.name = std::move(name);
  c.args.push_back(tensor_value({3, 3}));
  c.outputs.push_back(tensor_value({3, 3}));
  c.has_outputs = true;
  c.hashed = true;
  c.output_hash = std::vector<HashNode>{hash_node(out_hash)};
  if (in_hash) c.input_hash = std::vector<HashNode>{hash_node(*in_hash)};
  return c;
}

DebugCall kernel(std::vector<std::pair<std::string, std::vector<HashValue>>> pre,
                 std::vector<std::pair<std::string, std::vector<HashValue>>> post) {
  DebugCall c;
  c.kind = DebugCall::Kind::kKernel;
  c.depth = 1;
  c.name = "fused_relu_0";
  c.kernel_prefix = "fused";
  c.args = {tensor_value({3, 3}, "in0"), tensor_value({3, 3}, "out0"), other_value(int64_t{9}, "n")};
  c.pre_kernel_hashes = std::move(pre);
  c.post_kernel_hashes = std::move(post);
  return c;
}

HashValue f(double v) { return HashValue::of_float(v); }

std::vector<DebugCall> eager_log() { return {op("aten::relu", 4.0), op("aten::cos", 6.5), op("aten::add.Tensor", 9.0)}; }

TEST(DebugDiffTest, ReferenceExamplePointsAtCosVsSin) {
  std::vector<DebugCall> compiled = eager_log();
  compiled[1].name = "aten::sin";
  compiled[1].output_hash = std::vector<HashNode>{hash_node(3.25)};
  compiled[2].output_hash = std::vector<HashNode>{hash_node(7.0)};
  const LogDiff d = diff_logs(eager_log(), compiled);
  EXPECT_FALSE(d.equivalent());
  EXPECT_FALSE(d.structurally_aligned);
  EXPECT_EQ(d.first_structural_index, 1u);
  EXPECT_TRUE(d.mismatches.empty());  // nothing differs before the break
  EXPECT_EQ(d.structural_message,
            "logs stop aligning at entry 1: aten::cos (depth 1) vs aten::sin (depth 1)\n"
            "  log 1:     aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 6.5}\n"
            "  log 2:     aten::sin(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 3.25}");
  EXPECT_EQ(d.report(),
            "first divergence at entry 1: aten::cos (depth 1) vs aten::sin (depth 1)\n"
            "  log 1:     aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 6.5}\n"
            "  log 2:     aten::sin(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 3.25}");
}

TEST(DebugDiffTest, IdenticalLogsAreEquivalent) {
  const LogDiff d = diff_logs(eager_log(), eager_log());
  EXPECT_TRUE(d.equivalent());
  EXPECT_TRUE(d.structurally_aligned);
  EXPECT_EQ(d.first_mismatch(), nullptr);
  EXPECT_EQ(d.report(), "logs are equivalent (3 entries)");
  EXPECT_EQ(diff_logs({}, {}).report(), "logs are equivalent (0 entries)");
}

TEST(DebugDiffTest, RelativeToleranceDecidesFloatHashes) {
  std::vector<DebugCall> b = eager_log();
  const double h = 6.5 * (1 + 1e-9);
  b[1].output_hash = std::vector<HashNode>{hash_node(h)};
  const LogDiff strict = diff_logs(eager_log(), b);
  EXPECT_TRUE(strict.structurally_aligned);
  ASSERT_EQ(strict.mismatches.size(), 1u);
  const HashMismatch& m = strict.mismatches[0];
  EXPECT_EQ(m.index, 1u);
  EXPECT_EQ(m.call, "aten::cos");
  EXPECT_FALSE(m.is_input);
  EXPECT_EQ(m.path, "");
  EXPECT_EQ(m.hash1, f(6.5));
  EXPECT_EQ(m.hash2, f(h));
  EXPECT_DOUBLE_EQ(m.rel_diff, std::fabs(h - 6.5) / h);
  EXPECT_NEAR(m.rel_diff, 1e-9, 1e-15);
  EXPECT_EQ(m.line1, "    aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 6.5}");
  EXPECT_EQ(strict.first_mismatch(), &strict.mismatches[0]);
  EXPECT_EQ(strict.report(), "first divergence at entry 1: aten::cos output hash differs\n"
                             "  log 1:     aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 6.5}\n"
                             "  log 2:     aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': " +
                                 format_double(h) + "}\n"
                                 "  hash 1: 6.5, hash 2: " + format_double(h) + ", rel_diff: " +
                                 format_double(m.rel_diff));

  DiffOptions loose;
  loose.rtol = 1e-6;
  EXPECT_TRUE(diff_logs(eager_log(), b, loose).equivalent());
  loose.rtol = 1e-10;
  EXPECT_FALSE(diff_logs(eager_log(), b, loose).equivalent());
}

TEST(DebugDiffTest, RelDiffUsesTheFloorForZeroHashes) {
  std::vector<DebugCall> a = {op("aten::zero_", 0.0)}, b = {op("aten::zero_", 1e-12)};
  const LogDiff d = diff_logs(a, b);
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_DOUBLE_EQ(d.mismatches[0].rel_diff, 1e-12 / 1e-10);
  // 0.0 and -0.0 differ bitwise but have rel_diff 0, so they match (Python's 0.0 == -0.0).
  EXPECT_TRUE(diff_logs({op("aten::neg", 0.0)}, {op("aten::neg", -0.0)}).equivalent());
}

TEST(DebugDiffTest, IntegerHashesAreExactWhateverTheTolerance) {
  std::vector<DebugCall> a = {op("aten::relu", 0)}, b = {op("aten::relu", 0)};
  a[0].output_hash = std::vector<HashNode>{hash_node({HashValue::of_int(std::numeric_limits<uint64_t>::max())})};
  b[0].output_hash = std::vector<HashNode>{hash_node({HashValue::of_int(std::numeric_limits<uint64_t>::max() - 1)})};
  DiffOptions options;
  options.rtol = 1.0;
  const LogDiff d = diff_logs(a, b, options);
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_GT(d.mismatches[0].rel_diff, 0.0);  // the exact difference, not 0 from rounding both to double
  EXPECT_THAT(d.report(), HasSubstr("hash 1: 18446744073709551615, hash 2: 18446744073709551614"));
  EXPECT_TRUE(diff_logs(a, a, options).equivalent());
}

TEST(DebugDiffTest, NanEqualsNanButNotANumber) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(diff_logs({op("aten::log", nan)}, {op("aten::log", nan)}).equivalent());
  EXPECT_TRUE(diff_logs({op("aten::log", inf)}, {op("aten::log", inf)}).equivalent());
  DiffOptions options;
  options.rtol = 1e9;
  const LogDiff d = diff_logs({op("aten::log", nan)}, {op("aten::log", 1.0)}, options);
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_TRUE(std::isnan(d.mismatches[0].rel_diff));
  EXPECT_THAT(d.report(), HasSubstr("hash 1: nan, hash 2: 1.0, rel_diff: nan"));
  EXPECT_FALSE(diff_logs({op("aten::log", inf)}, {op("aten::log", -inf)}, options).equivalent());
}

TEST(DebugDiffTest, InputHashesAreComparedOnlyWhenAsked) {
  std::vector<DebugCall> a = {op("aten::relu", 4.0, 4.0), op("aten::cos", 6.5, 4.0)};
  std::vector<DebugCall> b = {op("aten::relu", 4.0, 4.0), op("aten::cos", 6.5, 4.5)};
  const LogDiff d = diff_logs(a, b);
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_TRUE(d.mismatches[0].is_input);
  EXPECT_EQ(d.mismatches[0].path, "[0][0]");
  EXPECT_THAT(d.report(), StartsWith("first divergence at entry 1: aten::cos input hash [0][0] differs\n"));
  EXPECT_THAT(d.report(), HasSubstr("# {'input_hash': ((4.5,), {}), 'hash': 6.5}"));
  DiffOptions outputs_only;
  outputs_only.compare_inputs = false;
  EXPECT_TRUE(diff_logs(a, b, outputs_only).equivalent());
}

TEST(DebugDiffTest, PathsFollowPytreeKeystr) {
  // mm.out(a, b, out=o) with two hash functions, and a two-result op.
  auto mm_out = [](double b_norm, uint64_t out_xor) {
    DebugCall c = op("aten::mm.out", 0);
    c.hash_tuple = true;
    c.input_hash = std::vector<HashNode>{hash_node({f(1.0), HashValue::of_int(7)}),
                                         hash_node({f(b_norm), HashValue::of_int(8)}),
                                         hash_node({f(0.0), HashValue::of_int(out_xor)}, "out")};
    c.output_hash = std::vector<HashNode>{hash_node({f(3.0), HashValue::of_int(9)})};
    return c;
  };
  auto split = [](double second) {
    DebugCall c = op("aten::split.Tensor", 0);
    c.output_hash = std::vector<HashNode>{list_node({hash_node(1.0), hash_node(second)}), hash_node(5.0)};
    return c;
  };
  const LogDiff d = diff_logs({mm_out(2.0, 1), split(2.0)}, {mm_out(2.5, 2), split(2.25)});
  ASSERT_EQ(d.mismatches.size(), 3u);
  EXPECT_EQ(d.mismatches[0].path, "[0][1][0]");  // second positional argument, first hash function
  EXPECT_EQ(d.mismatches[1].path, "[1]['out'][1]");
  EXPECT_EQ(d.mismatches[1].hash1, HashValue::of_int(1));
  EXPECT_EQ(d.mismatches[2].path, "[0][1]");  // first result (a list), its second tensor
  EXPECT_EQ(d.mismatches[2].index, 1u);
  EXPECT_FALSE(d.mismatches[2].is_input);
  EXPECT_THAT(d.report(), HasSubstr("2 further hash mismatches (entries 0..1)"));
}

TEST(DebugDiffTest, TruncatedSecondLogSaysWhereItEnds) {
  std::vector<DebugCall> b = eager_log();
  b.pop_back();
  const LogDiff d = diff_logs(eager_log(), b);
  EXPECT_FALSE(d.structurally_aligned);
  EXPECT_EQ(d.first_structural_index, 2u);
  EXPECT_EQ(d.structural_message,
            "logs stop aligning at entry 2: log 2 ends after 2 entries; log 1 continues with 1 more:\n"
            "  log 1:     aten::add.Tensor(t: f32[3, 3])  ->  t: f32[3, 3]  # {'hash': 9.0}");
  EXPECT_THAT(d.report(), StartsWith("first divergence at entry 2: log 2 ends after 2 entries"));
  // And the other way round.
  EXPECT_THAT(diff_logs(b, eager_log()).structural_message,
              HasSubstr("log 1 ends after 2 entries; log 2 continues with 1 more:\n  log 2: "));
  EXPECT_THAT(diff_logs({}, eager_log()).structural_message, HasSubstr("log 1 ends after 0 entries"));
}

TEST(DebugDiffTest, DepthAndKindDifferencesBreakAlignment) {
  std::vector<DebugCall> b = eager_log();
  b[2].depth = 2;
  LogDiff d = diff_logs(eager_log(), b);
  EXPECT_EQ(d.first_structural_index, 2u);
  EXPECT_THAT(d.structural_message,
              StartsWith("logs stop aligning at entry 2: aten::add.Tensor (depth 1) vs aten::add.Tensor (depth 2)\n"));
  EXPECT_THAT(d.structural_message, HasSubstr("  log 2:       aten::add.Tensor("));  // 6 spaces at depth 2

  DebugCall module;
  module.kind = DebugCall::Kind::kModule;
  module.depth = 1;
  module.name = "aten::relu";  // same name, different kind
  d = diff_logs(eager_log(), {module});
  EXPECT_EQ(d.first_structural_index, 0u);
  EXPECT_THAT(d.structural_message, HasSubstr("aten::relu (op, depth 1) vs [nn.Mod] aten::relu (module, depth 1)"));
}

// A text log pasted with one space per line reads as depth 0 where its
// four-space twin reads depth 1: a constant offset aligns, a nesting that
// differs between entries does not.
TEST(DebugDiffTest, DepthsCountFromEachLogsShallowestEntry) {
  std::vector<DebugCall> shifted = eager_log();
  for (DebugCall& c : shifted) c.depth = 0;
  EXPECT_TRUE(diff_logs(eager_log(), shifted).equivalent()) << diff_logs(eager_log(), shifted).report();
  EXPECT_TRUE(diff_logs(shifted, eager_log()).equivalent());

  shifted[2].depth = 1;  // nested under cos in log 2 only
  LogDiff d = diff_logs(eager_log(), shifted);
  EXPECT_EQ(d.first_structural_index, 2u);
  EXPECT_THAT(d.structural_message, StartsWith("logs stop aligning at entry 2: aten::add.Tensor (depth 0) vs "
                                               "aten::add.Tensor (depth 1) (depths counted from each log's "
                                               "shallowest entry)\n"));

  // Only the entries both logs have set the offsets: a shallower entry past
  // the end of the shorter log does not shift the others.
  std::vector<DebugCall> longer = eager_log();
  DebugCall outer = longer[0];
  outer.depth = 0;
  longer.push_back(outer);
  d = diff_logs(longer, eager_log());
  EXPECT_EQ(d.first_structural_index, 3u);
  EXPECT_THAT(d.structural_message, HasSubstr("log 2 ends after 3 entries"));
}

TEST(DebugDiffTest, HashPresenceAndShapeDifferencesAreStructural) {
  std::vector<DebugCall> b = eager_log();
  b[1].hashed = false;
  b[1].output_hash.reset();
  LogDiff d = diff_logs(eager_log(), b);
  EXPECT_FALSE(d.structurally_aligned);
  EXPECT_EQ(d.first_structural_index, 1u);
  EXPECT_THAT(d.structural_message,
              HasSubstr("entry 1: aten::cos: output hash presence differs: log 1 has hash=True, log 2 has hash=False"));

  b = eager_log();
  b[0].input_hash = std::vector<HashNode>{hash_node(1.0)};
  d = diff_logs(eager_log(), b);
  EXPECT_THAT(d.structural_message, HasSubstr("input hash presence differs"));
  DiffOptions outputs_only;
  outputs_only.compare_inputs = false;
  EXPECT_TRUE(diff_logs(eager_log(), b, outputs_only).equivalent());

  // A list of 2 against a list of 3; None against a tensor hash.
  std::vector<DebugCall> x = {op("aten::cat", 0)}, y = {op("aten::cat", 0)};
  x[0].output_hash = std::vector<HashNode>{list_node({hash_node(1.0), hash_node(2.0)})};
  y[0].output_hash = std::vector<HashNode>{list_node({hash_node(1.0), hash_node(2.0), hash_node(3.0)})};
  EXPECT_THAT(diff_logs(x, y).structural_message, HasSubstr("output hash is a list of 2 in log 1 but of 3 in log 2"));
  y[0].output_hash = std::vector<HashNode>{list_node({hash_node(1.0), HashNode{}})};
  EXPECT_THAT(diff_logs(x, y).structural_message,
              HasSubstr("output hash [1] is a tensor hash in log 1 but None in log 2"));

  // Tuple hashes against bare ones, float against integer hashes.
  y = x;
  y[0].hash_tuple = true;
  EXPECT_THAT(diff_logs(x, y).structural_message, HasSubstr("hashes are tuples in log 2 but bare values in log 1"));
  y = x;
  y[0].output_hash = std::vector<HashNode>{list_node({hash_node(1.0), hash_node({HashValue::of_int(2)})})};
  EXPECT_THAT(diff_logs(x, y).structural_message,
              HasSubstr("output hash [1] is a float in log 1 but an integer in log 2 (different hash functions)"));
}

TEST(DebugDiffTest, MismatchesBeforeABreakAreReportedFirst) {
  std::vector<DebugCall> b = eager_log();
  b[0].output_hash = std::vector<HashNode>{hash_node(4.5)};
  b[2].name = "aten::sub.Tensor";
  const LogDiff d = diff_logs(eager_log(), b);
  EXPECT_FALSE(d.structurally_aligned);
  EXPECT_EQ(d.first_structural_index, 2u);
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_EQ(d.mismatches[0].index, 0u);
  EXPECT_THAT(d.report(), StartsWith("first divergence at entry 0: aten::relu output hash differs\n"));
  EXPECT_THAT(d.report(), HasSubstr("\n  then logs stop aligning at entry 2: aten::add.Tensor (depth 1) vs "
                                    "aten::sub.Tensor (depth 1)"));
}

TEST(DebugDiffTest, KernelEntriesCompareHashesByBufferName) {
  auto k = [](double pre_out, double post_out) {
    return kernel({{"in0", {f(45.0)}}, {"out0", {f(pre_out)}}}, {{"in0", {f(45.0)}}, {"out0", {f(post_out)}}});
  };
  EXPECT_TRUE(diff_logs({k(0, 25)}, {k(0, 25)}).equivalent());

  LogDiff d = diff_logs({k(0, 25)}, {k(0, 26)});
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_EQ(d.mismatches[0].path, "out0");
  EXPECT_FALSE(d.mismatches[0].is_input);
  EXPECT_THAT(d.report(), StartsWith("first divergence at entry 0: fused_relu_0 post-kernel hash out0 differs\n"
                                     "  log 1:     [fused] fused_relu_0(in0=t: f32[3, 3], out0=t: f32[3, 3], n=9)\n"));

  // Pre-kernel hashes count as inputs.
  d = diff_logs({k(0, 25)}, {k(1, 25)});
  ASSERT_EQ(d.mismatches.size(), 1u);
  EXPECT_TRUE(d.mismatches[0].is_input);
  DiffOptions outputs_only;
  outputs_only.compare_inputs = false;
  EXPECT_TRUE(diff_logs({k(0, 25)}, {k(1, 25)}, outputs_only).equivalent());

  // Buffers present in one log only, hash presence, arguments.
  DebugCall renamed = k(0, 25);
  renamed.post_kernel_hashes[1].first = "out1";
  EXPECT_THAT(diff_logs({k(0, 25)}, {renamed}).structural_message,
              HasSubstr("post-kernel hash of buffer 'out0' in log 1 only"));
  DebugCall unhashed = k(0, 25);
  unhashed.post_kernel_hashes.clear();
  EXPECT_THAT(diff_logs({k(0, 25)}, {unhashed}).structural_message,
              HasSubstr("post-kernel hash presence differs: log 1 has post-kernel hashes=True, log 2 has "
                        "post-kernel hashes=False"));
  DebugCall other_n = k(0, 25);
  other_n.args[2] = other_value(int64_t{8}, "n");
  EXPECT_THAT(diff_logs({k(0, 25)}, {other_n}).structural_message,
              HasSubstr("entry 0: [fused] fused_relu_0: kernel arguments differ"));
  // Tensor ids do not count (PyTorch renders kernel arguments without them).
  DebugCall with_ids = k(0, 25);
  with_ids.args[0].tensors[0].id = 3;
  EXPECT_TRUE(diff_logs({k(0, 25)}, {with_ids}).equivalent());
  DebugCall other_prefix = k(0, 25);
  other_prefix.kernel_prefix = "cuda";
  EXPECT_THAT(diff_logs({k(0, 25)}, {other_prefix}).structural_message,
              HasSubstr("[fused] fused_relu_0 (depth 1) vs [cuda] fused_relu_0 (depth 1)"));
}

TEST(DebugDiffTest, ModulesCompareByNameAndDepthOnly) {
  DebugCall m;
  m.kind = DebugCall::Kind::kModule;
  m.depth = 1;
  m.name = "Foo.l1";
  DebugCall n = m;
  n.name = "Foo.l2";
  EXPECT_TRUE(diff_logs({m}, {m}).equivalent());
  EXPECT_THAT(diff_logs({m}, {n}).structural_message, HasSubstr("[nn.Mod] Foo.l1 (depth 1) vs [nn.Mod] Foo.l2 (depth 1)"));
}

}  // namespace
}  // namespace opspec
