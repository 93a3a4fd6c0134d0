// `opspec report`: a report of saved logs (a PyTorch text log and an opspec
// JSON log), rebuilding an index, options anywhere, and the errors.
#include "harness/cli/internal/report_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace opspec {
namespace report_command_test {

using ::testing::HasSubstr;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int report(std::vector<std::string> args, std::string* err = nullptr) {
  std::ostringstream out, e;
  const int status = cli::internal::run_report(args, out, e);
  if (err != nullptr) *err = e.str();
  return status;
}

TEST(ReportCommand, LogsBecomePagesAndTheIndexRebuilds) {
  const std::string dir = ::testing::TempDir() + "/opspec_report_logs";
  std::filesystem::remove_all(dir);
  const std::string log = ::testing::TempDir() + "/torch_eager.txt";
  std::ofstream(log) << "    aten::relu(t$0: f32[3, 3])  ->  t$1: f32[3, 3]  # {'hash': 3.12}\n"
                        "    [triton] triton_poi_fused_0(in_ptr0=t: f32[3, 3], xnumel=9)\n"
                        "    # post-kernel hashes: {in_ptr0: 6.5}\n";
  ASSERT_EQ(report({"--out", dir, log}), 0);
  const std::string page = read(dir + "/cases/torch_eager.txt.html");
  EXPECT_THAT(page, HasSubstr("aten::relu(t$0: f32[3, 3])  -&gt;  t$1: f32[3, 3]  # {&#39;hash&#39;: 3.12}"));
  EXPECT_THAT(page, HasSubstr("# post-kernel hashes: {in_ptr0: 6.5}"));
  std::filesystem::remove(dir + "/index.html");
  ASSERT_EQ(report({dir}), 0);
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr("torch_eager.txt</a>"));
}

TEST(ReportCommand, Errors) {
  std::string err;
  EXPECT_EQ(report({}, &err), 2);
  EXPECT_EQ(report({::testing::TempDir() + "/no_report_here"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("cannot read debug log"));  // neither a report nor a log
  const std::string empty = ::testing::TempDir() + "/empty_report_dir";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(report({empty}, &err), 2);
  EXPECT_THAT(err, HasSubstr("holds no report (no cases/ directory)"));
  const std::string bad = ::testing::TempDir() + "/bad_log.txt";
  std::ofstream(bad) << "  aten::relu(t: f32[2]\n";
  EXPECT_EQ(report({"--out", ::testing::TempDir() + "/r", bad}, &err), 2);
  EXPECT_THAT(err, HasSubstr("bad_log.txt:1:"));
  EXPECT_EQ(report({bad}, &err), 2);  // a file, not a report directory: read as a log
  EXPECT_THAT(err, HasSubstr("bad_log.txt:1:"));
  EXPECT_EQ(report({"--out"}, &err), 2);
}

// --out was read only as the first argument: `report LOG --out DIR` took
// "--out" for a log. Options go anywhere; an unknown one or a second --out is
// a usage error, not a log that cannot be read.
TEST(ReportCommand, OptionsGoAnywhere) {
  const std::string dir = ::testing::TempDir() + "/opspec_report_out_last";
  std::filesystem::remove_all(dir);
  const std::string log = ::testing::TempDir() + "/out_last.txt";
  std::ofstream(log) << "    aten::relu(t$0: f32[2])  ->  t$1: f32[2]\n";
  std::string err;
  ASSERT_EQ(report({log, "--out", dir}, &err), 0) << err;
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr("out_last.txt</a>"));
  EXPECT_EQ(report({log, "--out", dir, "--out", dir}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--out given twice"));
  EXPECT_EQ(report({log, "--frobnicate"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown option --frobnicate"));
  EXPECT_EQ(report({log, "--out", ""}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--out needs a directory, got ''"));
  EXPECT_EQ(report({log, "--out"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--out needs a directory"));
  EXPECT_EQ(report({"--out", dir, dir}, &err), 2);  // a report directory is not a log
  EXPECT_THAT(err, HasSubstr("it is a directory"));
  // After --, a log may be named like an option.
  const std::string dash_dir = ::testing::TempDir() + "/opspec_report_dash";
  std::filesystem::remove_all(dash_dir);
  std::filesystem::create_directories(dash_dir);
  std::ofstream(dash_dir + "/-x.txt") << "    aten::relu(t$0: f32[2])  ->  t$1: f32[2]\n";
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dash_dir);
  const int status = report({"--out", "rep", "--", "-x.txt"}, &err);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(status, 0) << err;
  EXPECT_THAT(read(dash_dir + "/rep/index.html"), HasSubstr("-x.txt</a>"));
}

// Two logs of one file name (a/log.txt, b/log.txt) wrote one page, the
// second over the first, both rows linking to it; now each is named by its
// path. One log given twice is a usage error, not two rows of one page.
TEST(ReportCommand, LogsOfOneFileNameKeepAPageEach) {
  const std::filesystem::path root = ::testing::TempDir() + "/opspec_report_same_name";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "a");
  std::filesystem::create_directories(root / "b");
  std::ofstream(root / "a" / "log.txt") << "    aten::relu(t$0: f32[2])  ->  t$1: f32[2]\n";
  std::ofstream(root / "b" / "log.txt") << "    aten::neg(t$0: f32[2])  ->  t$1: f32[2]\n";
  const std::string a = (root / "a" / "log.txt").lexically_normal().string();
  const std::string b = (root / "b" / "log.txt").lexically_normal().string();
  std::string err;
  ASSERT_EQ(report({"--out", (root / "r").string(), a, b}, &err), 0) << err;
  const std::string index = read(root / "r" / "index.html");
  EXPECT_THAT(index, HasSubstr(a + "</a>"));
  EXPECT_THAT(index, HasSubstr(b + "</a>"));
  EXPECT_THAT(index, HasSubstr("2 passed"));
  size_t pages = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "r" / "cases")) pages += e.path().extension() == ".html";
  EXPECT_EQ(pages, 2u);
  EXPECT_EQ(report({"--out", (root / "r2").string(), a, a}, &err), 2);
  EXPECT_THAT(err, HasSubstr("is given twice"));
}

}  // namespace report_command_test
}  // namespace opspec
