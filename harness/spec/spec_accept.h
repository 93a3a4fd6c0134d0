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
// `expect:` at the end of the case when it has none). The result is parsed
// again before anything is written, and each case must read back exactly
// its new text, or nothing is written.

// rewrite_debug_strings: the new text of a spec file (yaml_text, named
// file_name in messages) with the debug_string of each case named in
// case_to_new_text set to its text. Errors: an unknown or ambiguous case
// name, YAML that does not parse, a case or expect in flow style ({...}).
absl::StatusOr<std::string> rewrite_debug_strings(
    std::string_view yaml_text, std::string_view file_name,
    const std::vector<std::pair<std::string, std::string>>& case_to_new_text);

// accept_debug_strings: rewrite_debug_strings on the file, in place, after
// copying the original to `<file>.orig`. Nothing is written when there is
// nothing to accept or on any error.
absl::Status accept_debug_strings(const std::string& file,
                                  const std::vector<std::pair<std::string, std::string>>& case_to_new_text);

}  // namespace opspec::spec
