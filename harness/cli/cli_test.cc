// cli_test.cc: the `opspec` command (run_cli): exit status and summary,
// --filter, --shard and gtest's sharding variables, --isolate with a crashing
// and a hanging fixture, --timeout, --accept, --junit and --json; options a
// command does not use, or that contradict each other, refused.
#include "harness/cli/cli.h"

#include <signal.h>
#include <dirent.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "harness/regex.h"
#include "runtime/core/error.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace opspec::cli {

namespace cli_test {

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
  std::string err;  // with capture_err only: a death test reads the stderr of what it runs
};

CliRun cli(std::vector<std::string> args, bool capture_err = false) {
  args.insert(args.begin(), "opspec");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  if (capture_err) testing::internal::CaptureStderr();
  CliRun r;
  r.status = run_cli(static_cast<int>(argv.size()), argv.data());
  r.out = testing::internal::GetCapturedStdout();
  if (capture_err) r.err = testing::internal::GetCapturedStderr();
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
  const auto without_times = [](const std::string& out) {  // "(0.009 s)" differs from run to run
    return Regex::compile("\\([0-9.]+ s\\)| in [0-9.]+ s")->replace_all(out, "");
  };
  EXPECT_EQ(without_times(env.out), without_times(flag.out));
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
  EXPECT_THAT(r.out, HasSubstr("timed out after 2 s"));
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

// A golden --accept cannot write (a flow-style expect) fails its case: it
// once printed "2 passed, 0 failed", wrote nothing and exited 1 (issue 22.9).
TEST(OpspecCli, AcceptThatCannotWriteTheGoldenFailsTheCase) {
  std::string dir = temp_dir();
  const std::string text = "suite: flow\ncases:\n  - name: relu_log\n    inputs: {x: {shape: [2], init: ones}}\n"
                           "    program: return relu(x)\n    expect: {debug_string: \"not the real log\"}\n";
  std::string file = write(dir, "flow.yaml", text);
  const std::string json = dir + "/out.json";
  CliRun r = cli({"run", file, "--accept", "--json", json});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("FAIL: flow::relu_log"));
  EXPECT_THAT(r.out, HasSubstr("--accept could not write the new golden"));
  EXPECT_THAT(r.out, HasSubstr("0 passed, 1 failed"));
  EXPECT_EQ(nlohmann::json::parse(read(json))["summary"]["failed"], 1);
  EXPECT_EQ(read(file), text);  // untouched
}

TEST(OpspecCli, AcceptRefusesACaseAloneAndWritesTheOthers) {
  // A flow-style case cannot take a block scalar; the block-style case and
  // the case on two devices (one golden, the same text on both) still do.
  std::string dir = temp_dir();
  const std::string text =
      "suite: mixed\ncases:\n"
      "  - name: flow_case\n    inputs: {x: {shape: [2], init: ones}}\n"
      "    program: return relu(x)\n    expect: {debug_string: \"not the real log\"}\n"
      "  - name: block_case\n    inputs:\n      x: {shape: [2], init: ones}\n    program: return neg(x)\n"
      "    expect:\n      debug_string: |\n        stale\n"
      "  - name: two_devices\n    devices: [cpu, meta]\n    inputs:\n      x: {shape: [3], init: zeros}\n"
      "    program: return sum(x)\n    expect:\n      debug_string:\n";
  std::string file = write(dir, "mixed.yaml", text);
  CliRun r = cli({"run", file, "--accept"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("FAIL: mixed::flow_case"));
  EXPECT_THAT(r.out, HasSubstr("Accepted 2 new debug_string goldens in " + file));
  const std::string written = read(file);
  EXPECT_THAT(written, HasSubstr("expect: {debug_string: \"not the real log\"}"));  // refused alone
  EXPECT_THAT(written, HasSubstr("aten::neg(t: f32[2])"));
  EXPECT_THAT(written, HasSubstr("aten::sum(t: f32[3])"));
  // Read back, the two accepted cases pass; the flow case still fails.
  CliRun again = cli({"run", file});
  EXPECT_THAT(again.out, HasSubstr("3 passed, 1 failed"));
}

TEST(OpspecCli, AcceptRefusesAGoldenOneDeviceMatchesAndAnotherDoesNot) {
  // Accepted on cpu alone, then run on cpu and meta: cpu matches the golden,
  // meta's zeros_like logs device=meta. Rewriting it to meta's text would fail cpu.
  std::string dir = temp_dir();
  const auto text = [](std::string_view devices) {
    return str_cat("suite: devs\ncases:\n  - name: made\n    devices: ", devices,
                   "\n    inputs: {x: {shape: [2]}}\n    program: return zeros_like(x)\n    expect:\n"
                   "      debug_string:\n");
  };
  std::string file = write(dir, "devs.yaml", text("[cpu]"));
  ASSERT_EQ(cli({"run", file, "--accept"}).status, 0);
  std::string accepted = read(file);
  ASSERT_THAT(accepted, HasSubstr("device=cpu"));
  accepted.replace(accepted.find("[cpu]"), 5, "[cpu, meta]");
  write(dir, "devs.yaml", accepted);
  CliRun r = cli({"run", file, "--accept"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("case 'made' has one debug_string for all its devices: devs::made@cpu matches it and "
                               "devs::made@meta does not; give each device its own case"));
  EXPECT_EQ(read(file), accepted);  // unchanged
  // A device left out (by --filter here; skipped where unavailable, another
  // shard) was not seen: its text could be anything.
  CliRun filtered = cli({"run", file, "--accept", "--filter", "@meta"});
  EXPECT_EQ(filtered.status, 1);
  EXPECT_THAT(filtered.out, HasSubstr("case 'made' has one debug_string for its devices (cpu, meta), and not all of "
                                      "them ran here"));
  EXPECT_EQ(read(file), accepted);
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

// drop_root: as root (whom chmod does not stop), become nobody, so a mode-000
// directory is unreadable; false when that fails. Run in a forked child only.
bool drop_root() {
  if (::geteuid() != 0) return true;
  return ::setgroups(0, nullptr) == 0 && ::setresgid(65534, 65534, 65534) == 0 && ::setresuid(65534, 65534, 65534) == 0;
}

// A directory the run cannot list was skipped silently (exit 0); it now fails
// the run as a file that cannot be read does, named (Note [Unreadable directories]).
TEST(OpspecCli, AnUnreadableDirectoryFailsTheRunAndIsNamed) {
  const std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  const std::string locked = dir + "/locked";
  std::filesystem::create_directories(locked);
  write(locked, "hidden_from_the_run.yaml", kSuite);
  std::filesystem::permissions(locked, std::filesystem::perms::none);
  const pid_t probe = ::fork();
  if (probe == 0) _exit(drop_root() && ::opendir(locked.c_str()) == nullptr && errno == EACCES ? 0 : 1);
  int probed = 0;
  ::waitpid(probe, &probed, 0);
  if (!WIFEXITED(probed) || WEXITSTATUS(probed) != 0) {
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
    GTEST_SKIP() << "cannot make a directory unreadable here";
  }
  for (const char* command : {"run", "list"}) {
    EXPECT_EXIT(
        {
          if (!drop_root()) std::exit(99);
          CliRun r = cli({command, dir, "--filter", "relu_ok"});  // its stderr is the death test's
          std::cerr << r.out;
          std::exit(r.status);
        },
        testing::ExitedWithCode(1),
        HasSubstr(locked + ": error: cannot read the directory: Permission denied"))
        << command;
  }
  EXPECT_EXIT(
      {
        if (!drop_root()) std::exit(99);
        std::cerr << cli({"run", dir, "--in-process"}).out;
        std::exit(0);
      },
      testing::ExitedWithCode(0), HasSubstr("FAIL: " + locked + "::<load> (" + locked + ")"));  // named, not "::<load> ()"
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
}

TEST(OpspecCli, ListAndShow) {
  std::string dir = temp_dir();
  std::string file = write(dir, "small.yaml", kSuite);
  CliRun list = cli({"list", dir});
  EXPECT_EQ(list.status, 0);
  EXPECT_THAT(list.out, HasSubstr("small::relu_ok"));
  EXPECT_THAT(list.out, HasSubstr("small::xfailed"));
  write(dir, "described.yaml", "suite: described\ncases:\n  - name: c\n    description: says what it checks\n"
                               "    inputs: {x: {shape: [1]}}\n    program: return x\n");
  EXPECT_THAT(cli({"list", dir}).out, HasSubstr("described::c  (" + dir + "/described.yaml:3)  says what it checks"));
  CliRun fixtures = cli({"list", "--fixtures"});
  EXPECT_THAT(fixtures.out, HasSubstr("toy(x: f32[4, 4])"));
  CliRun show = cli({"show", file + "::add_ok"});
  EXPECT_EQ(show.status, 0);
  EXPECT_THAT(show.out, HasSubstr("== eager debug string =="));
  EXPECT_THAT(show.out, HasSubstr("aten::add.Tensor(t: f32[2], 1)"));
}

// SUITE::CASE is looked for under the PATHs given (default specs), and a
// folder named like the suite in the current directory does not shadow it;
// graphs are numbered from 1, as failures number them (issue 22.10).
TEST(OpspecCli, ShowFindsASuiteByNameUnderThePathsGiven) {
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  write(dir, "graphs.yaml", "suite: graphs\ncases:\n  - name: one_break\n    inputs: {x: {shape: [2]}}\n"
                            "    program: |\n      a = relu(x)\n      graph_break()\n      return neg(a)\n"
                            "    compile: {}\n");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::create_directories(dir + "/cwd/small");  // a folder named like the suite
  std::filesystem::current_path(dir + "/cwd");
  CliRun show = cli({"show", "small::add_ok", dir});
  CliRun graphs = cli({"show", "graphs::one_break", dir});
  CliRun missing = cli({"show", "small::nope", dir});
  std::filesystem::current_path(cwd);
  EXPECT_EQ(show.status, 0) << show.out;
  EXPECT_THAT(show.out, HasSubstr("small::add_ok"));
  EXPECT_THAT(graphs.out, HasSubstr("== graph 1 =="));
  EXPECT_THAT(graphs.out, HasSubstr("== graph 2 =="));
  EXPECT_THAT(graphs.out, Not(HasSubstr("== graph 0 ==")));
  EXPECT_EQ(missing.status, 2);
}

// show FILE::CASE@DEVICE for a case that exists but not on DEVICE said
// "no case 'twice'": it now names the devices the case runs on.
TEST(OpspecCli, ShowNamesTheDevicesOfACaseNotOnTheOneAsked) {
  std::string dir = temp_dir();
  std::string file = write(dir, "dev.yaml", "suite: dev\ncases:\n  - name: twice\n    inputs: {x: {shape: [2]}}\n"
                                            "    program: return add(x, x)\n");
  CliRun r = cli({"show", file + "::twice@cuda"}, /*capture_err=*/true);
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("show: case 'twice' in " + file + " does not run on 'cuda'; it runs on: cpu"));
  CliRun missing = cli({"show", file + "::thrice"}, /*capture_err=*/true);
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("show: no case 'thrice' in " + file));
  EXPECT_EQ(cli({"show", file + "::twice@cpu"}).status, 0);
}

// Options the command does not use, or that contradict each other, were
// ignored silently: `run --timeout 1 --in-process` let a 4.7 s case pass.
TEST(OpspecCli, ContradictoryAndUnusedOptionsAreUsageErrors) {
  const auto refused = [](std::vector<std::string> args, const std::string& message) {
    EXPECT_EXIT(cli(args), testing::ExitedWithCode(2), HasSubstr(message)) << testing::PrintToString(args);
  };
  refused({"run", "--timeout", "1", "--in-process"}, "--timeout and --in-process conflict");
  refused({"run", "--in-process", "--isolate"}, "--isolate and --in-process conflict");
  refused({"run", "-j2", "--in-process"}, "--jobs 2 and --in-process conflict");
  refused({"list", "--jobs", "4"}, "--jobs is not an option of `opspec list`");
  refused({"list", "--accept"}, "--accept is not an option of `opspec list`");
  refused({"list", "--timeout", "3"}, "--timeout is not an option of `opspec list`");
  refused({"list", "-q"}, "-q is not an option of `opspec list`");
  refused({"show", "a.yaml::c", "--junit", "x.xml"}, "--junit is not an option of `opspec show`");
  refused({"run", "--fixtures"}, "--fixtures is not an option of `opspec run`");
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  EXPECT_EQ(cli({"run", dir, "--in-process", "-j1", "--filter", "_ok$"}).status, 0);  // one job is no conflict
  EXPECT_EQ(cli({"list", dir, "--filter", "_ok$", "--shard", "1/2"}).status, 0);
}

// A --filter that matches no case exits 5 (pytest's "no tests collected"),
// naming the pattern; a shard left empty by more shards than cases is no error.
TEST(OpspecCli, AFilterThatMatchesNothingExits5) {
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  CliRun none = cli({"run", dir, "--filter", "no_such_case"});
  EXPECT_EQ(none.status, 5);
  EXPECT_THAT(none.out, HasSubstr("no case matches --filter 'no_such_case'"));
  CliRun empty_shard = cli({"run", dir, "--filter", "relu_ok", "--shard", "2/2"});
  EXPECT_EQ(empty_shard.status, 0) << empty_shard.out;
  EXPECT_THAT(empty_shard.out, HasSubstr("no cases selected"));
  // A directory with no cases at all (a wrong PATH in CI) ran nothing and passed.
  const std::string empty_dir = dir + "/nothing_here";
  std::filesystem::create_directories(empty_dir);
  write(empty_dir, "empty.yaml", "cases: []\n");
  CliRun nothing = cli({"run", empty_dir});
  EXPECT_EQ(nothing.status, 5);
  EXPECT_THAT(nothing.out, HasSubstr("no spec cases found in " + empty_dir));
  CliRun listed = cli({"list", dir, "--filter", "no_such_case"}, /*capture_err=*/true);
  EXPECT_EQ(listed.status, 5);
  EXPECT_THAT(listed.err, HasSubstr("no case matches --filter 'no_such_case'"));
  EXPECT_EQ(cli({"list", dir, "--filter", "relu_ok", "--shard", "2/2"}).status, 0);
  // list exits as run does: it exited 0 for nothing found, and 2 for a file that did not load.
  CliRun list_nothing = cli({"list", empty_dir}, /*capture_err=*/true);
  EXPECT_EQ(list_nothing.status, 5);
  EXPECT_THAT(list_nothing.err, HasSubstr("no spec cases found in " + empty_dir));
  write(dir, "bad.yaml", "cases:\n  - name: x\n    inputs: {x: {shape: [2]}\n");  // unclosed: the file does not load
  CliRun with_bad_file = cli({"run", dir, "--filter", "no_such_case"});
  EXPECT_EQ(with_bad_file.status, 1);  // the file that did not load fails the run, whatever the filter
  EXPECT_EQ(cli({"list", dir, "--filter", "no_such_case"}, /*capture_err=*/true).status, 1);
  EXPECT_EQ(cli({"list", dir}, /*capture_err=*/true).status, 1);
}

// --json and --junit naming one file, or a spec file the run reads, wrote
// over it silently (a spec lost to a typo): both are usage errors.
TEST(OpspecCli, OutputsThatWouldOverwriteAnInputOrEachOtherAreUsageErrors) {
  const std::string dir = temp_dir();
  const std::string spec = write(dir, "small.yaml", kSuite);
  const std::string out = dir + "/out";
  EXPECT_EXIT(cli({"run", dir, "--json", out, "--junit", dir + "/./out"}), testing::ExitedWithCode(2),
              HasSubstr("--junit and --json name one file, '" + out + "': each needs its own"));
  EXPECT_EXIT(cli({"run", dir, "--json", spec}), testing::ExitedWithCode(2),
              HasSubstr("--json names '" + spec + "', a spec file this run reads"));
  EXPECT_EXIT(cli({"run", spec, "--junit", spec}), testing::ExitedWithCode(2),
              HasSubstr("--junit names '" + spec + "', a spec file this run reads"));
  EXPECT_EQ(read(spec), kSuite);
  EXPECT_EQ(cli({"run", dir, "--filter", "_ok$", "--json", out + ".json", "--junit", out + ".xml"}).status, 0);
}

// An empty file name was taken as "no file": --json "" wrote nothing, silently.
TEST(OpspecCli, EmptyFileNamesAreUsageErrors) {
  for (const char* flag : {"--json", "--junit", "--load"}) {
    EXPECT_EXIT(cli({"run", flag, ""}), testing::ExitedWithCode(2),
                HasSubstr(std::string(flag) + " needs a file name, got ''"));
  }
  EXPECT_EXIT(cli({"run", "--report", ""}), testing::ExitedWithCode(2), HasSubstr("--report needs a directory, got ''"));
}

// An output that cannot be written is a usage error before the run: it
// failed a passing run at the end with exit 1 ("cannot write adir", no why).
TEST(OpspecCli, UnwritableOutputsAreRefusedBeforeTheRun) {
  const std::string dir = temp_dir();
  for (const char* flag : {"--json", "--junit"}) {
    EXPECT_EXIT(cli({"run", dir, flag, dir}), testing::ExitedWithCode(2),
                HasSubstr(std::string(flag) + ": cannot write " + dir + ": it is a directory"));
    EXPECT_EXIT(cli({"run", dir, flag, dir + "/no/such/dir/x"}), testing::ExitedWithCode(2),
                HasSubstr("No such file or directory"));
  }
  write(dir, "file", "x");
  EXPECT_EXIT(cli({"run", dir, "--report", dir + "/file"}), testing::ExitedWithCode(2),
              HasSubstr("--report: cannot create '" + dir + "/file'"));
}

// JUnit attributes keep a suite's newline as a character reference (raw, a
// parser reads it back as a space).
TEST(OpspecCli, JunitAttributesKeepNewlines) {
  const std::string dir = temp_dir();
  write(dir, "nl.yaml", "suite: \"a\\nb\"\ncases:\n  - {name: c, program: return 1}\n");
  const std::string junit = dir + "/out.xml";
  CliRun r = cli({"run", dir, "--junit", junit});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(read(junit), HasSubstr("<testsuite name=\"a&#10;b\""));
}

// `opspec bench --load` (refused as an unknown option before): the test
// plugin's op, fixture and (wrong) backend, benched by the `opspec` executable
// built beside this test, which exports opspec's symbols to the plugin.
TEST(OpspecCli, BenchLoadsAPlugin) {
  const std::filesystem::path build = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  const std::string opspec = (build / "opspec").string(), plugin = (build / "libopspec_test_plugin.so").string();
  if (!std::filesystem::exists(opspec) || !std::filesystem::exists(plugin)) {
    GTEST_SKIP() << "needs the targets opspec and opspec_test_plugin built in " << build;
  }
  std::string dir = temp_dir();
  std::string file = write(dir, "plugin_bench.yaml", R"(suite: plugin_bench
cases:
  - name: its_op
    inputs: {x: {shape: [64]}}
    program: return plugintest::twice(relu(x))
    bench: {backends: [eager, plugintest_off_by_one]}
  - name: its_fixture
    fixture: plugin_relu_twice
    bench: {backends: [eager]}
)");
  const auto run = [&](const std::string& args, int* status) {
    const std::string out = dir + "/out.txt";
    const int rc = std::system(("'" + opspec + "' bench --load '" + plugin + "' " + args + " >'" + out + "' 2>&1").c_str());
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return read(out);
  };
  int status = 0;
  const std::string out = run("'" + file + "' --min-time 0.01 --repetitions 1", &status);
  EXPECT_EQ(status, 1) << out;  // the off-by-one backend is refused
  EXPECT_THAT(out, HasSubstr("plugin_bench::its_op"));
  EXPECT_THAT(out, HasSubstr("plugin_bench::its_op/compile:plugintest_off_by_one was not timed"));
  EXPECT_THAT(out, HasSubstr("plugin_bench::its_fixture"));
  const std::string fixture = run("--fixture plugin_relu_twice --backends eager --min-time 0.01 --repetitions 1", &status);
  EXPECT_EQ(status, 0) << fixture;
  EXPECT_THAT(fixture, HasSubstr("fixtures::plugin_relu_twice"));
}

// xml_problems: xmllint's verdict on a file ("" when well-formed).
std::string xml_problems(const std::string& path) {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) return "xmllint is missing (apt-get install libxml2-utils)";
  const std::string log = path + ".xmllint";
  const int rc = std::system(("xmllint --noout '" + path + "' >'" + log + "' 2>&1").c_str());
  return rc == 0 ? "" : read(log);
}

// ---- the runner survives (issue 21.5, 21.8, 21.11, 21.12) ----

// A crash in a case fails that case and the run goes on, without --isolate:
// cases run in a worker process by default, and a dead worker is replaced.
TEST(OpspecCli, ACrashingCaseFailsAloneInTheDefaultRun) {
  std::string dir = temp_dir();
  write(dir, "crash.yaml", R"(
suite: crashing
cases:
  - name: before
    inputs: {x: {shape: [2], init: ones}}
    program: return neg(x)
    expect: {outputs: [-1, -1]}
  - name: crashes
    fixture: crash
  - name: after
    inputs: {x: {shape: [2], init: ones}}
    program: return add(x, x)
    expect: {outputs: [2, 2]}
)");
  ::setenv("OPSPEC_ALLOW_CRASH_FIXTURES", "1", 1);
  const std::string junit = dir + "/out.xml";
  CliRun r = cli({"run", dir, "--junit", junit});
  ::unsetenv("OPSPEC_ALLOW_CRASH_FIXTURES");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("FAIL: crashing::crashes"));
  EXPECT_THAT(r.out, HasSubstr("crashed: signal 6"));
  EXPECT_THAT(r.out, HasSubstr("2 passed, 1 failed"));
  EXPECT_THAT(read(junit), HasSubstr("<testsuite name=\"crashing\" tests=\"3\" failures=\"1\""));
}

// SIGTERM stops the workers, writes the reports with the interrupted cases
// marked, and exits 143 (128 + 15), as a shell reports a terminated process.
TEST(OpspecCli, SigtermStopsTheWorkersAndWritesThePartialReport) {
  std::string dir = temp_dir();
  write(dir, "hang.yaml", R"(
suite: stopping
cases:
  - name: before
    inputs: {x: {shape: [2], init: ones}}
    program: return neg(x)
  - name: hangs
    fixture: hang
  - name: never
    inputs: {x: {shape: [2], init: ones}}
    program: return neg(x)
)");
  const std::string junit = dir + "/out.xml", out = dir + "/stdout.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the opspec command, in a process of its own so SIGTERM reaches it alone
    ::setenv("OPSPEC_ALLOW_CRASH_FIXTURES", "1", 1);
    std::freopen(out.c_str(), "w", stdout);
    std::vector<std::string> args = {"opspec", "run", dir, "-v", "--junit", junit};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    const int status = run_cli(static_cast<int>(argv.size()), argv.data());
    std::fflush(stdout);
    ::_exit(status);
  }
  // Wait (at most 60 s) until the first case passed: the worker is then in the hang.
  for (int i = 0; i < 600 && read(out).find("PASS: stopping::before") == std::string::npos; ++i) ::usleep(100000);
  ::usleep(200000);
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  const std::string printed = read(out);
  EXPECT_THAT(printed, HasSubstr("FAIL: stopping::hangs"));
  EXPECT_THAT(printed, HasSubstr("interrupted by SIGTERM while running"));
  EXPECT_THAT(printed, HasSubstr("interrupted by SIGTERM\n"));
  const std::string xml = read(junit);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"stopping\" tests=\"3\" failures=\"1\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("not run: the run was interrupted by SIGTERM"));
}

TEST(OpspecCli, NumbersOfOptionsAreValidated) {
  // nan compares false with everything, so a nan timeout never fired.
  EXPECT_EXIT(cli({"run", "--timeout", "nan"}), testing::ExitedWithCode(2), HasSubstr("--timeout"));
  EXPECT_EXIT(cli({"run", "--timeout", "inf"}), testing::ExitedWithCode(2), HasSubstr("--timeout"));
  EXPECT_EXIT(cli({"run", "--timeout", "-1"}), testing::ExitedWithCode(2), HasSubstr("--timeout"));
  EXPECT_EXIT(cli({"run", "-jx"}), testing::ExitedWithCode(2), HasSubstr("--jobs"));
  std::string dir = temp_dir();
  write(dir, "small.yaml", kSuite);
  CliRun r = cli({"run", dir, "-j2", "--filter", "_ok$"});  // -j2 as make and ctest spell it
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 passed, 0 failed"));
}

// Two files with one `suite:` would give two results one id: the later file
// fails to load, naming both `suite:` lines; its header has no ":0".
TEST(OpspecCli, DuplicateSuiteNamesFailTheLaterFile) {
  std::string dir = temp_dir();
  write(dir, "a.yaml", "suite: same\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n    program: return x\n");
  write(dir, "b.yaml", "# b\nsuite: same\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n    program: return x\n");
  const std::string json = dir + "/out.json";
  CliRun r = cli({"run", dir, "--json", json});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("b.yaml:2: error: suite name 'same' is also the name of " + dir + "/a.yaml:1"));
  EXPECT_THAT(r.out, HasSubstr("FAIL: " + dir + "/b.yaml::<load> (" + dir + "/b.yaml:2)"));
  EXPECT_THAT(r.out, Not(HasSubstr(":0)")));
  nlohmann::json j = nlohmann::json::parse(read(json));
  std::set<std::string> ids;
  for (const auto& c : j["cases"]) EXPECT_TRUE(ids.insert(c["id"].get<std::string>()).second) << c["id"];
  EXPECT_EQ(j["summary"]["passed"], 1);
}

// Invalid UTF-8 and XML's forbidden characters in messages: the JUnit is the
// same in a worker and in-process, and well-formed either way.
TEST(OpspecCli, JunitIsValidUtf8AndTheSameInEveryMode) {
  std::string dir = temp_dir();
  // YAML passes a string's bytes through as they are; the error that echoes them comes back from the worker.
  write(dir, "bytes.yaml", "suite: bytes\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n"
                           "    program: return zeros([1], device=\"\xff\xfe\xef\xbf\xbf\")\n");
  const std::string in_worker = dir + "/w.xml", in_process = dir + "/p.xml";
  cli({"run", dir, "--junit", in_worker});
  cli({"run", dir, "--junit", in_process, "--in-process"});
  std::string a = read(in_worker), b = read(in_process);
  const auto without_times = [](std::string s) {
    for (size_t p = s.find("time=\""); p != std::string::npos; p = s.find("time=\"", p + 1)) {
      s.erase(p + 6, s.find('"', p + 6) - (p + 6));
    }
    return s;
  };
  EXPECT_EQ(without_times(a), without_times(b));
  EXPECT_EQ(xml_problems(in_worker), "");
  EXPECT_THAT(a, HasSubstr("<testsuite name=\"bytes\" tests=\"1\" failures=\"1\""));
  EXPECT_THAT(a, Not(HasSubstr("\xff")));
  EXPECT_THAT(a, Not(HasSubstr("\xef\xbf\xbf")));  // U+FFFF
  EXPECT_THAT(a, HasSubstr("\xef\xbf\xbd"));        // U+FFFD in their place
}

// ---- the hostile corpus: every input ends by itself with a located message ----

// check_located: no case crashed or timed out, and every failure names a file:line.
void check_located(const nlohmann::json& report) {
  for (const auto& c : report["cases"]) {
    if (c["outcome"] != "failed") continue;
    const std::string m = c["message"];
    EXPECT_THAT(m, Not(HasSubstr("crashed:"))) << c["id"];
    EXPECT_THAT(m, Not(HasSubstr("timed out"))) << c["id"];
    const std::string file = c["file"];
    EXPECT_TRUE(m.find(file + ":") != std::string::npos || c["line"].get<int>() > 0) << c["id"] << ": " << m.substr(0, 300);
  }
}

// The shipped corpus (specs/hostile) passes: each case expects its located error.
TEST(OpspecCli, ShippedHostileCorpusPassesInTime) {
  const std::string dir = temp_dir(), junit = dir + "/out.xml", json = dir + "/out.json";
  CliRun r = cli({"run", OPSPEC_SOURCE_DIR "/specs/hostile", "--timeout", "60", "-j2", "--junit", junit, "--json", json});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(xml_problems(junit), "");
  check_located(nlohmann::json::parse(read(json)));
}

// Files that cannot load, patterns RE2 refuses, bytes that are not UTF-8:
// each is a located failure, the run ends by itself, and the JUnit parses.
TEST(OpspecCli, UnloadableHostileInputsFailWithLocatedMessages) {
  const std::string dir = temp_dir();
  write(dir, "deep_flow.yaml", "cases: " + std::string(100000, '['));
  write(dir, "deep_anchor.yaml", "cases: &a " + std::string(100000, '{'));
  write(dir, "dup_a.yaml", "suite: dup\ncases: []\n");
  write(dir, "dup_b.yaml", "suite: dup\ncases: []\n");
  write(dir, "nul.yaml", std::string("cases:\n  - name: a\0b\n", 22));
  write(dir, "bad_utf8.yaml", "suite: bad_utf8\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n"
                              "    program: return \xff\xfe\xef\xbf\xbf(x)\n");
  write(dir, "error_regex_bomb.yaml", "suite: error_regex_bomb\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n"
                                      "    program: return x\n    expect: {error: \"" + std::string(20000, '(') + "a" +
                                      std::string(20000, ')') + "\"}\n");
  write(dir, "check_regex_bomb.yaml", "suite: check_regex_bomb\ncases:\n  - name: c\n    inputs: {x: {shape: [1]}}\n"
                                      "    program: return relu(x)\n    expect: {check: \"CHECK: {{" +
                                      std::string(30000, '(') + "z" + std::string(30000, ')') + "}}\"}\n");
  write(dir, "huge_shape.yaml", "suite: huge_shape\ncases:\n  - name: c\n    inputs: {x: {shape: [0, 268435456, "
                                "268435456, 268435456]}}\n    program: return clone(sum(x, 0))\n");
  const std::string junit = dir + "/out.xml", json = dir + "/out.json";
  CliRun r = cli({"run", dir, "--timeout", "60", "-j2", "--junit", junit, "--json", json});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(xml_problems(junit), "");
  const nlohmann::json report = nlohmann::json::parse(read(json));
  check_located(report);
  EXPECT_EQ(report["summary"]["passed"], 0);
  EXPECT_THAT(r.out, HasSubstr("deep_flow.yaml:1:"));
  EXPECT_THAT(r.out, HasSubstr("nesting deeper than 64 levels"));
  EXPECT_THAT(r.out, HasSubstr("dup_b.yaml:1: error: suite name 'dup'"));
  EXPECT_THAT(r.out, HasSubstr("FAIL: error_regex_bomb::c"));  // RE2 takes the pattern; the case raised no error
  EXPECT_THAT(r.out, HasSubstr("FAIL: check_regex_bomb::c"));
  EXPECT_THAT(r.out, HasSubstr("expected string not found"));
  EXPECT_THAT(r.out, HasSubstr("huge_shape.yaml:4:"));
  // --filter runs RE2 over every id: a 60k-character id and a deep pattern are no danger.
  write(dir, "long_id.yaml", "suite: long_id\ncases:\n  - name: " + std::string(60000, 'n') +
                                 "\n    inputs: {x: {shape: [1]}}\n    program: return x\n");
  CliRun f = cli({"run", dir + "/long_id.yaml", "--filter", "(.*)*n$"});
  EXPECT_EQ(f.status, 0) << f.out.substr(0, 2000);
  EXPECT_THAT(f.out, HasSubstr("1 passed"));
  CliRun deep = cli({"run", dir + "/long_id.yaml", "--filter", std::string(20000, '(') + "n" + std::string(20000, ')')});
  EXPECT_EQ(deep.status, 0) << deep.out.substr(0, 2000);
  EXPECT_EXIT(cli({"run", dir + "/long_id.yaml", "--filter", std::string(20000, '(')}), testing::ExitedWithCode(2),
              HasSubstr("--filter: invalid regex"));
}

}  // namespace
}  // namespace opspec::cli
