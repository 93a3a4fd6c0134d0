// op_checks.cc: op-sequence and golden-text checks.
#include "harness/expect/op_checks.h"

#include <algorithm>

#include "harness/expect/op_log.h"
#include "harness/expect/sequence_diff.h"
#include "runtime/core/did_you_mean.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

std::string count_ops(size_t n) { return str_cat(n, n == 1 ? " op" : " ops"); }

std::string join_indices(const std::vector<size_t>& idx) {
  std::string out = idx.size() == 1 ? "at index " : "at indices ";
  for (size_t k = 0; k < idx.size(); ++k) str_append(&out, k ? ", " : "", idx[k]);
  return out;
}

// kContainUnmatchedKeep: unmatched ops shown at each end of a run of them in
// check_ops_contain's listing (more after the last match, where the missing op would be).
constexpr size_t kContainKeep = 3;
constexpr size_t kContainKeepAfterLast = 15;

}  // namespace

CheckResult check_op_names_known(const std::vector<std::string>& patterns) {
  std::string msg;
  std::vector<std::string> known;
  for (const std::string& p : patterns) {
    if (names_an_op(p)) continue;
    if (known.empty()) known = registered_op_names();
    const std::string full = p.find("::") == std::string::npos ? str_cat("aten::", p) : p;
    str_append(&msg, msg.empty() ? "" : "\n", "'", p, "' names no registered op", did_you_mean(full, known));
  }
  return msg.empty() ? CheckResult::pass() : CheckResult::fail(std::move(msg));
}

namespace {
// unknown_names_first: "<unknown names>\n" when some pattern names no op
// (the likely reason a sequence check failed), else "".
std::string unknown_names_first(const std::vector<std::string>& patterns) {
  CheckResult r = check_op_names_known(patterns);
  return r.ok ? "" : r.message + "\n";
}
}  // namespace

CheckResult check_ops_exact(const std::vector<std::string>& actual, const std::vector<std::string>& expected) {
  bool same = actual.size() == expected.size();
  for (size_t i = 0; same && i < actual.size(); ++i) same = op_name_matches(expected[i], actual[i]);
  if (same) return CheckResult::pass();
  return CheckResult::fail(str_cat(
      unknown_names_first(expected), "op sequence differs: expected ", count_ops(expected.size()), ", got ",
      actual.size(), "\n",
      sequence_diff(expected, actual, [](const std::string& e, const std::string& a) { return op_name_matches(e, a); })));
}

CheckResult check_ops_contain(const std::vector<std::string>& actual, const std::vector<std::string>& expected) {
  // Greedy earliest matching finds a subsequence whenever one exists.
  std::vector<size_t> matched_at;  // actual index of each matched expected op
  size_t pos = 0;
  for (const std::string& e : expected) {
    while (pos < actual.size() && !op_name_matches(e, actual[pos])) ++pos;
    if (pos == actual.size()) break;
    matched_at.push_back(pos++);
  }
  if (matched_at.size() == expected.size()) return CheckResult::pass();

  const size_t missing = matched_at.size();
  std::string msg = str_cat(unknown_names_first(expected), "expected op '", expected[missing], "' (#", missing + 1, " of ", expected.size(), ") not found ");
  if (matched_at.empty()) {
    str_append(&msg, "in the ", count_ops(actual.size()), " recorded\n");
  } else {
    const size_t last = matched_at.back();
    str_append(&msg, "after '", actual[last], "' at index ", last, " (matching '", expected[missing - 1], "')\n");
  }
  // Where the missing op does occur (before the last match), if anywhere: a likely ordering problem.
  std::vector<size_t> elsewhere;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (op_name_matches(expected[missing], actual[i])) elsewhere.push_back(i);
  }
  if (!elsewhere.empty()) {
    str_append(&msg, "(it was called earlier, ", join_indices(elsewhere), ")\n");
  }
  str_append(&msg, "recorded ops (", actual.size(), "), '*' marks the matched ones:\n");
  if (actual.empty()) {
    msg += "  (none)\n";
    return CheckResult::fail(std::move(msg));
  }
  std::vector<int> which(actual.size(), -1);
  for (size_t k = 0; k < matched_at.size(); ++k) which[matched_at[k]] = static_cast<int>(k);
  const size_t width = str_cat(actual.size() - 1).size();
  auto line = [&](size_t i) {
    std::string idx = str_cat(i);
    idx.insert(0, width - idx.size(), ' ');
    str_append(&msg, which[i] >= 0 ? "* [" : "  [", idx, "] ", actual[i]);
    if (which[i] >= 0) str_append(&msg, "  (#", which[i] + 1, ")");
    msg += '\n';
  };
  const size_t after_last = matched_at.empty() ? 0 : matched_at.back() + 1;
  for (size_t i = 0; i < actual.size();) {
    if (which[i] >= 0) {
      line(i++);
      continue;
    }
    size_t end = i;
    while (end < actual.size() && which[end] < 0) ++end;
    const size_t run = end - i;
    const size_t head = i >= after_last ? kContainKeepAfterLast : (i == 0 ? 0 : kContainKeep);
    const size_t tail = end == actual.size() && i < after_last ? 0 : kContainKeep;
    if (run >= head + tail + 2) {
      for (size_t q = i; q < i + head; ++q) line(q);
      str_append(&msg, "  ... ", count_ops(run - head - tail), " ...\n");
      for (size_t q = end - tail; q < end; ++q) line(q);
    } else {
      for (size_t q = i; q < end; ++q) line(q);
    }
    i = end;
  }
  return CheckResult::fail(std::move(msg));
}

CheckResult check_ops_exclude(const std::vector<std::string>& actual, const std::vector<std::string>& excluded) {
  if (CheckResult known = check_op_names_known(excluded); !known.ok) return known;
  std::string msg;
  for (const std::string& pattern : excluded) {
    // Group hits by the actual name (a pattern without overload may hit several).
    std::vector<std::pair<std::string, std::vector<size_t>>> hits;
    for (size_t i = 0; i < actual.size(); ++i) {
      if (!op_name_matches(pattern, actual[i])) continue;
      auto it = std::find_if(hits.begin(), hits.end(), [&](const auto& h) { return h.first == actual[i]; });
      if (it == hits.end()) {
        hits.push_back({actual[i], {i}});
      } else {
        it->second.push_back(i);
      }
    }
    if (hits.empty()) continue;
    str_append(&msg, "excluded op '", pattern, "' was called: ");
    for (size_t k = 0; k < hits.size(); ++k) {
      str_append(&msg, k ? "; " : "", hits[k].first, " ", join_indices(hits[k].second));
    }
    msg += '\n';
  }
  if (msg.empty()) return CheckResult::pass();
  str_append(&msg, "(", count_ops(actual.size()), " recorded)");
  return CheckResult::fail(std::move(msg));
}

CheckResult check_text_equal(std::string_view actual, std::string_view expected) {
  if (actual == expected) return CheckResult::pass();
  std::string diff = line_diff(expected, actual);
  if (diff.empty()) {
    // Same lines: only a trailing newline differs.
    const bool e_nl = !expected.empty() && expected.back() == '\n';
    return CheckResult::fail(str_cat("text differs from the expected (golden) text only in the trailing newline: ",
                                     e_nl ? "expected ends with one, actual does not"
                                          : "actual ends with one, expected does not"));
  }
  return CheckResult::fail(str_cat("text differs from the expected (golden) text (- expected, + actual):\n", diff));
}

}  // namespace opspec
