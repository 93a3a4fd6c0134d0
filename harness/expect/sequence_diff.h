// sequence_diff.h: compact diffs of two sequences (op names, lines of golden
// text): what every failing check prints instead of two long dumps.
// See Note [Sequence diff format].
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opspec {

// Note [Sequence diff format]
// A unified diff of expected against actual: a longest common subsequence
// (exact O(N*M) dynamic programming on what lies between the common prefix
// and suffix; past kSequenceDiffCellLimit cells that middle is shown as
// removed then added, still a valid diff). One line per element:
//   "  [i|j] elem"  in both (i: index in expected, j: in actual), as context;
//   "- [i]   elem"  only in expected;
//   "+ [j]   elem"  only in actual (within a change, removals come first).
// Tags are padded to a common width so the elements line up. Equal runs
// keep `context` elements next to each change; the rest become one line
// "  ... N matching ops ..." ("lines" in line_diff), but only when that hides
// at least two. A run of more than 40 removals (or additions) keeps its first
// 30 and last 5: "  ... N more ops only in expected ...". sequence_diff
// indexes from 0, line_diff numbers lines from 1. Example, context 1,
// expected add mul relu sum exp neg abs sin, actual add sub relu sum exp neg abs sin cos:
//     [0|0] aten::add.Tensor
//   - [1]   aten::mul.Tensor
//   + [1]   aten::sub.Tensor
//     [2|2] aten::relu
//     ... 4 matching ops ...
//     [7|7] aten::sin
//   + [8]   aten::cos
// Equal sequences give "".

// kSequenceDiffCellLimit: above this many DP cells (N*M of the differing
// middle), the middle is shown as removed then added (not minimal, but cheap).
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

// align_sequences: the (expected index, actual index) pairs a sequence_diff
// shows as matching, in increasing order of both (the alignment itself, for
// callers that compare the matched elements further).
std::vector<std::pair<size_t, size_t>> align_sequences(
    const std::vector<std::string>& expected, const std::vector<std::string>& actual,
    const std::function<bool(const std::string& expected, const std::string& actual)>& equal = {});

}  // namespace opspec
