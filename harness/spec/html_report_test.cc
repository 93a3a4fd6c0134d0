// write_html_report: the index (every case, its status and a link, the filter
// box) and a case page per case (the failure on top, the program with the
// break's line marked, the logs, each graph with its DOT), escaped throughout.
#include "harness/spec/html_report.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/spec/spec_loader.h"
#include "runtime/compile/backend.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace html_report_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HtmlReport, IndexAndCasePages) {
  absl::StatusOr<SuiteSpec> suite = load_suite_string(R"(
suite: report
cases:
  - name: passes
    inputs: {x: {shape: [4]}}
    program: |
      return relu(x)
    expect: {ops: [aten::relu]}
  - name: fails
    inputs: {x: {shape: [4]}}
    program: |
      return neg(x)
    expect: {ops: [aten::relu]}
  - name: breaks
    inputs: {x: {shape: [4]}}
    program: |
      y = sin(x)
      graph_break()
      return cos(y)
    compile: {backend: eager}
    expect: {graph_breaks: 1}
  - name: fuses
    inputs: {x: {shape: [4]}}
    program: |
      return relu(add(mul(x, 2), 1))
    compile: {backend: fused}
    expect: {fused_kernels: 1}
)",
                                                      "report.yaml");
  ASSERT_TRUE(suite.ok()) << suite.status();
  std::vector<ReportCase> cases;
  Summary summary;
  for (const CaseRef& ref : expand_cases(*suite)) {
    cases.push_back({run_case(ref, {.report_logs = true}), ref.spec});
    summary.add(cases.back().result);
  }
  const std::string dir = ::testing::TempDir() + "/opspec_report";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_html_report(dir, cases, summary).ok());

  const std::string index = read(dir + "/index.html");
  EXPECT_THAT(index, HasSubstr("3 passed, 1 failed"));
  EXPECT_THAT(index, HasSubstr("<a href=\"cases/report__fails.html\">report::fails</a>"));
  EXPECT_THAT(index, HasSubstr("data-status=\"failed\""));
  EXPECT_THAT(index, HasSubstr("id=\"filter\""));

  const std::string failed = read(dir + "/cases/report__fails.html");
  EXPECT_THAT(failed, HasSubstr("<pre class=\"failure\">expect.ops"));
  EXPECT_THAT(failed, HasSubstr("aten::neg"));
  // With report_logs the eager log carries ids and hashes of inputs and outputs.
  EXPECT_THAT(failed, HasSubstr("aten::neg(t$0: f32[4])  -&gt;  t$1: f32[4]  # {&#39;input_hash&#39;: (("));
  EXPECT_LT(failed.find("Failure"), failed.find("Program"));  // the failure on top

  const std::string broke = read(dir + "/cases/report__breaks.html");
  const std::string fused = read(dir + "/cases/report__fuses.html");
  EXPECT_THAT(fused, HasSubstr("Fused kernels (their programs)"));
  EXPECT_THAT(fused, HasSubstr("fused_mul_add_relu_0:\n"));
  EXPECT_THAT(fused, HasSubstr("= mul("));
  EXPECT_THAT(broke, HasSubstr("Graph 1 of 2"));
  EXPECT_THAT(broke, HasSubstr("digraph"));  // the DOT
  EXPECT_THAT(broke, HasSubstr("Graph breaks"));
  // The graph_break() line (file line 18) is marked.
  EXPECT_THAT(broke, HasSubstr("<span class=\"line break\" data-line=\"18\">"));
  EXPECT_THAT(broke, Not(HasSubstr("<script src")));  // nothing loaded from outside
  if (!dot_to_svg("digraph g { a -> b; }").empty()) {  // built with Graphviz: each graph drawn inline
    EXPECT_THAT(broke, HasSubstr("<div class=\"graph-svg\"><svg"));
    EXPECT_THAT(broke, HasSubstr(">aten::sin</text>"));
  } else {
    EXPECT_THAT(broke, HasSubstr("Graphviz was not found"));
  }
}

// A backend that adds one to every output: the compiled run gains an add.
TEST(HtmlReport, AFailedEquivalenceShowsBothLogsWithTheDivergenceMarked) {
  register_backend("html_report_test_off_by_one", [](const Graph& g, const std::vector<Tensor>& examples) {
    CompiledGraph run = eager_backend(g, examples);
    return CompiledGraph([run](const std::vector<Tensor>& in) {
      std::vector<Tensor> out = run(in);
      for (Tensor& t : out) t = ops::add(t, 1.0);
      return out;
    });
  });
  absl::StatusOr<SuiteSpec> suite = load_suite_string(R"(
suite: report
cases:
  - name: diverges
    inputs: {x: {shape: [4]}}
    program: |
      return relu(x)
    compile: {backend: html_report_test_off_by_one, calls: [{x: {shape: [6]}}]}
    expect: {equivalent: bitwise}
)",
                                                      "report.yaml");
  ASSERT_TRUE(suite.ok()) << suite.status();
  std::vector<ReportCase> cases;
  Summary summary;
  for (const CaseRef& ref : expand_cases(*suite)) {
    cases.push_back({run_case(ref), ref.spec});
    summary.add(cases.back().result);
  }
  ASSERT_EQ(cases[0].result.outcome, Outcome::kFailed);
  const std::string dir = ::testing::TempDir() + "/opspec_report_equivalence";
  ASSERT_TRUE(write_html_report(dir, cases, summary).ok());
  const std::string text = read(dir + "/cases/report__diverges.html");
  EXPECT_THAT(text, HasSubstr("First divergence at entry 1 (marked)"));
  EXPECT_THAT(text, HasSubstr("<tr class=\"divergent\"><td>1</td><td></td><td><code>  aten::add.Tensor"));
  EXPECT_THAT(text, HasSubstr("Guards and recompiles"));
  EXPECT_THAT(text, HasSubstr("recompile 1: tensor &#39;L[&#39;x&#39;]&#39; size mismatch"));
}

TEST(HtmlReport, TextIsEscaped) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(html_escape("\xff"), "\xef\xbf\xbd");  // invalid UTF-8 replaced
}

}  // namespace html_report_test
}  // namespace opspec::spec
