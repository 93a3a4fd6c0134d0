// write_html_report: the index (every case, its status and a link, the filter
// box) and a case page per case (the failure on top, the program with the
// break's line marked, the logs, each graph with its DOT), escaped throughout.
#include "harness/spec/html_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/spec/spec_loader.h"
#include "runtime/compile/backend.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace html_report_test {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
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
  - name: breaks_quoted
    inputs: {x: {shape: [4]}}
    program: "y = sin(x)\ngraph_break()\nreturn cos(y)\n"
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
  EXPECT_THAT(index, HasSubstr("4 passed, 1 failed"));
  EXPECT_THAT(index, HasSubstr("<a href=\"cases/report~~fails.html\">report::fails</a>"));
  EXPECT_THAT(index, HasSubstr("data-status=\"failed\""));
  EXPECT_THAT(index, HasSubstr("id=\"filter\""));

  const std::string failed = read(dir + "/cases/report~~fails.html");
  EXPECT_THAT(failed, HasSubstr("<pre class=\"failure\">expect.ops"));
  EXPECT_THAT(failed, HasSubstr("aten::neg"));
  // With report_logs the eager log carries ids and hashes of inputs and outputs.
  EXPECT_THAT(failed, HasSubstr("aten::neg(t$0: f32[4])  -&gt;  t$1: f32[4]  # {&#39;input_hash&#39;: (("));
  EXPECT_LT(failed.find("Failure"), failed.find("Program"));  // the failure on top

  const std::string broke = read(dir + "/cases/report~~breaks.html");
  const std::string fused = read(dir + "/cases/report~~fuses.html");
  EXPECT_THAT(fused, HasSubstr("Fused kernels (their programs)"));
  EXPECT_THAT(fused, HasSubstr("fused_mul_add_relu_0:\n"));
  EXPECT_THAT(fused, HasSubstr("= mul("));
  EXPECT_THAT(broke, HasSubstr("Graph 1 of 2"));
  EXPECT_THAT(broke, HasSubstr("digraph"));  // the DOT
  EXPECT_THAT(broke, HasSubstr("Graph breaks"));
  // The graph_break() line (file line 18) is marked.
  EXPECT_THAT(broke, HasSubstr("<span class=\"line break\" data-line=\"18\">"));
  // A quoted program is not the file's lines: its own are numbered and marked (Note [Program positions]).
  EXPECT_THAT(read(dir + "/cases/report~~breaks_quoted.html"),
              HasSubstr("<span class=\"line break\" data-line=\"2\"><span class=\"no\">2</span>graph_break()"));
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
  const std::string text = read(dir + "/cases/report~~diverges.html");
  EXPECT_THAT(text, HasSubstr("First divergence at entry 1 (marked)"));
  EXPECT_THAT(text, HasSubstr("<tr class=\"divergent\"><td>1</td><td></td><td><code>  aten::add.Tensor"));
  EXPECT_THAT(text, HasSubstr("Guards and recompiles"));
  EXPECT_THAT(text, HasSubstr("recompile 1: tensor &#39;L[&#39;x&#39;]&#39; size mismatch"));
}

// Page names are the id, readable, with "::" as "~~" and other bytes escaped
// as "~xx"; no two ids share one (a case on two devices and a case named
// after one of them did, and the later page replaced the earlier).
TEST(HtmlReport, PageNamesAreReadableAndNeverShared) {
  EXPECT_EQ(case_page_name("report::fails"), "report~~fails.html");
  EXPECT_EQ(case_page_name("coll::a@cpu"), "coll~~a@cpu.html");
  EXPECT_EQ(case_page_name("coll::a_cpu"), "coll~~a_cpu.html");
  EXPECT_EQ(case_page_name("s::c@cuda:0"), "s~~c@cuda~3a0.html");
  EXPECT_EQ(case_page_name("../x y::~"), "..~2fx~20y~~~7e.html");
  // Every id of up to four characters from those that escape, or could be
  // mistaken for escapes, has a page of its own.
  const std::string alphabet = ":_~@a/3";
  std::map<std::string, std::string> seen;  // page -> id
  std::vector<std::string> ids = {""};
  for (size_t first = 0, length = 0; length < 4; ++length) {
    const size_t last = ids.size();
    for (size_t i = first; i < last; ++i) {
      for (char c : alphabet) ids.push_back(ids[i] + c);
    }
    first = last;
  }
  for (const std::string& id : ids) {
    const auto [it, added] = seen.emplace(case_page_name(id), id);
    EXPECT_TRUE(added) << "'" << id << "' and '" << it->second << "' share " << it->first;
  }
}

// A capital letter adds a hash of the id, so ids that differ in case only
// keep a page each where the file system folds case (macOS, Windows); a name
// too long for a file is cut and hashed.
TEST(HtmlReport, PageNamesSurviveCaseFoldingAndLongIds) {
  EXPECT_THAT(case_page_name("T.Name"), MatchesRegex("T\\.Name~h[0-9a-f]{16}\\.html"));
  std::set<std::string> folded;
  for (const char* id : {"s::a", "s::A", "S::a", "S::A"}) {
    std::string page = case_page_name(id);
    std::transform(page.begin(), page.end(), page.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_TRUE(folded.insert(page).second) << id << " -> " << page;
  }
  const std::string long_id = "s::" + std::string(300, 'x');
  const std::string page = case_page_name(long_id);
  EXPECT_EQ(page.size(), kMaxPageStem + 18 + 5);  // stem, "~h" and 16 hex digits, ".html"
  EXPECT_EQ(page.substr(0, 5), "s~~xx");
  EXPECT_NE(page, case_page_name(long_id + "y"));  // same first 160 bytes, other ids
  // An escape is never cut in two: the cut falls before "~2f", not inside it.
  EXPECT_THAT(case_page_name("s::" + std::string(155, 'x') + "/"), MatchesRegex("s~~x{155}~h[0-9a-f]{16}\\.html"));
  // And the page is written (a 300-byte name was ENAMETOOLONG and failed the report).
  ReportCase c{CaseResult{}, nullptr};
  c.result.id = long_id;
  const std::string dir = ::testing::TempDir() + "/opspec_report_long";
  std::filesystem::remove_all(dir);
  Summary summary;
  summary.add(c.result);
  ASSERT_TRUE(write_html_report(dir, {c}, summary).ok());
  EXPECT_THAT(read(dir + "/cases/" + page), HasSubstr(long_id));
  std::filesystem::remove(dir + "/index.html");
  ASSERT_TRUE(rebuild_html_index(dir).ok());
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr(str_cat("<a href=\"cases/", page, "\">", long_id, "</a>")));
}

int count(const std::string& text, std::string_view what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The auditor's suite: coll::a@cpu, coll::a@meta and coll::a_cpu each keep
// their page, the index links each to its own, and a rebuilt index lists all three.
TEST(HtmlReport, EveryCaseKeepsItsPageAndTheRebuiltIndexListsIt) {
  absl::StatusOr<SuiteSpec> suite = load_suite_string(R"(
suite: coll
cases:
  - {name: a, devices: [cpu, meta], inputs: {x: {shape: [2]}}, program: return relu(x)}
  - {name: a_cpu, inputs: {x: {shape: [2]}}, program: return relu(x), expect: {ops: [aten::mul]}}
)",
                                                      "coll.yaml");
  ASSERT_TRUE(suite.ok()) << suite.status();
  std::vector<ReportCase> cases;
  Summary summary;
  for (const CaseRef& ref : expand_cases(*suite)) {
    cases.push_back({run_case(ref), ref.spec});
    summary.add(cases.back().result);
  }
  ASSERT_EQ(cases.size(), 3u);
  const std::string dir = ::testing::TempDir() + "/opspec_report_names";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_html_report(dir, cases, summary).ok());
  for (const char* id : {"coll::a@cpu", "coll::a@meta", "coll::a_cpu"}) {
    const std::string page = case_page_name(id);
    EXPECT_THAT(read(dir + "/index.html"), HasSubstr(str_cat("<a href=\"cases/", page, "\">", id, "</a>")));
    EXPECT_THAT(read(dir + "/cases/" + page), HasSubstr(str_cat("<h1>", id, "</h1>")));
  }
  std::filesystem::remove(dir + "/index.html");
  ASSERT_TRUE(rebuild_html_index(dir).ok());
  const std::string index = read(dir + "/index.html");
  EXPECT_EQ(count(index, "<tr class=\"case\""), 3) << index;
  EXPECT_THAT(index, HasSubstr("2 passed, 1 failed"));
  EXPECT_THAT(index, HasSubstr("<a href=\"cases/coll~~a@cpu.html\">coll::a@cpu</a>"));
}

// A report written before page names escaped '_' and '@' apart keeps working:
// a rebuilt index links the pages that are there, and of two pages of one
// case (an old one, and a new one added since) lists the new one once.
TEST(HtmlReport, ARebuiltIndexLinksThePagesThatAreThere) {
  CaseResult r;
  r.id = "old::case_one", r.suite = "old", r.name = "case_one", r.outcome = Outcome::kPassed;
  const std::string dir = ::testing::TempDir() + "/opspec_report_old_names";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/cases");
  std::ofstream(dir + "/cases/old__case_one.html") << "old page";
  std::ofstream(dir + "/cases/old__case_one.html.json") << result_to_json(r);
  ASSERT_TRUE(rebuild_html_index(dir).ok());
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr("<a href=\"cases/old__case_one.html\">old::case_one</a>"));

  ASSERT_TRUE(add_to_html_report(dir, {r, nullptr}).ok());
  const std::string index = read(dir + "/index.html");
  EXPECT_EQ(count(index, "<tr class=\"case\""), 1) << index;
  EXPECT_THAT(index, HasSubstr("<a href=\"cases/old~~case_one.html\">old::case_one</a>"));
}

TEST(HtmlReport, TextIsEscaped) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(html_escape("\xff"), "\xef\xbf\xbd");  // invalid UTF-8 replaced
}

}  // namespace html_report_test
}  // namespace opspec::spec
