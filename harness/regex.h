// regex.h: Regex, the one regex engine behind every pattern a user writes
// (expect.error, FileCheck's {{...}} and [[X:...]], --filter). RE2 underneath.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace re2 {
class RE2;
}

namespace opspec {

// Note [Regexes]
// User patterns are compiled by RE2: matching takes time linear in the text,
// never recurses and has bounded memory, so no pattern and no text (a 30k
// character error message, `(a|aa)*b`, 20,000 nested groups) can hang or
// crash a run; std::regex did all three. RE2's syntax is ECMAScript's and
// Perl's (classes \d \w \s, [[:alpha:]], non-greedy and non-capturing groups)
// without backreferences and lookaround; a pattern RE2 rejects is a clear
// error naming what it found. Patterns are UTF-8; text need not be.

// RegexMatch: where a match is, and its capture groups (nullopt: did not take part).
struct RegexMatch {
  size_t pos = 0;
  size_t len = 0;
  std::vector<std::optional<std::string_view>> groups;  // groups[0] is the whole match
};

// Regex: a compiled pattern; cheap to copy (the compiled form is shared, immutable).
class Regex {
 public:
  // compile: pattern compiled, or InvalidArgument with RE2's reason
  // ("missing ): (((a"); patterns longer than kMaxPatternBytes are refused.
  static absl::StatusOr<Regex> compile(std::string_view pattern);
  static constexpr size_t kMaxPatternBytes = 64 * 1024;

  // search: whether the pattern matches somewhere in text.
  bool search(std::string_view text) const;
  // find: the first match inside text[begin, end); text is the context of ^
  // and $ (they match only at its start and end). With groups, fills
  // match.groups with the whole match and every capture group.
  std::optional<RegexMatch> find(std::string_view text, size_t begin, size_t end, bool groups = false) const;
  // replace_all: text with every match replaced by rewrite (\1 names a group).
  std::string replace_all(std::string_view text, std::string_view rewrite) const;

  // group_count: the number of capture groups.
  int group_count() const;
  // group_index: the number of the group named name ((?P<name>...)), or -1.
  int group_index(const std::string& name) const;
  // pattern: the source it was compiled from.
  const std::string& pattern() const;

 private:
  explicit Regex(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {}
  std::shared_ptr<const re2::RE2> re_;
};

// regex_quote: s as a pattern matching it literally.
std::string regex_quote(std::string_view s);

}  // namespace opspec
