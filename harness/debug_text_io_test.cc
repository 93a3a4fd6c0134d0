// parse_debug_string / load_debug_log: opspec's own debug strings read back
// to the same log (every entry kind, ids, hashes of each kind, module headers,
// kernels with buffer hashes), PyTorch's documented text, and errors that
// name the file, line and column.
#include "harness/debug_text_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "harness/debug_diff.h"
#include "harness/debug_log_io.h"
#include "runtime/compile/backend.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/reference_models_test_util.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace debug_text_io_test {

using ::testing::HasSubstr;

// expect_reads_back: dm's debug string parses to a log that renders entry for
// entry as dm's did, at the same depths, and diffs as equivalent to it.
void expect_reads_back(const DebugMode& dm) {
  const std::string text = dm.debug_string();
  absl::StatusOr<std::vector<DebugCall>> parsed = parse_debug_string(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  const std::vector<DebugCall> original(dm.logs().begin(), dm.logs().end());
  ASSERT_EQ(parsed->size(), original.size()) << text;
  for (size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ((*parsed)[i].render({}), original[i].render({})) << "entry " << i;
    EXPECT_EQ((*parsed)[i].depth, original[i].depth) << "entry " << i;
  }
  const LogDiff d = diff_logs(original, *parsed);
  EXPECT_TRUE(d.equivalent()) << d.report();
}

TEST(DebugTextIo, OpsWithIdsAndHashesOfEveryKindReadBack) {
  for (const std::vector<HashKind>& kinds : std::vector<std::vector<HashKind>>{
           {HashKind::kNorm}, {HashKind::kHashTensor}, {HashKind::kBitwise}, {HashKind::kNorm, HashKind::kHashTensor}}) {
    DebugModeOptions o;
    o.record_ids = true;
    DebugMode dm(o);
    {
      auto scope = dm.enter();
      DebugMode::HashScope hashes(kinds, /*hash_inputs=*/true, /*as_tuple=*/kinds.size() > 1);
      const Tensor x = ops::randn({3, 4});
      const Tensor y = ops::relu(x);
      const Tensor z = ops::mm(y, ops::transpose(x, 0, 1));
      ops::cat({z, z}, 0);                       // a tensor list argument
      ops::max(z, 1);                            // two outputs
      ops::div(ops::sum(z), 0.0);                // inf
      ops::sqrt(ops::neg(ops::abs(x)));          // nan
      ops::softmax(z, -1, DType::kFloat64);      // a keyword argument
    }
    SCOPED_TRACE(dm.debug_string());
    expect_reads_back(dm);
  }
}

TEST(DebugTextIo, ModulesAndKernelsReadBack) {
  DebugModeOptions o;
  o.record_nn_module = true;
  DebugMode dm(o);
  nn::Bar bar;
  const Tensor x = ops::randn({4, 4});
  const Graph g = make_fx([](const Tensor& a) { return ops::relu(a * 2.0 + 1.0); })(x);
  const CompiledGraph fused = fused_backend(g, {x});
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, true);
    bar(x);
    fused({x});
  }
  SCOPED_TRACE(dm.debug_string());
  ASSERT_THAT(dm.debug_string(), HasSubstr("# post-kernel hashes:"));
  expect_reads_back(dm);
}

// PyTorch's text, as its DebugMode tutorial prints it (record_ids, norm hashes
// with hash_inputs), against the same program with cos decomposed to sin.
constexpr const char* kPyTorchEager =
    "    aten::relu(t$0: f32[3, 3])  ->  t$1: f32[3, 3]  # {'input_hash': ((7.063097313046455,), {}), 'hash': 3.120201215147972}\n"
    "    aten::cos(t$0: f32[3, 3])  ->  t$2: f32[3, 3]  # {'input_hash': ((7.063097313046455,), {}), 'hash': 5.947166860103607}\n"
    "    aten::add.Tensor(t$1: f32[3, 3], t$2: f32[3, 3])  ->  t$3: f32[3, 3]  # {'input_hash': ((3.120201215147972, 5.947166860103607), {}), 'hash': 9.06736809015274}\n";
constexpr const char* kPyTorchCompiled =
    "    aten::relu(t$0: f32[3, 3])  ->  t$1: f32[3, 3]  # {'input_hash': ((7.063097313046455,), {}), 'hash': 3.120201215147972}\n"
    "    aten::sin(t$0: f32[3, 3])  ->  t$2: f32[3, 3]  # {'input_hash': ((7.063097313046455,), {}), 'hash': 5.942118629813194}\n"
    "    aten::add.Tensor(t$1: f32[3, 3], t$2: f32[3, 3])  ->  t$3: f32[3, 3]  # {'input_hash': ((3.120201215147972, 5.942118629813194), {}), 'hash': 9.062319844961166}\n";

TEST(DebugTextIo, PyTorchTextParsesAndDiffs) {
  absl::StatusOr<std::vector<DebugCall>> eager = parse_debug_string(kPyTorchEager);
  absl::StatusOr<std::vector<DebugCall>> compiled = parse_debug_string(kPyTorchCompiled);
  ASSERT_TRUE(eager.ok()) << eager.status();
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(eager->size(), 3u);
  const DebugCall& cos = (*eager)[1];
  EXPECT_EQ(cos.name, "aten::cos");
  EXPECT_EQ(cos.depth, 1);
  EXPECT_EQ(cos.args.at(0).tensors.at(0).id, 0);
  EXPECT_EQ(cos.outputs.at(0).tensors.at(0).sizes, SizeVec({3, 3}));
  EXPECT_DOUBLE_EQ(cos.output_hash->at(0).hashes.at(0).f, 5.947166860103607);
  const LogDiff d = diff_logs(*eager, *compiled);
  EXPECT_FALSE(d.structurally_aligned);  // cos against sin
  EXPECT_EQ(d.first_structural_index, 1u);
  // The one-space separators of the tutorial's printed text read the same.
  absl::StatusOr<std::vector<DebugCall>> tight = parse_debug_string(
      " aten::mm(t: f32[4, 4], t: f32[4, 4]) -> t: f32[4, 4] # {'input_hash': ((5.8266037702560425, "
      "12.937780266540358), {}), 'hash': 15.515096314600669}\n"
      " aten::_local_scalar_dense(t: f64[]) -> 6.899595186114311 # {'input_hash': ((6.899595186114311,), {}), 'hash': None}\n"
      " [triton] triton_poi_fused_0(in_ptr0=t: f32[3, 3], out_ptr0=t: f32[3, 3], xnumel=9)\n"
      " # pre-kernel hashes: {in_ptr0: 6.899595186114311, out_ptr0: 6.955817004665732}\n"
      " # post-kernel hashes: {in_ptr0: 6.899595186114311, out_ptr0: 3.959189847111702}\n"
      " aten::randn([8, 8], device=cpu, pin_memory=False) -> t: f32[8, 8] # {'mem': '8.125 MB', 'peak': '14.128 MB'}\n");
  ASSERT_TRUE(tight.ok()) << tight.status();
  ASSERT_EQ(tight->size(), 4u);
  EXPECT_EQ((*tight)[1].render({}), "aten::_local_scalar_dense(t: f64[])  ->  6.899595186114311  # {'input_hash': "
                                    "((6.899595186114311,), {}), 'hash': None}");
  EXPECT_EQ((*tight)[2].kind, DebugCall::Kind::kKernel);
  EXPECT_EQ((*tight)[2].post_kernel_hashes.at(1).first, "out_ptr0");
  EXPECT_EQ((*tight)[3].log.at(0), (std::pair<std::string, std::string>{"mem", "8.125 MB"}));
}

// item() under hashes: 'hash': None (its input hashed) and no annotation
// (not), read back as recorded, so the JSON and text of one run diff equal.
TEST(DebugTextIo, NoneHashesReadBackAsRecorded) {
  for (const bool hash_inputs : {false, true}) {
    DebugMode dm;
    {
      auto scope = dm.enter();
      auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, hash_inputs);
      const Tensor x = ops::ones({3});
      ops::mul(x, ops::sum(x).item());
    }
    SCOPED_TRACE(dm.debug_string());
    expect_reads_back(dm);
    const std::string json = save_log_json(std::vector<DebugCall>(dm.logs().begin(), dm.logs().end()));
    absl::StatusOr<std::vector<DebugCall>> from_json = load_log_json(json);
    absl::StatusOr<std::vector<DebugCall>> from_text = parse_debug_string(dm.debug_string());
    ASSERT_TRUE(from_json.ok() && from_text.ok());
    EXPECT_TRUE(diff_logs(*from_json, *from_text).equivalent()) << diff_logs(*from_json, *from_text).report();
  }
}

// A multi-output op's 'hash' tuple without recorded outputs: one hash per
// result, as the bare input hashes (one hash function) or a None item show.
TEST(DebugTextIo, TupleHashesWithoutOutputsReadAsOnePerResult) {
  DebugModeOptions o;
  o.record_output = false;
  DebugMode dm(o);
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    ops::native_layer_norm(ops::tensor({1, -2, 3.5}, {3}), {3}, std::nullopt, std::nullopt, 1e-5);
  }
  SCOPED_TRACE(dm.debug_string());
  expect_reads_back(dm);
  absl::StatusOr<std::vector<DebugCall>> r = parse_debug_string(
      "    aten::a(t: f32[2])  # {'hash': (1.0, None)}\n"
      "    aten::b(t: f32[2])  # {'hash': (1.0, 2.0), 'input_hash': ((3.0,), {})}\n"
      "    aten::c(t: f32[2])  # {'hash': (1.0, 2.0)}\n");  // no evidence: two hash functions
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].output_hash->size(), 2u);
  EXPECT_EQ((*r)[1].output_hash->size(), 2u);
  EXPECT_FALSE((*r)[1].hash_tuple);
  EXPECT_EQ((*r)[2].output_hash->size(), 1u);
  EXPECT_TRUE((*r)[2].hash_tuple);
}

// Hook values with quotes, newlines and control characters read back.
TEST(DebugTextIo, HookStringEscapesReadBack) {
  const std::vector<std::pair<std::string, std::string>> items = {
      {"a", "it's"}, {"b", "x\ny"}, {"c", "say \"hi\""}, {"d", "both ' and \""}, {"e", "tab\there\\\x01\r"}};
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hooks = DebugMode::dispatch_hooks(nullptr, [&](const OpCall&, const Stack*) { return items; });
    ops::ones({1});
  }
  expect_reads_back(dm);
  absl::StatusOr<std::vector<DebugCall>> r = parse_debug_string(dm.debug_string());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].log, items);
}

// 50,000 nested brackets overflowed the stack; past 64 levels is an error at its column.
TEST(DebugTextIo, DeepNestingIsAnErrorAtItsColumn) {
  const std::string line =
      "    aten::relu(t: f32[1])  # {'hash': " + std::string(50000, '[') + std::string(50000, ']') + "}";
  absl::StatusOr<std::vector<DebugCall>> r = parse_debug_string(line + "\n", "deep.txt");
  ASSERT_FALSE(r.ok());
  const size_t column = line.find("[[") + 64;  // 1-based: the 64th '[' ({ is level 0)
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("deep.txt:1:" + std::to_string(column) + ": annotation nested deeper than 64 levels"));
  EXPECT_LT(r.status().message().size(), 400u);  // the line is quoted around the column, not whole
  const std::string ok = "    aten::relu(t: f32[1])  # {'hash': " + std::string(60, '[') + std::string(60, ']') + "}";
  EXPECT_TRUE(parse_debug_string(ok).ok());
}

TEST(DebugTextIo, MalformedLinesNameTheFileLineAndColumn) {
  auto error_of = [](std::string_view text) {
    absl::StatusOr<std::vector<DebugCall>> r = parse_debug_string(text, "eager.txt");
    return r.ok() ? std::string("parsed") : std::string(r.status().message());
  };
  EXPECT_THAT(error_of("  aten::relu(t: f32[3])  ->  t: f32[3]\n  aten::cos(t: f32[3]  ->  t: f32[3]\n"),
              HasSubstr("eager.txt:2:12: unclosed '(' of the arguments"));
  EXPECT_THAT(error_of("  aten::relu(t: f32[3])  ->  t: f32[3]  # {'hash': 1.0\n"), HasSubstr("eager.txt:1:"));
  EXPECT_THAT(error_of("  aten::relu(t: f32[3])  # {'hash': 'x'}\n"), HasSubstr("expected a tensor hash, got ''x''"));
  EXPECT_THAT(error_of("  aten::relu(t: f32[3])\n   aten::cos(t: f32[3])\n"),
              HasSubstr("eager.txt:2:4: indentation of 3 spaces"));
  EXPECT_THAT(error_of("  # pre-kernel hashes: {in0: 1.0}\n"), HasSubstr("kernel hashes without a kernel entry"));
  EXPECT_THAT(error_of("  aten::relu(t: f32[3]) garbage\n"), HasSubstr("expected '->' or '#' after the arguments"));
  EXPECT_EQ(error_of("\n\n  # a stack trace line\n"), "parsed");
}

TEST(DebugTextIo, LoadDebugLogReadsBothFormsAndNamesTheLineOfBadJson) {
  const std::string dir = ::testing::TempDir();
  DebugMode dm;
  {
    auto scope = dm.enter();
    ops::relu(ops::ones({2}));
  }
  const std::string json = dir + "/log.json", text = dir + "/log.txt", bad = dir + "/bad.json";
  ASSERT_TRUE(save_log_file(json, std::vector<DebugCall>(dm.logs().begin(), dm.logs().end())).ok());
  std::ofstream(text) << dm.debug_string() << "\n";
  ASSERT_TRUE(load_debug_log(json).ok());
  ASSERT_TRUE(load_debug_log(text).ok());
  EXPECT_EQ(load_debug_log(dir).status().message(), "cannot read debug log '" + dir + "': it is a directory");
  EXPECT_EQ(load_debug_log(json)->size(), load_debug_log(text)->size());
  std::ofstream(bad) << "{\"format\": \"opspec-debug-log\",\n \"version\": 1,\n \"entries\": [\n";  // truncated
  absl::StatusOr<std::vector<DebugCall>> r = load_debug_log(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad + ":4:1: "));
  EXPECT_THAT(std::string(load_debug_log(dir + "/missing.txt").status().message()), HasSubstr("missing.txt"));
}

}  // namespace debug_text_io_test
}  // namespace opspec
