#include "harness/debug_log_io.h"

#include <cmath>
#include <cstdio>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/debug_diff.h"
#include "runtime/dispatch/schema.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace debug_log_io_test {

using ::testing::HasSubstr;

RecordedValue tensor_value(DType dtype, SizeVec sizes, int64_t id = -1, bool fake = false, std::string name = "") {
  RecordedValue v;
  v.kind = RecordedValue::Kind::kTensor;
  v.tensors.push_back(RecordedTensor{dtype, std::move(sizes), id, fake});
  v.name = std::move(name);
  return v;
}

RecordedValue other_value(Value value, std::string name = "", const ArgType* type = nullptr) {
  RecordedValue v;
  v.value = std::move(value);
  v.name = std::move(name);
  v.type = type;
  return v;
}

HashNode hash_node(std::vector<HashValue> hashes, std::string name = "") {
  HashNode n;
  n.kind = HashNode::Kind::kHashes;
  n.hashes = std::move(hashes);
  n.name = std::move(name);
  return n;
}

const ArgType kLayoutType{TypeKind::kLayout, false, 0, true};

// A log using every field and every kind of value and hash.
std::vector<DebugCall> full_log() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<DebugCall> log;

  DebugCall fn;
  fn.kind = DebugCall::Kind::kFunction;
  fn.depth = 0;
  fn.name = "torch._C._nn.linear";
  fn.args = {tensor_value(DType::kFloat32, {8, 8}, 0), tensor_value(DType::kBFloat16, {8, 8}, 1, true)};
  fn.has_outputs = true;
  fn.outputs = {tensor_value(DType::kFloat32, {8, 8}, 2)};
  fn.site_text = "model.cc:59 in run_once, code: Tensor y = linear(x);";
  fn.stack = "#0 run_once model.cc:59\n#1 main model.cc:80";
  log.push_back(fn);

  DebugCall factory;
  factory.depth = 1;
  factory.name = "aten::empty.memory_format";
  factory.args = {other_value(std::vector<int64_t>{8, 8}), other_value(DType::kFloat64, "dtype"),
                  other_value(int64_t{0}, "layout", &kLayoutType), other_value(Device::parse("cpu"), "device"),
                  other_value(false, "pin_memory"), other_value(Value(), "memory_format")};
  factory.has_outputs = true;
  factory.outputs = {tensor_value(DType::kFloat64, {8, 8})};
  log.push_back(factory);

  DebugCall misc;
  misc.depth = 1;
  misc.name = "aten::misc";
  misc.args = {other_value(2.5), other_value(-0.0), other_value(nan), other_value(-inf),
               other_value(std::vector<double>{1.0, inf, nan}), other_value("reduce 'sum'"), other_value(std::string()),
               other_value(int64_t{-7}), other_value(true), other_value(Device::parse("meta")),
               other_value(std::numeric_limits<int64_t>::min())};
  RecordedValue list;
  list.kind = RecordedValue::Kind::kTensorList;
  list.tensors = {RecordedTensor{DType::kInt64, {}}, RecordedTensor{DType::kBool, {0, 3}}};
  misc.args.push_back(list);
  misc.has_outputs = true;
  misc.outputs = {tensor_value(DType::kInt32, {2}), other_value(1.5), tensor_value(DType::kFloat16, {1})};
  misc.hash_tuple = true;
  misc.hashed = true;
  HashNode items;
  items.kind = HashNode::Kind::kList;
  items.items = {hash_node({HashValue::of_float(1.0), HashValue::of_int(0)}), HashNode{}};
  misc.input_hash = std::vector<HashNode>{hash_node({HashValue::of_float(nan), HashValue::of_int(~0ull)}), items,
                                          hash_node({HashValue::of_float(-0.0), HashValue::of_int(12345)}, "out")};
  misc.input_hash->back().name = "out";
  HashNode none_kw;
  none_kw.name = "dtype";
  misc.input_hash->push_back(none_kw);
  misc.output_hash = std::vector<HashNode>{hash_node({HashValue::of_float(inf), HashValue::of_int(1)}), HashNode{},
                                           hash_node({HashValue::of_float(-inf), HashValue::of_int(2)})};
  misc.log = {{"mem", "8.125 MB"}, {"peak", "it's \"quoted\"\n"}};
  misc.record = {{"output", "t: f32[2]"}};
  log.push_back(misc);

  DebugCall scalar;  // 'hash': None
  scalar.depth = 1;
  scalar.name = "aten::_local_scalar_dense";
  scalar.args = {tensor_value(DType::kFloat64, {})};
  scalar.has_outputs = true;
  scalar.outputs = {other_value(6.899595186114311)};
  scalar.hashed = true;
  log.push_back(scalar);

  DebugCall module;
  module.kind = DebugCall::Kind::kModule;
  module.depth = 1;
  module.name = "Bar.abc.l1";
  log.push_back(module);

  DebugCall kernel;
  kernel.kind = DebugCall::Kind::kKernel;
  kernel.depth = 2;
  kernel.name = "fused_relu_0";
  kernel.kernel_prefix = "fused";
  kernel.args = {tensor_value(DType::kFloat32, {3, 3}, -1, false, "in0"), other_value(int64_t{9}, "n")};
  kernel.pre_kernel_hashes = {{"in0", {HashValue::of_float(45.0)}}, {"out0", {HashValue::of_float(0.0)}}};
  kernel.post_kernel_hashes = {{"in0", {HashValue::of_float(45.0)}}, {"out0", {HashValue::of_float(25.0)}}};
  log.push_back(kernel);
  return log;
}

void expect_same_hash(const HashValue& a, const HashValue& b) {
  EXPECT_EQ(a.is_int, b.is_int);
  EXPECT_TRUE(a == b) << a.str() << " vs " << b.str();
}

void expect_same_node(const HashNode& a, const HashNode& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.hashes.size(), b.hashes.size());
  for (size_t i = 0; i < a.hashes.size(); ++i) expect_same_hash(a.hashes[i], b.hashes[i]);
  ASSERT_EQ(a.items.size(), b.items.size());
  for (size_t i = 0; i < a.items.size(); ++i) expect_same_node(a.items[i], b.items[i]);
}

void expect_same_nodes(const std::optional<std::vector<HashNode>>& a, const std::optional<std::vector<HashNode>>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) expect_same_node((*a)[i], (*b)[i]);
}

void expect_same_values(const std::vector<RecordedValue>& a, const std::vector<RecordedValue>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].tensors.size(), b[i].tensors.size());
    for (size_t k = 0; k < a[i].tensors.size(); ++k) {
      EXPECT_EQ(a[i].tensors[k].dtype, b[i].tensors[k].dtype);
      EXPECT_EQ(a[i].tensors[k].sizes, b[i].tensors[k].sizes);
      EXPECT_EQ(a[i].tensors[k].id, b[i].tensors[k].id);
      EXPECT_EQ(a[i].tensors[k].fake, b[i].tensors[k].fake);
    }
    if (a[i].kind != RecordedValue::Kind::kOther) continue;
    const Value& x = a[i].value;
    const Value& y = b[i].value;
    EXPECT_EQ(x.type_name(), y.type_name());
    if (x.is_double()) {
      // Bitwise, so -0.0 and nan survive.
      EXPECT_EQ(std::bit_cast<uint64_t>(x.to_double()), std::bit_cast<uint64_t>(y.to_double())) << x.repr();
    } else if (x.is_double_list()) {
      ASSERT_EQ(x.to_double_list().size(), y.to_double_list().size());
      for (size_t k = 0; k < x.to_double_list().size(); ++k) {
        EXPECT_EQ(std::bit_cast<uint64_t>(x.to_double_list()[k]), std::bit_cast<uint64_t>(y.to_double_list()[k]));
      }
    } else {
      EXPECT_TRUE(x == y) << x.repr() << " vs " << y.repr();
    }
    EXPECT_EQ(b[i].type, nullptr);
    EXPECT_FALSE(b[i].rendered.empty() && !(y.is_string() && y.to_string().empty()));
  }
}

void expect_same_log(const std::vector<DebugCall>& a, const std::vector<DebugCall>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    const DebugCall& x = a[i];
    const DebugCall& y = b[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.depth, y.depth);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kernel_prefix, y.kernel_prefix);
    expect_same_values(x.args, y.args);
    expect_same_values(x.outputs, y.outputs);
    EXPECT_EQ(x.has_outputs, y.has_outputs);
    EXPECT_FALSE(static_cast<bool>(y.site));  // loaded logs carry site_text only
    EXPECT_EQ(x.site_summary(), y.site_summary());
    EXPECT_EQ(x.stack, y.stack);
    expect_same_nodes(x.input_hash, y.input_hash);
    expect_same_nodes(x.output_hash, y.output_hash);
    EXPECT_EQ(x.hash_tuple, y.hash_tuple);
    EXPECT_EQ(x.hashed, y.hashed);
    EXPECT_EQ(x.log, y.log);
    EXPECT_EQ(x.record, y.record);
    ASSERT_EQ(x.pre_kernel_hashes.size(), y.pre_kernel_hashes.size());
    for (size_t k = 0; k < x.pre_kernel_hashes.size(); ++k) {
      EXPECT_EQ(x.pre_kernel_hashes[k].first, y.pre_kernel_hashes[k].first);
      EXPECT_EQ(x.pre_kernel_hashes[k].second, y.pre_kernel_hashes[k].second);
    }
    ASSERT_EQ(x.post_kernel_hashes.size(), y.post_kernel_hashes.size());
    for (size_t k = 0; k < x.post_kernel_hashes.size(); ++k) {
      EXPECT_EQ(x.post_kernel_hashes[k].first, y.post_kernel_hashes[k].first);
      EXPECT_EQ(x.post_kernel_hashes[k].second, y.post_kernel_hashes[k].second);
    }
    EXPECT_EQ(x.render({}), y.render({}));
  }
}

TEST(DebugLogIoTest, EveryFieldRoundTrips) {
  const std::vector<DebugCall> log = full_log();
  const std::string text = save_log_json(log);
  EXPECT_THAT(text, ::testing::StartsWith("{\"format\": \"opspec-debug-log\", \"version\": 1, \"entries\": [\n{"));
  EXPECT_THAT(text, HasSubstr("{\"f\":\"nan\"}"));
  EXPECT_THAT(text, HasSubstr("{\"u\":\"18446744073709551615\"}"));
  EXPECT_THAT(text, HasSubstr("\"rendered\":\"torch.strided\""));
  absl::StatusOr<std::vector<DebugCall>> loaded = load_log_json(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  expect_same_log(log, *loaded);
  // Saving the loaded log gives the same text.
  EXPECT_EQ(save_log_json(*loaded), text);
  EXPECT_TRUE(diff_logs(log, *loaded).equivalent());
}

TEST(DebugLogIoTest, RenderedTextSurvivesWhatTheValueCannotCarry) {
  const std::vector<DebugCall> log = full_log();
  absl::StatusOr<std::vector<DebugCall>> loaded = load_log_json(save_log_json(log));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // The layout's schema type is gone, yet it still renders as torch.strided.
  EXPECT_EQ((*loaded)[1].args[2].rendered, "torch.strided");
  EXPECT_EQ((*loaded)[1].render({}), log[1].render({}));
  EXPECT_THAT((*loaded)[1].render({}), HasSubstr("layout=torch.strided"));
  EXPECT_THAT((*loaded)[2].render({}), HasSubstr("nan, -inf, [1.0, inf, nan], reduce 'sum', , -7, True, meta"));
}

TEST(DebugLogIoTest, EmptyLogRoundTrips) {
  const std::string text = save_log_json({});
  EXPECT_EQ(text, "{\"format\": \"opspec-debug-log\", \"version\": 1, \"entries\": []}\n");
  absl::StatusOr<std::vector<DebugCall>> loaded = load_log_json(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->empty());
}

// Records a small program with ids, tuple hashes of inputs and outputs.
std::vector<DebugCall> record_program(const DebugModeOptions& options) {
  DebugMode dm(options);
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes({HashKind::kNorm, HashKind::kHashTensor}, /*hash_inputs=*/true);
    const Tensor x = ops::randn({4, 3});
    const Tensor r = ops::relu(x);
    const Tensor y = ops::sum(r, std::vector<int64_t>{1}, /*keepdim=*/true);
    ops::sum(ops::add(y, 1.5)).item();
  }
  return {dm.logs().begin(), dm.logs().end()};
}

void expect_round_trip_through_file(const std::vector<DebugCall>& log, const DebugModeOptions& options) {
  // One file per test and process: ctest runs tests in parallel.
  const std::string path = (std::filesystem::temp_directory_path() /
                            str_cat("opspec_debug_log_io_", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                    "_", getpid(), ".json"))
                               .string();
  ASSERT_TRUE(save_log_file(path, log, options).ok());
  absl::StatusOr<std::vector<DebugCall>> loaded = load_log_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  expect_same_log(log, *loaded);
  for (size_t i = 0; i < loaded->size(); ++i) EXPECT_EQ((*loaded)[i].render(options), log[i].render(options));
  EXPECT_TRUE(diff_logs(log, *loaded).equivalent());
}

TEST(DebugLogIoTest, RecordedLogRendersIdenticallyAfterLoading) {
  DebugModeOptions options;
  options.record_ids = true;
  const std::vector<DebugCall> log = record_program(options);
  ASSERT_EQ(log.size(), 6u);  // randn, relu, sum.dim_IntList, add.Tensor, sum, _local_scalar_dense
  expect_round_trip_through_file(log, options);
}

TEST(DebugLogIoTest, StackTraceSitesSurviveSaving) {
  DebugModeOptions options;
  options.record_stack_trace = true;
  const std::vector<DebugCall> log = record_program(options);
  ASSERT_FALSE(log.empty());
  expect_round_trip_through_file(log, options);
  absl::StatusOr<std::vector<DebugCall>> loaded = load_log_json(save_log_json(log));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const DebugCall& c : *loaded) EXPECT_THAT(c.site_summary(), HasSubstr("debug_log_io_test.cc:"));
}

// ---- errors ----

std::string error_of(std::string_view text) {
  absl::StatusOr<std::vector<DebugCall>> r = load_log_json(text);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : std::string(r.status().message());
}

// The saved full log with one substring replaced (which must occur).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = save_log_json(full_log());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(DebugLogIoTest, NotJsonNamesTheByteOffset) {
  EXPECT_THAT(error_of("{\"format\": x}"), HasSubstr("not valid JSON at byte 12: "));
  EXPECT_THAT(error_of("hello"), HasSubstr("not valid JSON at byte 1"));
  EXPECT_THAT(error_of(""), HasSubstr("debug log JSON is empty"));
  EXPECT_THAT(error_of("  \n"), HasSubstr("debug log JSON is empty"));
  EXPECT_THAT(error_of(save_log_json(full_log()) + "]"), HasSubstr("not valid JSON at byte"));
}

TEST(DebugLogIoTest, TruncatedTextIsReportedAsTruncated) {
  const std::string text = save_log_json(full_log());
  const std::string cut = text.substr(0, text.size() / 2);
  EXPECT_THAT(error_of(cut), HasSubstr("debug log JSON is truncated: unexpected end of input at byte " +
                                       std::to_string(cut.size())));
}

TEST(DebugLogIoTest, EveryPrefixFailsCleanlyAndCorruptionNeverCrashes) {
  const std::string text = save_log_json(full_log());
  // Every proper prefix except the one missing only the final newline is invalid.
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    absl::StatusOr<std::vector<DebugCall>> r = load_log_json(std::string_view(text).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes loaded";
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = text;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<char>(rng() % 128);
    (void)load_log_json(bad);  // ok or an error; never a crash
  }
}

TEST(DebugLogIoTest, WrongFormatOrVersion) {
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("not an opspec debug log: expected a JSON object, got array"));
  EXPECT_THAT(error_of("{\"version\": 1, \"entries\": []}"), HasSubstr("not an opspec debug log: missing field 'format'"));
  EXPECT_THAT(error_of("{\"format\": \"chrome-trace\", \"version\": 1, \"entries\": []}"),
              HasSubstr("not an opspec debug log: field 'format' is \"chrome-trace\", expected \"opspec-debug-log\""));
  EXPECT_THAT(error_of("{\"format\": \"opspec-debug-log\", \"version\": 2, \"entries\": []}"),
              HasSubstr("unsupported debug log version 2 (this build reads version 1)"));
  EXPECT_THAT(error_of("{\"format\": \"opspec-debug-log\", \"version\": \"1\", \"entries\": []}"),
              HasSubstr("field 'version' must be an integer, got string"));
  EXPECT_THAT(error_of("{\"format\": \"opspec-debug-log\", \"version\": 1}"), HasSubstr("missing field 'entries'"));
  EXPECT_THAT(error_of("{\"format\": \"opspec-debug-log\", \"version\": 1, \"entries\": {}}"),
              HasSubstr("field 'entries' must be an array, got object"));
  EXPECT_THAT(error_of("{\"format\": \"opspec-debug-log\", \"version\": 1, \"entries\": [3]}"),
              HasSubstr("entry 0: must be an object, got number"));
}

TEST(DebugLogIoTest, MissingOrWronglyTypedFieldsNameEntryAndField) {
  EXPECT_THAT(error_of(edited("\"kind\":\"module\",\"depth\":1,", "\"kind\":\"module\",\"depth\":\"1\",")),
              HasSubstr("entry 4: field 'depth' must be an integer, got string"));
  EXPECT_THAT(error_of(edited("\"kind\":\"module\",\"depth\":1,", "\"kind\":\"module\",")),
              HasSubstr("entry 4: missing field 'depth'"));
  EXPECT_THAT(error_of(edited("\"kind\":\"module\",\"depth\":1,", "\"kind\":\"module\",\"depth\":-1,")),
              HasSubstr("entry 4: field 'depth' is out of range: -1 (0 to 256)"));
  // A depth of 10^9 in a 500-byte log made `opspec diff` write 2 GB of indentation.
  EXPECT_THAT(error_of(edited("\"kind\":\"module\",\"depth\":1,", "\"kind\":\"module\",\"depth\":1000000000,")),
              HasSubstr("entry 4: field 'depth' is out of range: 1000000000 (0 to 256)"));
  EXPECT_TRUE(load_log_json(edited("\"kind\":\"module\",\"depth\":1,", "\"kind\":\"module\",\"depth\":256,")).ok());
  EXPECT_THAT(error_of(edited("\"has_outputs\":true", "\"has_outputs\":1")),
              HasSubstr("entry 0: field 'has_outputs' must be a boolean, got number"));
  EXPECT_THAT(error_of(edited("\"stack\":\"#0", "\"stack\":[\"#0\"],\"x\":\"")),
              HasSubstr("entry 0: field 'stack' must be a string, got array"));
  EXPECT_THAT(error_of(edited("\"log\":[[\"mem\",\"8.125 MB\"]", "\"log\":[[\"mem\"]")),
              HasSubstr("entry 2: log[0]: must be a [key, value] pair of strings"));
  EXPECT_THAT(error_of(edited("\"sizes\":[8,8],\"id\":0", "\"sizes\":[8,\"8\"],\"id\":0")),
              HasSubstr("entry 0: args[0].tensors[0]: field 'sizes[1]' must be an integer, got string"));
  EXPECT_THAT(error_of(edited("{\"f\":45.0}", "{\"f\":true}")),
              HasSubstr("entry 5: pre_kernel_hashes[0][0]: field 'f' must be a number, got boolean"));
  EXPECT_THAT(error_of(edited("{\"u\":\"12345\"}", "{\"u\":\"12x45\"}")),
              HasSubstr("entry 2: input_hash[2].hashes[1]: field 'u' must be an unsigned 64-bit decimal, got '12x45'"));
  EXPECT_THAT(error_of(edited("{\"u\":\"12345\"}", "{\"u\":\"18446744073709551616\"}")),
              HasSubstr("field 'u' must be an unsigned 64-bit decimal"));
  EXPECT_THAT(error_of(edited("{\"u\":\"12345\"}", "{\"v\":1}")),
              HasSubstr("a hash needs field 'f' (float) or 'u' (integer)"));
  EXPECT_THAT(error_of(edited("\"output_hash\":null", "\"output_hash\":{}")),
              HasSubstr("entry 0: field 'output_hash' must be null or an array, got object"));
  EXPECT_THAT(error_of(edited("\"value\":{\"type\":\"int\",\"value\":-7}", "\"value\":{\"type\":\"int\",\"value\":-7.5}")),
              HasSubstr("entry 2: args[7].value: field 'value' must be an integer, got number"));
  EXPECT_THAT(error_of(edited("\"value\":{\"type\":\"int\",\"value\":-7}",
                              "\"value\":{\"type\":\"int\",\"value\":9223372036854775808}")),
              HasSubstr("field 'value' is out of range: 9223372036854775808"));
  EXPECT_THAT(error_of(edited("{\"type\":\"float\",\"value\":\"nan\"}", "{\"type\":\"float\",\"value\":\"NaN\"}")),
              HasSubstr("entry 2: args[2].value: field 'value' has the unknown float spelling 'NaN'"));
}

TEST(DebugLogIoTest, UnknownEnumStringsAndDtypes) {
  EXPECT_THAT(error_of(edited("\"kind\":\"module\"", "\"kind\":\"modul\"")),
              HasSubstr("entry 4: field 'kind' has the unknown entry kind 'modul' (expected op, function, module or "
                        "kernel)"));
  EXPECT_THAT(error_of(edited("{\"kind\":\"tensor_list\"", "{\"kind\":\"tensors\"")),
              HasSubstr("entry 2: args[11]: field 'kind' has the unknown value kind 'tensors'"));
  EXPECT_THAT(error_of(edited("{\"kind\":\"list\"", "{\"kind\":\"tuple\"")),
              HasSubstr("entry 2: input_hash[1]: field 'kind' has the unknown hash node kind 'tuple'"));
  EXPECT_THAT(error_of(edited("{\"type\":\"bool\"", "{\"type\":\"boolean\"")),
              HasSubstr("field 'type' has the unknown value type 'boolean'"));
  EXPECT_THAT(error_of(edited("\"dtype\":\"bf16\"", "\"dtype\":\"bf17\"")),
              HasSubstr("entry 0: args[1].tensors[0]: unknown dtype 'bf17'"));
  EXPECT_THAT(error_of(edited("{\"type\":\"dtype\",\"value\":\"f64\"}", "{\"type\":\"dtype\",\"value\":\"float128\"}")),
              HasSubstr("entry 1: args[1].value: unknown dtype 'float128'"));
  EXPECT_THAT(error_of(edited("{\"type\":\"device\",\"value\":\"meta\"}", "{\"type\":\"device\",\"value\":\"tpu\"}")),
              HasSubstr("entry 2: args[9].value: unknown device 'tpu'"));
  EXPECT_THAT(error_of(edited("{\"kind\":\"tensor\",\"name\":\"\",\"tensors\":[{\"dtype\":\"i32\",\"sizes\":[2],\"id\":-1,"
                              "\"fake\":false}]",
                              "{\"kind\":\"tensor\",\"name\":\"\",\"tensors\":[]")),
              HasSubstr("entry 2: outputs[0]: a tensor value needs exactly one entry in 'tensors', got 0"));
}

TEST(DebugLogIoTest, DeeplyNestedHashTreesAreRefused) {
  std::string node = "{\"kind\":\"none\"}";
  for (int i = 0; i < 100; ++i) node = "{\"kind\":\"list\",\"items\":[" + node + "]}";
  EXPECT_THAT(error_of(edited("\"output_hash\":null", "\"output_hash\":[" + node + "]")),
              HasSubstr("hash tree nested deeper than 64 levels"));
}

TEST(DebugLogIoTest, FileErrorsNameThePath) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "opspec_debug_log_io_missing_dir";
  std::filesystem::remove_all(dir);
  const std::string missing = (dir / "log.json").string();
  absl::Status s = save_log_file(missing, full_log());
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot write debug log to '" + missing + "': "));
  absl::StatusOr<std::vector<DebugCall>> r = load_log_file(missing);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("cannot read debug log '" + missing + "': No such file or directory"));
  r = load_log_file(std::filesystem::temp_directory_path().string());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("it is a directory"));

  // A corrupt file: the parse error is prefixed with the path.
  const std::string bad =
      (std::filesystem::temp_directory_path() / str_cat("opspec_debug_log_io_bad_", getpid(), ".json")).string();
  {
    std::ofstream out(bad);
    out << "{\"format\": \"opspec-debug-log\", \"version\": 1, \"entries\": [";
  }
  r = load_log_file(bad);
  std::remove(bad.c_str());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad + ": debug log JSON is truncated"));
}

}  // namespace
}  // namespace opspec
