// sequence_diff.h: compact diffs of two sequences (op names, lines of golden
// text): what every failing check prints instead of two long dumps.
// See Note [Sequence diff format].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace opspec {

// Note [Sequence diff format]
// A unified diff of expected against actual, computed as a longest common
// subsequence (exact O(N*M) dynamic programming for small inputs, a greedy
// fallback past kSequenceDiffCellLimit cells). One line per element:
//   "  " 3-digit-padded expected index / actual index, then the element, for
//   matching context; "- [i] elem" for an element only in expected (index
//   into expected); "+ [j] elem" for one only in actual (index into actual).
// Equal runs longer than 2*context are shortened to `context` lines on each
// side of the changes and one "  ... N matching ops ..." line ("lines" for
// line_diff). Example (expected add, mul, relu, sum; actual add, sin, relu, sum, exp;
// context 1):
//     [0|0] aten::add.Tensor
//   - [1]   aten::mul.Tensor
//   + [1]   aten::sin.default
//     [2|2] aten::relu.default
//     ... 1 matching op ...
//   + [4]   aten::exp.default
// Index columns are padded to a common width so elements line up. An empty
// result means the sequences are equal.

// kSequenceDiffCellLimit: above this many DP cells (N*M), a cheaper greedy
// alignment is used (still a valid diff, not always minimal).
inline constexpr size_t kSequenceDiffCellLimit = 4'000'000;

// sequence_diff: the diff of expected against actual (see Note [Sequence diff
// format]); equal(expected_item, actual_item) decides matching elements
// (default: string equality); context: equal elements kept around each change.
std::string sequence_diff(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                          const std::function<bool(const std::string& expected, const std::string& actual)>& equal = {},
                          int context = 2);

// line_diff: sequence_diff over the lines of two texts (split on '\n'; a
// trailing newline does not add an empty last line), "matching lines" for elisions.
std::string line_diff(std::string_view expected, std::string_view actual, int context = 3);

}  // namespace opspec
