// did_you_mean.h: the one rule for suggesting a known name in place of a
// misspelled one, so spec keys, program ops and FileCheck directives agree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/core/error.h"

namespace opspec {

// edit_distance: the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two adjacent characters
// (the commonest typo) cost one edit each.
size_t edit_distance(std::string_view a, std::string_view b);

// max_suggestion_edits: how many edits a suggestion for `word` may be away:
// 0 (suggest nothing) for one character or more than 64, 1 for up to five
// characters, 2 from six.
size_t max_suggestion_edits(std::string_view word);

// closest_match: the candidate nearest to `word` within
// max_suggestion_edits(word), the first of equally near ones; "" if none is.
// The result views an element of `candidates`.
template <typename Range>
std::string_view closest_match(std::string_view word, const Range& candidates) {
  const size_t limit = max_suggestion_edits(word);
  std::string_view best;
  if (limit == 0) return best;
  size_t best_edits = limit + 1;
  for (const auto& candidate : candidates) {
    const std::string_view c = candidate;
    // The length difference alone costs that many edits.
    if ((c.size() > word.size() ? c.size() - word.size() : word.size() - c.size()) >= best_edits) continue;
    const size_t edits = edit_distance(word, c);
    if (edits < best_edits) best_edits = edits, best = c;
  }
  return best;
}

// did_you_mean: "; did you mean 'x'?" for closest_match(word, candidates), or
// "" when nothing is close.
template <typename Range>
std::string did_you_mean(std::string_view word, const Range& candidates) {
  const std::string_view best = closest_match(word, candidates);
  return best.empty() ? std::string() : str_cat("; did you mean '", best, "'?");
}

}  // namespace opspec
