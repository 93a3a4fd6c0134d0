// op_checks.h: checks over recorded op-name sequences and golden text, with
// the failure messages the gtest macros and the spec runner print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/check_result.h"

namespace opspec {

// check_ops_exact: actual equals expected element by element, where each
// expected entry is a pattern (op_name_matches). Failure:
// "op sequence differs: expected 3 ops, got 4\n" + sequence_diff(expected, actual).
CheckResult check_ops_exact(const std::vector<std::string>& actual, const std::vector<std::string>& expected);

// check_ops_contain: expected (patterns) occurs in actual as an ordered
// subsequence. Failure: "expected op 'aten::mm' (#2 of 3) not found after
// 'aten::add.Tensor' at index 4\n" (or "... not found in the 7 recorded ops"
// when nothing matched yet) followed by the actual ops, numbered, with the
// matched ones marked and long unmatched runs elided.
CheckResult check_ops_contain(const std::vector<std::string>& actual, const std::vector<std::string>& expected);

// check_ops_exclude: no actual op matches any excluded pattern. Failure: one
// line per excluded pattern that matched, "excluded op 'aten::_to_copy' was
// called: aten::_to_copy.default at index 3, 7".
CheckResult check_ops_exclude(const std::vector<std::string>& actual, const std::vector<std::string>& excluded);

// check_text_equal: golden text comparison. Failure: "text differs from the
// expected (golden) text:\n" + line_diff(expected, actual).
CheckResult check_text_equal(std::string_view actual, std::string_view expected);

}  // namespace opspec
