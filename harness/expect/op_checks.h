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
// subsequence (earliest matches). Failure:
//   "expected op 'aten::sin' (#2 of 3) not found after 'aten::add.Tensor' at index 1 (matching 'aten::add')\n"
//   ("... not found in the 4 ops recorded\n" when nothing matched), then
//   "(it was called earlier, at index 0)\n" when it occurs before that point,
//   "recorded ops (4), '*' marks the matched ones:\n" and one line per op,
//   "* [1] aten::add.Tensor  (#1)\n" or "  [2] aten::mm\n", long unmatched runs
//   elided to "  ... 47 ops ...\n" (15 ops kept after the last match).
CheckResult check_ops_contain(const std::vector<std::string>& actual, const std::vector<std::string>& expected);

// check_ops_exclude: no actual op matches any excluded pattern. Failure: one
// line per excluded pattern that matched, grouped by the op's full name, then
// the count: "excluded op 'add' was called: aten::add.Tensor at index 1;
// aten::add.Scalar at indices 3, 5\n(7 ops recorded)".
CheckResult check_ops_exclude(const std::vector<std::string>& actual, const std::vector<std::string>& excluded);

// check_op_names_known: every pattern names a registered op (names_an_op).
// Failure: "'aten::_to_cpy' names no registered op; did you mean
// 'aten::_to_copy'?" per unknown name. check_ops_exclude fails with it (an
// unknown name could never be called, so the check would pass whatever ran);
// check_ops_exact and check_ops_contain put it before their diff.
CheckResult check_op_names_known(const std::vector<std::string>& patterns);

// check_text_equal: golden text comparison. Failure: "text differs from the
// expected (golden) text (- expected, + actual):\n" + line_diff(expected,
// actual); when only a trailing newline differs, a line saying which side has it.
CheckResult check_text_equal(std::string_view actual, std::string_view expected);

}  // namespace opspec
