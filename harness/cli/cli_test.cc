// cli_test.cc: the `opspec` command (run_cli): exit status and summary,
// --filter, --shard and gtest's sharding variables, --isolate with a crashing
// and a hanging fixture, --timeout, --accept, --junit and --json.
#include "harness/cli/cli.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace opspec::cli {

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string temp_dir() {
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("opspec_cli_test_" + std::to_string(::getpid()) + "_" +
                      testing::UnitTest::GetInstance()->current_test_info()->name()))
                        .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct CliRun {
  int status = 0;
  std::string out;
};

CliRun cli(std::vector<std::string> args) {
  args.insert(args.begin(), "opspec");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  CliRun r;
  r.status = run_cli(static_cast<int>(argv.size()), argv.data());
  r.out = testing::internal::GetCapturedStdout();
  return r;
}

constexpr const char* kSuite = R"(
suite: small
cases:
  - name: relu_ok
    inputs: {x: {shape: [3], values: [-1, 0, 2]}}
    program: |
      return relu(x)
    expect: {outputs: [0, 0, 2]}
  - name: add_ok
    inputs: {x: {shape: [2], init: ones}}
    program: |
      return add(x, 1)
    expect: {ops: [aten::add.Tensor], outputs: [2, 2]}
  - name: mul_wrong
    inputs: {x: {shape: [2], init: ones}}
    program: |
      return mul(x, 3)
    expect: {outputs: [2, 2]}
  - name: skipped
    skip_if: [always]
    inputs: {x: {shape: [2]}}
    program: |
      return x
  - name: xfailed
    xfail: "documents a known difference"
    inputs: {x: {shape: [2], init: zeros}}
    program: |
      return exp(x)
    expect: {outputs: [2, 2]}
)";

TEST(OpspecCli, RunSummaryAndExitStatus) {
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  CliRun r = cli({"run", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("FAIL: small::mul_wrong"));
  EXPECT_THAT(r.out, HasSubstr("2 passed, 1 failed, 1 skipped, 1 xfailed in"));
  CliRun only_ok = cli({"run", dir, "--filter", "_ok$"});
  EXPECT_EQ(only_ok.status, 0);
  EXPECT_THAT(only_ok.out, HasSubstr("2 passed, 0 failed, 0 skipped, 0 xfailed"));
}

TEST(OpspecCli, ShardsPartitionTheCases) {
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  std::string seen;
  int total = 0;
  for (int i = 1; i <= 3; ++i) {
    CliRun r = cli({"run", dir, "--shard", std::to_string(i) + "/3", "-v"});
    for (const char* name : {"relu_ok", "add_ok", "mul_wrong", "skipped", "xfailed"}) {
      if (r.out.find(std::string("small::") + name + " ") != std::string::npos ||
          r.out.find(std::string("small::") + name + " (") != std::string::npos)
        seen += name, seen += ",", ++total;
    }
  }
  EXPECT_EQ(total, 5) << seen;  // every case in exactly one shard
  // gtest's variables (0-based) select the same shards.
  ::setenv("GTEST_TOTAL_SHARDS", "3", 1);
  ::setenv("GTEST_SHARD_INDEX", "0", 1);
  CliRun env = cli({"run", dir, "-v"});
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
  CliRun flag = cli({"run", dir, "-v", "--shard", "1/3"});
  EXPECT_EQ(env.out.substr(0, env.out.rfind(" in ")), flag.out.substr(0, flag.out.rfind(" in ")));
}

TEST(OpspecCli, BadShardIsAUsageError) {
  EXPECT_EXIT(cli({"run", "--shard", "4/3"}), testing::ExitedWithCode(2), HasSubstr("1 <= I <= N"));
  EXPECT_EXIT(cli({"run", "--jobs", "zero"}), testing::ExitedWithCode(2), HasSubstr("--jobs"));
  EXPECT_EXIT(cli({"frobnicate"}), testing::ExitedWithCode(2), HasSubstr("unknown command 'frobnicate'"));
}

constexpr const char* kCrashSuite = R"(
suite: isolation
cases:
  - name: before
    inputs: {x: {shape: [2], init: ones}}
    program: |
      return neg(x)
    expect: {outputs: [-1, -1]}
  - name: crashes
    fixture: crash
  - name: hangs
    fixture: hang
  - name: after
    inputs: {x: {shape: [2], init: ones}}
    program: |
      return add(x, x)
    expect: {outputs: [2, 2]}
)";

TEST(OpspecCli, IsolateFailsOnlyTheCrashingAndHangingCases) {
  std::string dir = temp_dir();
  write(dir, "isolation.yaml", kCrashSuite);
  ::setenv("OPSPEC_ALLOW_CRASH_FIXTURES", "1", 1);
  std::string junit = dir + "/out.xml", json = dir + "/out.json";
  CliRun r = cli({"run", dir, "--isolate", "--timeout", "2", "--jobs", "2", "--junit", junit, "--json", json});
  ::unsetenv("OPSPEC_ALLOW_CRASH_FIXTURES");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("FAIL: isolation::crashes"));
  EXPECT_THAT(r.out, HasSubstr("crashed: signal 6"));
  EXPECT_THAT(r.out, HasSubstr("FAIL: isolation::hangs"));
  EXPECT_THAT(r.out, HasSubstr("timed out after 2.0 s"));
  EXPECT_THAT(r.out, HasSubstr("2 passed, 2 failed"));

  std::string xml = read(junit);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"isolation\" tests=\"4\" failures=\"2\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"isolation\" name=\"crashes\""));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"crashed: signal 6"));
  nlohmann::json j = nlohmann::json::parse(read(json));
  EXPECT_EQ(j["summary"]["passed"], 2);
  EXPECT_EQ(j["summary"]["failed"], 2);
  ASSERT_EQ(j["cases"].size(), 4u);
  EXPECT_EQ(j["cases"][0]["id"], "isolation::before");  // results keep case order
  EXPECT_EQ(j["cases"][2]["outcome"], "failed");
}

TEST(OpspecCli, AcceptRewritesTheGoldenAndKeepsABackup) {
  std::string dir = temp_dir();
  std::string file = write(dir, "golden.yaml", R"(suite: golden
cases:
  - name: relu_log
    inputs: {x: {shape: [2, 2], init: ones}}
    program: |
      return relu(x)
    expect:
      debug_string: |
        not the real log
)");
  CliRun before = cli({"run", file});
  EXPECT_EQ(before.status, 1);
  EXPECT_THAT(before.out, HasSubstr("expect.debug_string"));
  CliRun accept = cli({"run", file, "--accept"});
  EXPECT_EQ(accept.status, 0) << accept.out;
  EXPECT_THAT(accept.out, HasSubstr("Accepted 1 new debug_string golden in"));
  EXPECT_THAT(read(file), HasSubstr("aten::relu(t: f32[2, 2])  ->  t: f32[2, 2]"));
  EXPECT_THAT(read(file + ".orig"), HasSubstr("not the real log"));
  CliRun after = cli({"run", file});
  EXPECT_EQ(after.status, 0) << after.out;
}

TEST(OpspecCli, LoadErrorsFailTheRunAndNameTheFile) {
  std::string dir = temp_dir();
  write(dir, "bad.yaml", "cases:\n  - name: x\n    programm: |\n      return x\n");
  write(dir, "good.yaml", kSuite);
  CliRun r = cli({"run", dir, "--filter", "relu_ok|x"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("bad.yaml:3:5"));
  EXPECT_THAT(r.out, HasSubstr("programm"));
  EXPECT_THAT(r.out, HasSubstr("1 passed, 1 failed"));
}

TEST(OpspecCli, ListAndShow) {
  std::string dir = temp_dir();
  std::string file = write(dir, "small.yaml", kSuite);
  CliRun list = cli({"list", dir});
  EXPECT_EQ(list.status, 0);
  EXPECT_THAT(list.out, HasSubstr("small::relu_ok"));
  EXPECT_THAT(list.out, HasSubstr("small::xfailed"));
  CliRun fixtures = cli({"list", "--fixtures"});
  EXPECT_THAT(fixtures.out, HasSubstr("toy(x: f32[4, 4])"));
  CliRun show = cli({"show", file + "::add_ok"});
  EXPECT_EQ(show.status, 0);
  EXPECT_THAT(show.out, HasSubstr("== eager debug string =="));
  EXPECT_THAT(show.out, HasSubstr("aten::add.Tensor(t: f32[2], 1)"));
}

}  // namespace
}  // namespace opspec::cli
