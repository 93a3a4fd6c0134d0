// regex.cc: Regex over RE2. See Note [Regexes] in regex.h.
#include "harness/regex.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace opspec {

absl::StatusOr<Regex> Regex::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("pattern too long (", pattern.size(), " bytes; at most ", kMaxPatternBytes, ")"));
  }
  RE2::Options options;
  options.set_log_errors(false);          // errors are returned, not printed
  options.set_max_mem(int64_t{64} << 20);  // a huge pattern fails to compile instead of using gigabytes
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    std::string why = re->error();
    const auto has = [&](std::string_view x) { return pattern.find(x) != std::string_view::npos; };
    if (re->error_code() == RE2::ErrorBadEscape && has("\\") &&
        std::any_of(pattern.begin(), pattern.end(), [](char c) { return c >= '1' && c <= '9'; })) {
      absl::StrAppend(&why, " (RE2 has no backreferences; see Note [Regexes])");
    } else if (has("(?=") || has("(?!") || has("(?<=") || has("(?<!")) {
      absl::StrAppend(&why, " (RE2 has no lookahead or lookbehind; see Note [Regexes])");
    }
    return absl::InvalidArgumentError(why);
  }
  return Regex(std::move(re));
}

bool Regex::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

std::optional<RegexMatch> Regex::find(std::string_view text, size_t begin, size_t end, bool groups) const {
  if (begin > end || end > text.size()) return std::nullopt;
  const int n = groups ? 1 + re_->NumberOfCapturingGroups() : 1;
  std::vector<re2::StringPiece> sub(static_cast<size_t>(n));
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), begin, end, RE2::UNANCHORED, sub.data(), n)) {
    return std::nullopt;
  }
  RegexMatch m;
  m.pos = static_cast<size_t>(sub[0].data() - text.data());
  m.len = sub[0].size();
  if (groups) {
    m.groups.reserve(sub.size());
    for (const re2::StringPiece& s : sub) {
      m.groups.push_back(s.data() == nullptr ? std::nullopt
                                             : std::optional<std::string_view>(std::string_view(s.data(), s.size())));
    }
  }
  return m;
}

std::string Regex::replace_all(std::string_view text, std::string_view rewrite) const {
  std::string out(text);
  RE2::GlobalReplace(&out, *re_, re2::StringPiece(rewrite.data(), rewrite.size()));
  return out;
}

int Regex::group_count() const { return re_->NumberOfCapturingGroups(); }

int Regex::group_index(const std::string& name) const {
  const auto& names = re_->NamedCapturingGroups();
  auto it = names.find(name);
  return it == names.end() ? -1 : it->second;
}

const std::string& Regex::pattern() const { return re_->pattern(); }

std::string regex_quote(std::string_view s) { return RE2::QuoteMeta(re2::StringPiece(s.data(), s.size())); }

}  // namespace opspec
