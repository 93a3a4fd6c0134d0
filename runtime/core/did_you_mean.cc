#include "runtime/core/did_you_mean.h"

#include <algorithm>
#include <vector>

namespace opspec {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the distance matrix: a swap looks two rows back.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

size_t max_suggestion_edits(std::string_view word) {
  // One character says too little to guess from; a huge word is hostile
  // input, not a typo, and would cost a long distance matrix per candidate.
  if (word.size() <= 1 || word.size() > 64) return 0;
  return word.size() <= 5 ? 1 : 2;
}

}  // namespace opspec
