// ops_assertions.cc: EXPECT_OPS's recording and failure messages.
#include "harness/gtest/ops_assertions.h"

#include <exception>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "harness/expect/sequence_diff.h"
#include "harness/gtest/report_pages.h"
#include "harness/regex.h"

namespace opspec::internal {
namespace {

std::string count_ops(size_t n) { return str_cat(n, n == 1 ? " op" : " ops"); }

// without_pointers: gMock prints a const char* as `0x55d0c8 pointing to "text"`;
// the address only distracts, so descriptions drop it.
std::string without_pointers(std::string_view desc) {
  static const Regex kPointer = *Regex::compile("0x[0-9a-fA-F]+ pointing to ");
  return kPointer.replace_all(desc, "");
}

// describe: the matcher's description, without pointer values.
std::string describe(const OpsMatcher& matcher) {
  std::ostringstream os;
  matcher.DescribeTo(&os);
  return without_pointers(os.str());
}

// ExpectedElement: one element of an ElementsAre recognised from its description.
struct ExpectedElement {
  std::optional<std::string> exact;  // `is equal to "aten::mm"`: the full name
  std::optional<OpPattern> pattern;  // an Op(...) matcher
  std::string display() const { return exact ? *exact : pattern->str(); }
  bool matches(const RecordedOp& op) const { return exact ? op.name == *exact : pattern->matches(op); }
};

std::optional<ExpectedElement> parse_element(std::string_view desc) {
  constexpr std::string_view kEq = "is equal to \"";
  if (std::string_view(desc).starts_with(kEq) && std::string_view(desc).ends_with("\"") && desc.size() > kEq.size()) {
    std::string_view name = desc.substr(kEq.size(), desc.size() - kEq.size() - 1);
    if (name.find_first_of("\\\"") != std::string_view::npos) return std::nullopt;
    return ExpectedElement{std::string(name), std::nullopt};
  }
  if (std::optional<OpPattern> p = lookup_described_op(std::string(desc))) return ExpectedElement{std::nullopt, *p};
  return std::nullopt;
}

// parse_elements_are: the elements of an ElementsAre-shaped description
// (gMock's ElementsAre/ElementsAreArray/IsEmpty wording), when each element
// is a name or an Op(); nullopt for any other matcher.
std::optional<std::vector<ExpectedElement>> parse_elements_are(const std::string& desc) {
  std::vector<ExpectedElement> out;
  if (desc == "is empty") return out;
  constexpr std::string_view kOne = "has 1 element that ";
  if (std::string_view(desc).starts_with(kOne)) {
    std::optional<ExpectedElement> e = parse_element(std::string_view(desc).substr(kOne.size()));
    if (!e) return std::nullopt;
    out.push_back(*e);
    return out;
  }
  std::vector<std::string_view> lines;
  for (size_t pos = 0;;) {
    const size_t nl = desc.find('\n', pos);
    lines.push_back(std::string_view(desc).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (lines.size() < 3 || !std::string_view(lines[0]).starts_with("has ") ||
      !std::string_view(lines[0]).ends_with(" elements where")) {
    return std::nullopt;
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (i + 1 < lines.size()) {
      if (!std::string_view(line).ends_with(",")) return std::nullopt;
      line.remove_suffix(1);
    }
    const std::string prefix = str_cat("element #", i - 1, " ");
    if (!std::string_view(line).starts_with(prefix)) return std::nullopt;
    std::optional<ExpectedElement> e = parse_element(line.substr(prefix.size()));
    if (!e) return std::nullopt;
    out.push_back(*e);
  }
  if (str_cat("has ", out.size(), " elements where") != lines[0]) return std::nullopt;
  return out;
}

// elements_diff: the sequence diff of expected elements against ops, or "" if they match.
std::string elements_diff(const std::vector<ExpectedElement>& expected, const std::vector<RecordedOp>& ops) {
  bool typed = false;
  for (const ExpectedElement& e : expected) typed |= e.pattern && e.pattern->constrains_tensors();
  // sequence_diff compares strings, so each display string names its
  // element; equal displays mean equal semantics (see OpPattern::str).
  absl::flat_hash_map<std::string, const ExpectedElement*> by_expected;
  absl::flat_hash_map<std::string, const RecordedOp*> by_actual;
  std::vector<std::string> expected_text, actual_text;
  for (const ExpectedElement& e : expected) {
    expected_text.push_back(e.display());
    by_expected.try_emplace(expected_text.back(), &e);
  }
  for (const RecordedOp& op : ops) {
    actual_text.push_back(typed ? op.str() : op.name);
    by_actual.try_emplace(actual_text.back(), &op);
  }
  return sequence_diff(expected_text, actual_text, [&](const std::string& e, const std::string& a) {
    return by_expected.at(e)->matches(*by_actual.at(a));
  });
}

std::string gmock_explanation(const OpsMatcher& matcher, const std::vector<RecordedOp>& ops) {
  ::testing::StringMatchResultListener listener;
  matcher.MatchAndExplain(ops, &listener);
  return without_pointers(listener.str());
}

const char* level_name(OpLevel level) { return level == OpLevel::kFunction ? "function level" : "aten level"; }

}  // namespace

std::string list_ops(const std::vector<RecordedOp>& ops, bool with_types) {
  if (ops.empty()) return "  (none)\n";
  const size_t width = str_cat(ops.size() - 1).size();
  std::string out;
  auto line = [&](size_t i) {
    std::string idx = str_cat(i);
    idx.insert(0, width - idx.size(), ' ');
    str_append(&out, "  [", idx, "] ", with_types ? ops[i].str() : ops[i].name, "\n");
  };
  constexpr size_t kHead = 20, kTail = 8;
  static_assert(kHead + kTail < kListOpsLimit);
  if (ops.size() <= kListOpsLimit) {
    for (size_t i = 0; i < ops.size(); ++i) line(i);
    return out;
  }
  for (size_t i = 0; i < kHead; ++i) line(i);
  str_append(&out, "  ... ", ops.size() - kHead - kTail, " more ops ...\n");
  for (size_t i = ops.size() - kTail; i < ops.size(); ++i) line(i);
  return out;
}

std::string explain_ops_mismatch(const std::vector<RecordedOp>& ops, const OpsMatcher& matcher,
                                 const std::string& matcher_text) {
  const ::testing::MatcherDescriberInterface* describer = matcher.GetDescriber();
  if (const auto* in_order = dynamic_cast<const OpsInOrderImpl*>(describer)) {
    std::string out = str_cat("don't contain the expected ops in order:\n", gmock_explanation(matcher, ops));
    bool typed = false;
    for (const OpPattern& p : in_order->patterns()) typed |= p.constrains_tensors();
    if (typed) {
      // The name-only wording (check_ops_contain) lists the ops itself.
      str_append(&out, "\nrecorded ops (", ops.size(), "):\n", list_ops(ops));
    }
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out;
  }
  if (dynamic_cast<const NoOpImpl*>(describer) != nullptr) {
    return str_cat("include an excluded op:\n", gmock_explanation(matcher, ops), "\n");
  }
  const std::string desc = describe(matcher);
  if (std::optional<std::vector<ExpectedElement>> expected = parse_elements_are(desc)) {
    std::string diff = elements_diff(*expected, ops);
    if (!diff.empty()) {
      if (diff.back() != '\n') diff += '\n';
      return str_cat("differ from the expected sequence: expected ", count_ops(expected->size()), ", got ", ops.size(),
                     "\n", diff);
    }
  }
  std::string out = str_cat("don't match ", abbreviate(matcher_text), "\n");
  std::string desc_block;
  for (char c : desc) desc_block += c == '\n' ? std::string("\n          ") : std::string(1, c);
  str_append(&out, "Expected: ", desc_block, "\n");
  str_append(&out, "  Actual: ", count_ops(ops.size()));
  const std::string why = gmock_explanation(matcher, ops);
  if (!why.empty()) str_append(&out, ", ", why);
  str_append(&out, "\n", list_ops(ops));
  return out;
}

::testing::AssertionResult match_recorded_ops_impl(const char* text, OpLevel level,
                                                   const std::function<void()>& statement, const OpsMatcher& matcher) {
  const std::vector<std::string> args = split_macro_args(text);
  const std::string statement_text = join_args(args, 0, args.size() - 1);
  const std::string header = str_cat("ops recorded by `", abbreviate(statement_text), "` (", level_name(level), ")");
  std::vector<RecordedOp> ops;
  std::optional<std::string> error;
  {
    OpRecorder recorder(level);
    try {
      statement();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    ops = recorder.ops();
  }
  const char* macro = level == OpLevel::kAten ? "EXPECT_OPS" : "EXPECT_FUNCTION_OPS";
  if (error) {
    return report_failure(::testing::AssertionFailure() << header << ": the statement threw: " << *error
                                                        << "\nops recorded until then (" << ops.size() << "):\n"
                                                        << list_ops(ops),
                          macro);
  }
  if (matcher.Matches(ops)) return ::testing::AssertionSuccess();
  std::string body = explain_ops_mismatch(ops, matcher, args.empty() ? std::string() : args.back());
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return report_failure(::testing::AssertionFailure() << header << " " << body, macro);
}

}  // namespace opspec::internal
