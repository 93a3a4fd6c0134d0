// spec_accept_test.cc: --accept rewrites golden debug strings in place:
// exact round trips of tricky texts in every layout, the rest of the file
// byte for byte, the backup, and the refusals.
#include "harness/spec/spec_accept.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace spec_accept_test {

using ::testing::HasSubstr;

// y: a YAML text written as a raw string that starts with a line break.
std::string y(std::string_view s) { return std::string(s.substr(s.starts_with('\n') ? 1 : 0)); }

std::string rewrite(std::string_view yaml, const std::vector<std::pair<std::string, std::string>>& changes) {
  auto r = rewrite_debug_strings(yaml, "t.yaml", changes);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::string();
}

// golden: the debug_string the loader reads for case name in yaml.
std::optional<std::string> golden(std::string_view yaml, std::string_view name) {
  auto s = load_suite_string(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status() << "\n" << yaml;
  if (!s.ok()) return std::nullopt;
  for (const CaseSpec& c : s->cases) {
    if (c.name == name) return c.expect.debug_string;
  }
  return std::nullopt;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += "\\x" + std::to_string(static_cast<int>(c));
    else
      out += c;
  }
  return out;
}

const std::vector<std::string> kTrickyTexts = {
    "",
    "\n",
    "\n\n",
    "\n\n\n",
    "one line",
    "one line\n",
    "two\nlines\n",
    "ends with two\n\n",
    "ends with three\n\n\n",
    "no final newline\nhere",
    "trailing spaces   ",
    "trailing spaces   \n",
    "  starts with spaces\n",
    "  starts with spaces\n    and deeper\nthen not\n",
    "\tstarts with a tab\n",
    "\nstarts with an empty line\n",
    "\n\nstarts with two empty lines",
    "blank line\n\nin the middle\n",
    "whitespace-only line\n   \nin the middle\n",
    "last line is spaces\n   ",
    "# looks like a comment\n",
    "- looks: like yaml\n  key: value\n",
    "'quoted' \"double\" \\backslash\n",
    "---\n...\n",
    "carriage\r\nreturn\n",
    "control \x01 char\n",
    "unicode: \xce\xb1\xce\xb2\xce\xb3 \xe2\x86\x92\n",
    "  [1, 2]: {a: b}\n",
    "aten::add.Tensor(t: f32[4], 1) -> t: f32[4]\n  aten::mul.Tensor(t: f32[4], t: f32[4])\n",
};

// The layouts the value may sit in. @ marks where case a's debug_string part goes.
const std::vector<std::pair<std::string, std::string>> kLayouts = {
    {"block",
     "    expect:\n      ops: [x]   # ops comment\n      debug_string: |\n        old text\n\n        more\n"
     "      graphs: 1\n"},
    {"block_with_comment", "    expect:\n      debug_string: |-  # keep this comment\n        old\n      graphs: 1\n"},
    {"keep_block", "    expect:\n      debug_string: |+\n        old\n\n\n      graphs: 1\n"},
    {"indicator_block", "    expect:\n      debug_string: |4\n            deep\n      graphs: 1\n"},
    {"quoted", "    expect:\n      debug_string: \"old\\n\"  # note\n      graphs: 1\n"},
    {"single_quoted", "    expect:\n      debug_string: 'it''s\n        two lines'\n      graphs: 1\n"},
    {"plain", "    expect:\n      debug_string: old text\n        continued\n      graphs: 1\n"},
    {"tagged", "    expect:\n      debug_string: !!str old\n      graphs: 1\n"},
    {"empty_value", "    expect:\n      debug_string:    # fill me\n      graphs: 1\n"},
    {"missing_key", "    expect:\n      ops: [x]\n      graphs: 1\n    # a comment after expect\n"},
    {"missing_key_last_is_block", "    expect:\n      check: |\n        CHECK: x\n"},
    {"missing_expect", "    description: no expect\n"},
    {"empty_expect", "    expect:\n"},
    {"empty_flow_expect", "    expect: {}\n"},
};

std::string layout_file(const std::string& layout) {
  return str_cat("# header comment\ncases:\n  - name: a   # comment a\n    program: return 1\n", layout,
                 "\n  - name: b\n    program: return 2\n    expect:\n      debug_string: \"b's text\"\n");
}

TEST(SpecAccept, EveryTrickyTextRoundTripsInEveryLayout) {
  for (const auto& [layout_name, layout] : kLayouts) {
    std::string file = layout_file(layout);
    ASSERT_TRUE(load_suite_string(file, "t.yaml").ok())
        << layout_name << ": " << load_suite_string(file, "t.yaml").status();
    for (const std::string& text : kTrickyTexts) {
      SCOPED_TRACE(str_cat("layout ", layout_name, ", text \"", printable(text), "\""));
      std::string out = rewrite(file, {{"a", text}});
      EXPECT_EQ(golden(out, "a"), text) << out;
      EXPECT_EQ(golden(out, "b"), "b's text");
      // Everything before case a's part and after it is unchanged.
      EXPECT_TRUE(out.starts_with("# header comment\ncases:\n  - name: a   # comment a\n    program: return 1\n"));
      EXPECT_TRUE(
          out.ends_with("\n  - name: b\n    program: return 2\n    expect:\n      debug_string: \"b's text\"\n"))
          << out;
      if (layout.find("graphs: 1") != std::string::npos) {
        EXPECT_THAT(out, HasSubstr("      graphs: 1\n"));
      }
      for (std::string_view comment :
           {"# ops comment", "# keep this comment", "# note", "# fill me", "# a comment after expect"}) {
        if (layout.find(comment) != std::string::npos) {
          EXPECT_THAT(out, HasSubstr(comment));
        }
      }
      // Accepting the same text again changes nothing.
      EXPECT_EQ(rewrite(out, {{"a", text}}), out);
    }
  }
}

TEST(SpecAccept, ExactOutput) {
  std::string file = y(R"Y(
cases:
  - name: a
    program: return 1
    expect:
      ops: [x]
      debug_string: |
        old
      graphs: 1

  - name: b
    program: return 2
)Y");
  EXPECT_EQ(rewrite(file, {{"a", "new line 1\n  new line 2\n"}, {"b", "  b1\nb2"}}), y(R"Y(
cases:
  - name: a
    program: return 1
    expect:
      ops: [x]
      debug_string: |
        new line 1
          new line 2
      graphs: 1

  - name: b
    program: return 2
    expect:
      debug_string: |2-
          b1
        b2
)Y"));
  // Several trailing newlines: `|+`, and the blank separator lines after it
  // are taken into the value rather than left to change it.
  EXPECT_EQ(rewrite(file, {{"a", "x\n\n"}}), y(R"Y(
cases:
  - name: a
    program: return 1
    expect:
      ops: [x]
      debug_string: |+
        x

      graphs: 1

  - name: b
    program: return 2
)Y"));
  EXPECT_EQ(rewrite(file, {{"b", "x\n\n"}}), file + "    expect:\n      debug_string: |+\n        x\n\n");
  // A carriage return cannot live in a block scalar: a quoted scalar instead.
  EXPECT_EQ(rewrite(file, {{"a", "a\r\nb"}}), absl::StrReplaceAll(file, {{"|\n        old\n", "\"a\\r\\nb\"\n"}}));
}

TEST(SpecAccept, WindowsLineEndingsAreKept) {
  std::string file =
      "cases:\r\n  - name: a\r\n    program: return 1\r\n    expect:\r\n      debug_string: |\r\n"
      "        old\r\n      graphs: 1\r\n";
  std::string out = rewrite(file, {{"a", "new\nlines\n"}});
  EXPECT_EQ(out,
            "cases:\r\n  - name: a\r\n    program: return 1\r\n    expect:\r\n      debug_string: |\r\n"
            "        new\r\n        lines\r\n      graphs: 1\r\n");
  EXPECT_EQ(golden(out, "a"), "new\nlines\n");
}

TEST(SpecAccept, FileWithoutFinalNewline) {
  for (std::string file :
       {"cases:\n  - name: a\n    program: return 1",
        "cases:\n  - name: a\n    program: return 1\n    expect:\n      debug_string: old",
        "cases:\n  - name: a\n    program: return 1\n    expect:\n      debug_string: |-\n        old"}) {
    for (const std::string& text : kTrickyTexts) {
      SCOPED_TRACE(str_cat(printable(file), " <- \"", printable(text), "\""));
      std::string out = rewrite(file, {{"a", text}});
      EXPECT_EQ(golden(out, "a"), text) << out;
    }
  }
}

TEST(SpecAccept, Refusals) {
  std::string file =
      "cases:\n  - name: a\n    program: return 1\n  - {name: f, program: return 1}\n"
      "  - name: g\n    program: return 1\n    expect: {ops: [x]}\n";
  auto unknown = rewrite_debug_strings(file, "t.yaml", {{"nope", "x"}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "t.yaml: error: no case named 'nope'");
  auto flow_case = rewrite_debug_strings(file, "t.yaml", {{"f", "x"}});
  EXPECT_EQ(flow_case.status().message(),
            "t.yaml:4:5: error: cannot accept into a case in flow style ({...}); write it in block style");
  auto flow_expect = rewrite_debug_strings(file, "t.yaml", {{"g", "x"}});
  EXPECT_EQ(flow_expect.status().message(),
            "t.yaml:7:13: error: cannot accept into an expect in flow style ({...}); write it in block style");
  auto twice = rewrite_debug_strings("cases:\n  - name: a\n  - name: a\n", "t.yaml", {{"a", "x"}});
  EXPECT_EQ(twice.status().message(), "t.yaml: error: more than one case is named 'a'");
  auto bad = rewrite_debug_strings("cases: [\n", "t.yaml", {{"a", "x"}});
  EXPECT_EQ(bad.status().message(), "t.yaml:2:1: error: end of sequence flow not found");
  auto not_string =
      rewrite_debug_strings("cases:\n  - name: a\n    expect:\n      debug_string: [1]\n", "t.yaml", {{"a", "x"}});
  EXPECT_EQ(not_string.status().message(),
            "t.yaml:4:21: error: cannot accept into a debug_string that is not a string");
}

// The auditor's file: a case run on two devices, and two cases besides.
const std::string kDevicesFile = y(R"Y(
cases:
  - name: block
    program: return relu(x)
    expect:
      debug_string: wrong
  - name: nokey
    program: return relu(x)
  - name: devs
    devices: [cpu, meta]
    program: return relu(add(x, 1))
    expect:
      debug_string: wrong
)Y");

// A case that ran on several devices is one golden: accepted when every
// device gave the same text (it was "overlapping debug_string edits", and
// the file's other cases were refused with it).
TEST(SpecAccept, DevicesThatAgreeGiveOneGolden) {
  auto r = rewrite_goldens(kDevicesFile, "t.yaml",
                           {{"block", "t::block", "b\n"}, {"devs", "t::devs@cpu", "d\n"}, {"devs", "t::devs@meta", "d\n"}});
  ASSERT_TRUE(r.ok()) << r.status();
  for (const absl::Status& st : r->outcomes) EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(golden(r->text, "block"), "b\n");
  EXPECT_EQ(golden(r->text, "devs"), "d\n");
  EXPECT_EQ(golden(r->text, "nokey"), std::nullopt);
  // The all-or-nothing form, as `opspec run --accept` calls it, gets the case's name twice.
  EXPECT_EQ(rewrite(kDevicesFile, {{"block", "b\n"}, {"devs", "d\n"}, {"devs", "d\n"}}), r->text);
}

// Devices that disagree: that case alone is refused, saying where and which
// runs differ; the file's other cases still take their texts.
TEST(SpecAccept, DevicesThatDisagreeRefuseThatCaseAlone) {
  auto r = rewrite_goldens(kDevicesFile, "t.yaml",
                           {{"devs", "t::devs@cpu", "same\n  aten::relu(t: f32[2])\n"},
                            {"block", "t::block", "b\n"},
                            {"devs", "t::devs@meta", "same\n  aten::relu(t: f32[2], device='meta')\n"},
                            {"devs", "t::devs@cuda:0", "same\n  aten::relu(t: f32[2])\n"}});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string why =
      "t.yaml:8:5: error: case 'devs' has one debug_string for all its devices, and their debug strings differ "
      "(t::devs@cpu and t::devs@cuda:0 vs t::devs@meta at line 2: `  aten::relu(t: f32[2])` vs "
      "`  aten::relu(t: f32[2], device='meta')`); give each device its own case";
  EXPECT_EQ(r->outcomes[0].message(), why);
  EXPECT_TRUE(r->outcomes[1].ok()) << r->outcomes[1];
  EXPECT_EQ(r->outcomes[2].message(), why);
  EXPECT_EQ(r->outcomes[3].message(), why);
  EXPECT_EQ(golden(r->text, "block"), "b\n");
  EXPECT_EQ(golden(r->text, "devs"), "wrong");
  // All or nothing, as `opspec run --accept` calls it (no run ids): the
  // message, given to every case of the file, says which case is refused.
  auto all = rewrite_debug_strings(kDevicesFile, "t.yaml", {{"block", "b\n"}, {"devs", "x\n"}, {"devs", "y\n"}});
  EXPECT_EQ(all.status().message(),
            "t.yaml: error: nothing in the file was written, as a case cannot be accepted: t.yaml:8:5: error: case "
            "'devs' has one debug_string for all its devices, and their debug strings differ (at line 1: `x` vs `y`); "
            "give each device its own case");
  auto alone = rewrite_debug_strings(kDevicesFile, "t.yaml", {{"devs", "x\n"}, {"devs", "y\n"}});
  EXPECT_EQ(alone.status().message(),
            "t.yaml:8:5: error: case 'devs' has one debug_string for all its devices, and their debug strings differ "
            "(at line 1: `x` vs `y`); give each device its own case");
}

// A case or expect in flow style cannot take a block scalar: it is refused
// alone, at its line; the file's other cases still take their texts (each
// was refused with the flow case's error).
TEST(SpecAccept, FlowStyleIsRefusedAlone) {
  const std::string file = y(R"Y(
cases:
  - {name: flow, program: return relu(x), expect: {debug_string: "wrong"}}
  - name: block
    program: return relu(x)
    expect:
      debug_string: wrong
  - name: flow_expect
    program: return relu(x)
    expect: {ops: [aten::relu], debug_string: wrong}
)Y");
  auto r = rewrite_goldens(file, "t.yaml", {{"flow", "", "f\n"}, {"block", "", "b\n"}, {"flow_expect", "", "e\n"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcomes[0].message(),
            "t.yaml:2:5: error: cannot accept into a case in flow style ({...}); write it in block style");
  EXPECT_TRUE(r->outcomes[1].ok()) << r->outcomes[1];
  EXPECT_EQ(r->outcomes[2].message(),
            "t.yaml:9:13: error: cannot accept into an expect in flow style ({...}); write it in block style");
  EXPECT_EQ(r->text, absl::StrReplaceAll(file, {{"debug_string: wrong\n  - name: flow_expect",
                                                 "debug_string: |\n        b\n  - name: flow_expect"}}));
}

// The read-back check covers the whole file: a rewrite that would change
// another case (here through an alias of the replaced value) refuses the
// case that caused it, and the file's other cases still go in.
TEST(SpecAccept, ARewriteThatWouldChangeAnotherCaseIsRefused) {
  const std::string file = y(R"Y(
cases:
  - name: a
    expect:
      debug_string: &shared old
  - name: b
    expect:
      debug_string: *shared
  - name: c
    expect:
      debug_string: old
)Y");
  auto r = rewrite_goldens(file, "t.yaml", {{"a", "", "new\n"}, {"c", "", "c\n"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->outcomes[0].message(), HasSubstr("t.yaml: error: accepting case 'a' would break the file ("));
  EXPECT_TRUE(r->outcomes[1].ok()) << r->outcomes[1];
  EXPECT_EQ(golden(r->text, "a"), "old");
  EXPECT_EQ(golden(r->text, "b"), "old");
  EXPECT_EQ(golden(r->text, "c"), "c\n");
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SpecAccept, WritesTheFileAndABackup) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "spec_accept";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / "s.yaml";
  const std::string original = "cases:\n  - name: a  # the case\n    program: return 1\n";
  std::ofstream(path, std::ios::binary) << original;

  ASSERT_TRUE(accept_debug_strings(path.string(), {{"a", "golden\ntext\n"}}).ok());
  EXPECT_EQ(read(path.string() + ".orig"), original);
  EXPECT_EQ(read(path), original + "    expect:\n      debug_string: |\n        golden\n        text\n");
  auto loaded = load_suite_file(path.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cases[0].expect.debug_string, "golden\ntext\n");

  // An error writes nothing.
  const std::string now = read(path);
  EXPECT_FALSE(accept_debug_strings(path.string(), {{"zz", "x"}}).ok());
  EXPECT_EQ(read(path), now);
  EXPECT_EQ(read(path.string() + ".orig"), original);
  EXPECT_EQ(accept_debug_strings((dir / "missing.yaml").string(), {{"a", "x"}}).code(), absl::StatusCode::kNotFound);
  // Nothing to accept: nothing written.
  EXPECT_TRUE(accept_debug_strings((dir / "missing.yaml").string(), {}).ok());
}

// accept_goldens writes what it can accept and says why it refused the rest.
TEST(SpecAccept, AcceptGoldensWritesTheAcceptedAndTellsTheRefused) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "spec_accept_goldens";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / "s.yaml";
  std::ofstream(path, std::ios::binary) << kDevicesFile;
  auto outcomes = accept_goldens(path.string(), {{"devs", "s::devs@cpu", "x\n"},
                                                 {"devs", "s::devs@meta", "y\n"},
                                                 {"block", "s::block", "b\n"},
                                                 {"zz", "s::zz", "z\n"}});
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 4u);
  EXPECT_THAT((*outcomes)[0].message(), HasSubstr("s.yaml:8:5: error: case 'devs' has one debug_string"));
  EXPECT_TRUE((*outcomes)[2].ok());
  EXPECT_EQ((*outcomes)[3].message(), str_cat(path.string(), ": error: no case named 'zz'"));
  EXPECT_EQ(read(path.string() + ".orig"), kDevicesFile);
  EXPECT_EQ(golden(read(path), "block"), "b\n");
  EXPECT_EQ(golden(read(path), "devs"), "wrong");
  // Nothing accepted: nothing written.
  std::filesystem::remove(path.string() + ".orig");
  ASSERT_TRUE(accept_goldens(path.string(), {{"zz", "", "z\n"}}).ok());
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".orig"));
}

}  // namespace
}  // namespace opspec::spec
