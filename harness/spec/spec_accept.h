// spec_accept.h: `opspec run --accept`: rewrites the golden `debug_string:`
// texts of spec cases in their YAML file, as expecttest's accept mode
// rewrites string literals. See Note [Accepting debug strings].
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opspec::spec {

// Note [Accepting debug strings]
// Only the value of each named case's `expect.debug_string` changes; every
// other byte of the file (comments, key order, other cases, blank lines)
// stays. The new value is written as a literal block scalar indented two
// spaces past its key, with the chomping indicator that keeps the text exact
// (`|` one final newline, `|-` none, `|+` several) and an indentation
// indicator (`|2`) when the text starts with a space, a tab or an empty line.
// Text a block scalar cannot hold exactly (carriage returns, control
// characters) is written as a double-quoted scalar with escapes instead. A
// case without the key gets one at the end of its `expect:` mapping (and an
// `expect:` at the end of the case when it has none); `opspec run --accept`
// asks only for cases that have the key (an empty `debug_string:` opts in).
// A case or a non-empty `expect:` in flow style ({...}) is refused: a block
// scalar cannot go there. A case run on several devices has one golden: their
// texts must agree. The result is parsed again before anything is written:
// each case must read back exactly its new text and every other value as it
// was. A case refused for any of these is refused alone; the others go in.

// GoldenUpdate: one run's new golden for a case.
struct GoldenUpdate {
  std::string case_name;  // the case's `name:` in the file
  std::string run_id;     // suite::case@device, to say which run a message means (or "")
  std::string text;
};

// RewrittenGoldens: a file's new text and, for each update in order, ok or
// why its case was left as is ("FILE:LINE:COL: error: ...").
struct RewrittenGoldens {
  std::string text;
  std::vector<absl::Status> outcomes;
};

// rewrite_goldens: the new text of a spec file (yaml_text, named file_name in
// messages) with each case's debug_string set to its updates' text. A case is
// refused alone (its outcomes) when its name is unknown or ambiguous, its
// runs' texts differ, it or its expect is in flow style, or the rewrite would
// not read back; an error only for YAML that does not parse (or a rewrite no
// single case can be blamed for).
absl::StatusOr<RewrittenGoldens> rewrite_goldens(std::string_view yaml_text, std::string_view file_name,
                                                 const std::vector<GoldenUpdate>& updates);

// accept_goldens: rewrite_goldens on the file, written in place (after copying
// the original to `<file>.orig`) when any case took a new text; the outcomes.
// Nothing is written on an error.
absl::StatusOr<std::vector<absl::Status>> accept_goldens(const std::string& file,
                                                         const std::vector<GoldenUpdate>& updates);

// rewrite_debug_strings / accept_debug_strings: the same, all or nothing:
// the first refused case's error, and then nothing is written. A name given
// twice (a case run on several devices) is one case.
absl::StatusOr<std::string> rewrite_debug_strings(
    std::string_view yaml_text, std::string_view file_name,
    const std::vector<std::pair<std::string, std::string>>& case_to_new_text);
absl::Status accept_debug_strings(const std::string& file,
                                  const std::vector<std::pair<std::string, std::string>>& case_to_new_text);

}  // namespace opspec::spec
