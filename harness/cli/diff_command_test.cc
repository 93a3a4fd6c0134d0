// `opspec diff`: a PyTorch DebugMode text log against opspec's JSON log of
// the same program (agreeing, then within and beyond a tolerance), a missing
// op, unreadable logs and option values out of range.
#include "harness/cli/internal/diff_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/debug_log_io.h"
#include "harness/debug_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace diff_command_test {

using ::testing::HasSubstr;

struct Result {
  int status;
  std::string out, err;
};

Result diff(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::internal::run_diff(args, out, err, /*tty=*/false);
  return {status, out.str(), err.str()};
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// opspec_log: relu(x), then x * 2, on ones [2, 2], with norm hashes of inputs, saved as JSON.
std::string opspec_log() {
  DebugModeOptions o;
  o.record_ids = true;
  DebugMode dm(o);
  const Tensor x = ops::ones({2, 2});
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, true);
    ops::mul(ops::relu(x), 2.0);
  }
  const std::string path = ::testing::TempDir() + "/opspec_log.json";
  EXPECT_TRUE(save_log_file(path, std::vector<DebugCall>(dm.logs().begin(), dm.logs().end())).ok());
  return path;
}

// The same program as PyTorch prints it; `relu_hash` is relu's output hash.
std::string pytorch_log(const std::string& relu_hash, bool with_mul = true) {
  std::string text = "    aten::relu(t$0: f32[2, 2])  ->  t$1: f32[2, 2]  # {'input_hash': ((4.0,), {}), 'hash': " +
                     relu_hash + "}\n";
  if (with_mul) {
    text += "    aten::mul.Tensor(t$1: f32[2, 2], 2.0)  ->  t$2: f32[2, 2]  # {'input_hash': ((4.0, None), {}), "
            "'hash': 8.0}\n";
  }
  return text;
}

TEST(DiffCommand, APyTorchTextLogAgainstAnOpspecJsonLog) {
  const std::string ours = opspec_log();
  const Result same = diff({write("torch_same.txt", pytorch_log("4.0")), ours});
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  EXPECT_THAT(same.out, HasSubstr("logs are equivalent (2 entries)"));

  const std::string off = write("torch_off.txt", pytorch_log("4.001"));
  const Result differs = diff({off, ours});
  EXPECT_EQ(differs.status, 1);
  EXPECT_THAT(differs.out, HasSubstr("first divergence at entry 0: aten::relu"));
  EXPECT_THAT(differs.out, HasSubstr("> "));  // the marked row of the side-by-side view
  const std::string page = ::testing::TempDir() + "/diff.html";
  EXPECT_EQ(diff({off, ours, "--html", page}).status, 1);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("<tr class=\"divergent\" id=\"divergence\"><td>0</td>"));
  EXPECT_THAT(html, HasSubstr("&#39;hash&#39;: 4.001"));
  EXPECT_EQ(diff({off, ours, "--rtol", "1e-3"}).status, 0);
  EXPECT_EQ(diff({off, ours, "--atol", "0.01"}).status, 0);
  EXPECT_EQ(diff({off, ours, "--atol", "0.0001"}).status, 1);

  const Result missing = diff({write("torch_short.txt", pytorch_log("4.0", false)), ours});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.out, HasSubstr("log 1 ends after 1 entries"));
}

TEST(DiffCommand, UnreadableLogsAndUsageErrors) {
  const std::string ours = opspec_log();
  const Result bad = diff({write("torch_bad.txt", "    aten::relu(t$0: f32[2, 2]  ->  t$1\n"), ours});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("torch_bad.txt:1:"));
  EXPECT_THAT(diff({ours}).err, HasSubstr("give two logs, got 1"));
  EXPECT_EQ(diff({ours, ours, "--rtol", "x"}).status, 2);
  EXPECT_EQ(diff({ours, ours, "--frobnicate"}).status, 2);
  EXPECT_EQ(diff({ours, ours}).status, 0);
  EXPECT_THAT(diff({ours, ours, "--html", ""}).err, HasSubstr("--html needs a file name, got ''"));  // wrote nothing, silently
  // --context was cast to a whole number (0.5 -> 0; 1e30 undefined), a nan
  // --rtol compared false with every difference, and two directories (read
  // as empty logs) agreed, all silently.
  for (const char* bad : {"0.5", "1e30", "-1", "x", "1000001"}) {
    const Result r = diff({ours, ours, "--context", bad});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr(std::string("--context: not a whole number from 0 to 1000000: '") + bad + "'"));
  }
  EXPECT_THAT(diff({ours, ours, "--context"}).err, HasSubstr("--context: not a whole number from 0 to 1000000: ''"));
  EXPECT_EQ(diff({ours, ours, "--context", "0"}).status, 0);
  for (const char* bad : {"nan", "inf", "-1"}) {
    EXPECT_THAT(diff({ours, ours, "--rtol", bad}).err, HasSubstr("--rtol needs a finite number >= 0")) << bad;
  }
  const Result dirs = diff({::testing::TempDir(), ::testing::TempDir()});
  EXPECT_EQ(dirs.status, 2);
  EXPECT_THAT(dirs.err, HasSubstr("it is a directory"));
}

}  // namespace diff_command_test
}  // namespace opspec
