#include "harness/debug_mode.h"

#include "harness/debug_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/fake/fake_tensor.h"
#include "runtime/nn/reference_models_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace debug_mode_test {

using ::testing::HasSubstr;
using ::testing::Not;

int run_once_first_line = 0;  // the line of `Tensor x = ops::randn({8, 8});`

// The reference's quick-start program; the stack-trace test expects its three
// op lines to follow one another.
Tensor run_once(Tensor* x_out = nullptr, Tensor* y_out = nullptr) {
  run_once_first_line = static_cast<int>(std::source_location::current().line()) + 1;
  Tensor x = ops::randn({8, 8});
  Tensor y = ops::randn({8, 8});
  Tensor out = ops::mm(ops::relu(x), y);
  if (x_out) *x_out = x;
  if (y_out) *y_out = y;
  return out;
}

TEST(DebugModeTest, QuickStartMatchesPyTorchsFourLines) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    run_once();
  }
  EXPECT_EQ(dm.debug_string(),
            "    aten::randn([8, 8], device=cpu, pin_memory=False)  ->  t: f32[8, 8]\n"
            "    aten::randn([8, 8], device=cpu, pin_memory=False)  ->  t: f32[8, 8]\n"
            "    aten::relu(t: f32[8, 8])  ->  t: f32[8, 8]\n"
            "    aten::mm(t: f32[8, 8], t: f32[8, 8])  ->  t: f32[8, 8]");
  ASSERT_EQ(dm.logs().size(), 4u);
  EXPECT_EQ(dm.logs()[3].name, "aten::mm");
  EXPECT_EQ(dm.logs()[3].depth, 1);
}

TEST(DebugModeTest, ResetEmptiesTheLogAndReusedEntriesCarryNothingOver) {
  DebugMode dm;
  auto scope = dm.enter();
  {
    // The first log's entries have hashes, several arguments and outputs.
    auto hashes = DebugMode::log_tensor_hashes(std::vector<HashKind>{HashKind::kNorm}, /*hash_inputs=*/true);
    run_once();
  }
  const Tensor x = ops::ones({2});
  ASSERT_EQ(dm.logs().size(), 5u);
  dm.reset();
  EXPECT_TRUE(dm.logs().empty());
  EXPECT_EQ(dm.debug_string(), "");
  ops::neg(x);
  ASSERT_EQ(dm.logs().size(), 1u);
  const DebugCall& c = dm.logs()[0];
  EXPECT_EQ(c.name, "aten::neg");
  EXPECT_EQ(c.args.size(), 1u);
  EXPECT_FALSE(c.input_hash.has_value());
  EXPECT_FALSE(c.hashed);
  EXPECT_EQ(dm.debug_string(), "    aten::neg(t: f32[2])  ->  t: f32[2]");
}

TEST(DebugModeTest, IdsStackTracesAndHashesAsInTheReference) {
  DebugModeOptions options;
  options.record_stack_trace = true;
  options.record_ids = true;
  DebugMode dm(options);
  Tensor x, y, out;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(std::vector<HashKind>{HashKind::kNorm}, /*hash_inputs=*/true);
    out = run_once(&x, &y);
  }
  const std::string hx = format_double(norm_hash(x)), hy = format_double(norm_hash(y));
  const std::string hr = format_double(norm_hash(ops::relu(x))), hout = format_double(norm_hash(out));
  const std::string file = "debug_mode_test.cc";
  const std::string expected =
      "    # File: " + file + ":" + std::to_string(run_once_first_line) +
      " in run_once, code: Tensor x = ops::randn({8, 8});\n"
      "    aten::randn([8, 8], device=cpu, pin_memory=False)  ->  t$0: f32[8, 8]  # {'hash': (" + hx + ",)}\n"
      "\n"
      "    # File: " + file + ":" + std::to_string(run_once_first_line + 1) +
      " in run_once, code: Tensor y = ops::randn({8, 8});\n"
      "    aten::randn([8, 8], device=cpu, pin_memory=False)  ->  t$1: f32[8, 8]  # {'hash': (" + hy + ",)}\n"
      "\n"
      "    # File: " + file + ":" + std::to_string(run_once_first_line + 2) +
      " in run_once, code: Tensor out = ops::mm(ops::relu(x), y);\n"
      "    aten::relu(t$0: f32[8, 8])  ->  t$2: f32[8, 8]  # {'input_hash': (((" + hx + ",),), {}), 'hash': (" + hr +
      ",)}\n"
      "    aten::mm(t$2: f32[8, 8], t$1: f32[8, 8])  ->  t$3: f32[8, 8]  # {'input_hash': (((" + hr + ",), (" + hy +
      ",)), {}), 'hash': (" + hout + ",)}";
  EXPECT_EQ(dm.debug_string(), expected);
  // Without show_stack_trace the headers disappear.
  EXPECT_THAT(dm.debug_string(false), Not(HasSubstr("# File:")));
}

TEST(DebugModeTest, FullStackTracesAreSymbolized) {
  DebugModeOptions options;
  options.record_stack_trace = true;
  options.full_stack_traces = true;
  DebugMode dm(options);
  {
    auto scope = dm.enter();
    run_once();
  }
  ASSERT_EQ(dm.logs().size(), 4u);
  EXPECT_THAT(dm.logs()[0].stack, HasSubstr("run_once"));
  EXPECT_EQ(dm.logs()[0].site->line(), static_cast<uint32_t>(run_once_first_line));
}

TEST(DebugModeTest, BareHashForASingleHashFunctionAndNoneForNonTensors) {
  DebugMode dm;
  const Tensor x = ops::tensor({1, -2, 3}, {3});
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    ops::permute(ops::reshape(x, {3, 1}), {1, 0});
    ops::sum(x).item();
  }
  EXPECT_EQ(dm.debug_string(),
            "    aten::view(t: f32[3], [3, 1])  ->  t: f32[3, 1]  # {'input_hash': ((6.0, [None, None]), {}), 'hash': 6.0}\n"
            "    aten::permute(t: f32[3, 1], [1, 0])  ->  t: f32[1, 3]  # {'input_hash': ((6.0, [None, None]), {}), "
            "'hash': 6.0}\n"
            "    aten::sum(t: f32[3])  ->  t: f32[]  # {'input_hash': ((6.0,), {}), 'hash': 2.0}\n"
            "    aten::_local_scalar_dense(t: f32[])  ->  2.0  # {'input_hash': ((2.0,), {}), 'hash': None}");
}

// PyTorch's hash hook returns None when every hash is None: without
// hash_inputs, item()'s number gets no annotation at all; with them its
// 'hash': None is kept as the text reader keeps it (no output_hash).
TEST(DebugModeTest, AllNoneHashesLeaveNoAnnotation) {
  const Tensor x = ops::tensor({1, -2, 3}, {3});
  DebugMode outputs_only, with_inputs;
  for (DebugMode* dm : {&outputs_only, &with_inputs}) {
    auto scope = dm->enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/dm == &with_inputs);
    ops::sum(x).item();
  }
  EXPECT_EQ(outputs_only.debug_string(),
            "    aten::sum(t: f32[3])  ->  t: f32[]  # {'hash': 2.0}\n"
            "    aten::_local_scalar_dense(t: f32[])  ->  2.0");
  ASSERT_EQ(outputs_only.logs().size(), 2u);
  EXPECT_FALSE(outputs_only.logs()[1].hashed);
  ASSERT_EQ(with_inputs.logs().size(), 2u);
  EXPECT_TRUE(with_inputs.logs()[1].hashed);
  EXPECT_FALSE(with_inputs.logs()[1].output_hash.has_value());
}

// An undefined result prints None, as PyTorch's None (native_layer_norm_backward
// with output_mask [True, False, False]); a bool[] hashes one None per element.
TEST(DebugModeTest, UndefinedResultsAreNoneAndBoolListsHashPerElement) {
  const Tensor x = ops::tensor({1, -2, 3.5, 4, 5, 6}, {2, 3});
  const auto [y, mean, rstd] = ops::native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5);
  const Tensor g = ops::ones({2, 3});
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    ops::native_layer_norm_backward(g, x, {3}, mean, rstd, std::nullopt, std::nullopt, {true, false, false});
  }
  ASSERT_GE(dm.logs().size(), 1u);
  const std::string line = dm.logs()[0].render({});
  EXPECT_THAT(line, HasSubstr("  ->  ('t: f32[2, 3]', None, None)  # "));
  EXPECT_THAT(line, HasSubstr(", [None, None, None]), {})"));
  EXPECT_THAT(line, Not(HasSubstr("undefined")));
}

TEST(DebugModeTest, HashTensorAndTuplesOfSeveralHashFunctions) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes({HashKind::kNorm, HashKind::kHashTensor});
    ops::ones({4});
  }
  EXPECT_EQ(dm.debug_string(), "    aten::ones([4], device=cpu, pin_memory=False)  ->  t: f32[4]  # {'hash': (4.0, 0)}");
}

TEST(DebugModeTest, InPlaceOpsReportPreMutationInputHashes) {
  DebugMode dm;
  Tensor x = ops::ones({2});
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    ops::add_(x, ops::ones({2}));
  }
  EXPECT_THAT(dm.debug_string(), HasSubstr("aten::add_.Tensor(t: f32[2], t: f32[2])  ->  t: f32[2]  # "
                                           "{'input_hash': ((2.0, 2.0), {}), 'hash': 4.0}"));
}

using nn::Bar;
using nn::Foo;

TEST(DebugModeTest, ModuleBoundariesAsInTheReference) {
  Bar mod;
  const Tensor inp = ops::randn({4, 4});
  DebugModeOptions options;
  options.record_nn_module = true;
  options.record_output = false;
  DebugMode dm(options);
  {
    auto scope = dm.enter();
    mod(inp);
  }
  EXPECT_EQ(dm.debug_string(),
            "    [nn.Mod] Bar\n"
            "      [nn.Mod] Bar.abc\n"
            "        [nn.Mod] Bar.abc.l1\n"
            "          aten::t(t: f32[4, 4])\n"
            "          aten::addmm(t: f32[4], t: f32[4, 4], t: f32[4, 4])\n"
            "        [nn.Mod] Bar.abc.l2\n"
            "          aten::t(t: f32[4, 4])\n"
            "          aten::addmm(t: f32[4], t: f32[4, 4], t: f32[4, 4])\n"
            "      [nn.Mod] Bar.xyz\n"
            "        aten::t(t: f32[4, 4])\n"
            "        aten::addmm(t: f32[4], t: f32[4, 4], t: f32[4, 4])");
}

TEST(DebugModeTest, FunctionLevelCallsSitAboveTheirAtenOps) {
  DebugModeOptions options;
  options.record_function_level = true;
  DebugMode dm(options);
  const Tensor x = ops::randn({2, 3}), w = ops::randn({4, 3}), b = ops::randn({4});
  {
    auto scope = dm.enter();
    ops::relu(ops::linear(x, w, b));
  }
  EXPECT_EQ(dm.debug_string(),
            "  aten::linear(t: f32[2, 3], t: f32[4, 3], t: f32[4])  ->  t: f32[2, 4]\n"
            "      aten::t(t: f32[4, 3])  ->  t: f32[3, 4]\n"
            "      aten::addmm(t: f32[4], t: f32[2, 3], t: f32[3, 4])  ->  t: f32[2, 4]\n"
            "  aten::relu(t: f32[2, 4])  ->  t: f32[2, 4]\n"
            "      aten::relu(t: f32[2, 4])  ->  t: f32[2, 4]");
}

TEST(DebugModeTest, DispatchHooksLogInlineRecordSilently) {
  DebugMode dm;
  int pre_calls = 0;
  {
    auto scope = dm.enter();
    auto hooks = DebugMode::dispatch_hooks(
        [](const OpCall& call, const Stack*) {
          return std::vector<std::pair<std::string, std::string>>{{"recorded", call.name()}};
        },
        [](const OpCall&, const Stack* results) {
          return std::vector<std::pair<std::string, std::string>>{{"n_out", std::to_string(results->size())}};
        },
        [&](const OpCall&, const Stack* results) {
          ++pre_calls;
          EXPECT_EQ(results, nullptr);  // runs before the op
          return std::vector<std::pair<std::string, std::string>>{};
        });
    ops::relu(ops::ones({2}));
  }
  EXPECT_EQ(pre_calls, 2);
  EXPECT_THAT(dm.debug_string(), HasSubstr("aten::relu(t: f32[2])  ->  t: f32[2]  # {'n_out': '1'}"));
  EXPECT_THAT(dm.debug_string(), Not(HasSubstr("recorded")));
  ASSERT_EQ(dm.logs()[1].record.size(), 1u);
  EXPECT_EQ(dm.logs()[1].record[0].second, "aten::relu");
}

// Hook values render as Python's repr of a str: "it's" in double quotes,
// escapes for the quote, backslashes and control characters (a raw newline
// broke the log's line).
TEST(DebugModeTest, HookStringsRenderAsPythonsRepr) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hooks = DebugMode::dispatch_hooks(nullptr, [](const OpCall&, const Stack*) {
      return std::vector<std::pair<std::string, std::string>>{
          {"a", "it's"}, {"b", "x\ny"}, {"c", "say \"hi\""}, {"d", "both ' and \""}, {"e", "tab\there\\\x01\x7f\r"}};
    });
    ops::ones({1});
  }
  EXPECT_EQ(dm.debug_string(),
            "    aten::ones([1], device=cpu, pin_memory=False)  ->  t: f32[1]  # {'a': \"it's\", 'b': 'x\\ny', "
            "'c': 'say \"hi\"', 'd': 'both \\' and \"', 'e': 'tab\\there\\\\\\x01\\x7f\\r'}");
}

TEST(DebugModeTest, MemoryHookReportsAllocatorBytes) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hooks = DebugMode::dispatch_hooks(nullptr, DebugMode::memory_hook());
    ops::zeros({1024, 256});  // 1 MiB
  }
  EXPECT_THAT(dm.debug_string(), testing::ContainsRegex(R"(# \{'mem': '[0-9]+\.[0-9]{3} MB', 'peak': '[0-9]+\.[0-9]{3} MB'\})"));
}

TEST(DebugModeTest, KernelRecordsRenderLikeTritonLines) {
  DebugMode dm;
  const Tensor in = ops::tensor({1, -2, 3, -4, 5, -6, 7, -8, 9}, {3, 3});
  Tensor out = ops::empty({3, 3});
  ops::zero_(out);
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    auto record = DebugMode::record_kernel("fused", "fused_relu_0", {{"in0", in}, {"out0", out}, {"n", int64_t{9}}});
    // The "kernel": relu written straight into out, outside the dispatcher.
    for (int i = 0; i < 9; ++i) out.data_ptr<float>()[i] = std::max(0.0f, in.data_ptr<float>()[i]);
    record.finish();
    ops::neg(out);
  }
  EXPECT_EQ(dm.debug_string(),
            "    [fused] fused_relu_0(in0=t: f32[3, 3], out0=t: f32[3, 3], n=9)\n"
            "    # pre-kernel hashes: {in0: 45.0, out0: 0.0}\n"
            "    # post-kernel hashes: {in0: 45.0, out0: 25.0}\n"
            "\n"
            "    aten::neg(t: f32[3, 3])  ->  t: f32[3, 3]  # {'input_hash': ((25.0,), {}), 'hash': 25.0}");
}

TEST(DebugModeTest, SuspendedRegionsAreNotRecordedButStillRun) {
  DebugMode dm;
  Tensor y;
  {
    auto scope = dm.enter();
    ops::relu(ops::ones({1}));
    dm.set_enabled(false);
    y = ops::neg(ops::ones({1}));
    dm.set_enabled(true);
    ops::abs(y);
  }
  EXPECT_EQ(y.item<float>(), -1.0f);
  ASSERT_EQ(dm.logs().size(), 3u);
  EXPECT_EQ(dm.logs()[0].name, "aten::ones");
  EXPECT_EQ(dm.logs()[1].name, "aten::relu");
  EXPECT_EQ(dm.logs()[2].name, "aten::abs");
}

// A fake-kind subclass that runs the op on its data: enough to check labels.
TEST(DebugModeTest, FakeTensorsAreRecordedOnlyWhenAskedAndLabelledFt) {
  Tensor fake;
  {
    FakeTensorMode fake_mode;
    ModeGuard guard(fake_mode);
    fake = ops::ones({2});
  }
  DebugMode plain;
  {
    auto scope = plain.enter();
    ops::relu(fake);
  }
  EXPECT_TRUE(plain.logs().empty());
  DebugModeOptions options;
  options.record_fake = true;
  DebugMode with_fake(options);
  {
    auto scope = with_fake.enter();
    ops::relu(fake);
  }
  EXPECT_EQ(with_fake.debug_string(), "    aten::relu(ft: f32[2])  ->  ft: f32[2]");
}

// The reference's wrong decomposition: cos replaced by sin above the mode.
struct CosToSin : FunctionMode {
  bool dispatch(OpCall& call) override {
    if (call.name() != "aten::cos") return false;
    const Tensor r = ops::sin(call.arg(0).to_tensor());
    call.stack().clear();
    call.stack().emplace_back(r);
    return true;
  }
};

TEST(DebugModeTest, WrongDecompositionShowsUpAsSinAndDifferentHashes) {
  const Tensor x = ops::randn({3, 3});
  auto f = [&] {  // separate statements: C++ leaves argument evaluation order open
    const Tensor y = ops::relu(x);
    const Tensor z = ops::cos(x);
    return ops::add(y, z);
  };
  DebugMode eager, again, compiled;
  for (DebugMode* dm : {&eager, &again}) {
    auto scope = dm->enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, true);
    f();
  }
  {
    CosToSin wrong;
    ModeGuard g(wrong);
    auto scope = compiled.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, true);
    f();
  }
  ASSERT_EQ(eager.logs().size(), 3u);
  ASSERT_EQ(compiled.logs().size(), 3u);
  EXPECT_EQ(eager.logs()[1].name, "aten::cos");
  EXPECT_EQ(compiled.logs()[1].name, "aten::sin");
  EXPECT_EQ(eager.logs()[0].output_hash->at(0).hashes, compiled.logs()[0].output_hash->at(0).hashes);
  EXPECT_NE(eager.logs()[2].output_hash->at(0).hashes, compiled.logs()[2].output_hash->at(0).hashes);
  // Two eager runs agree; the diff points at the cos/sin op.
  EXPECT_TRUE(diff_logs(eager.logs(), again.logs()).equivalent());
  const LogDiff diff = diff_logs(eager.logs(), compiled.logs());
  EXPECT_EQ(diff.first_structural_index, 1u);
  EXPECT_TRUE(diff.mismatches.empty());
  EXPECT_THAT(diff.report(), testing::StartsWith(
                                 "first divergence at entry 1: aten::cos (depth 1) vs aten::sin (depth 1)\n"
                                 "  log 1:     aten::cos(t: f32[3, 3])  ->  t: f32[3, 3]  # {'input_hash': (("));
  EXPECT_THAT(diff.report(), HasSubstr("\n  log 2:     aten::sin(t: f32[3, 3])  ->  t: f32[3, 3]  # {"));
}

}  // namespace
}  // namespace opspec
