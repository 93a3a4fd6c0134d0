// op_matchers.cc: Op, OpsInOrder, NoOp.
#include "harness/gtest/op_matchers.h"

#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "harness/expect/op_checks.h"

namespace opspec {
namespace {

std::string format_shape_list(const std::vector<SizeVec>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) str_append(&out, i ? ", " : "", format_sizes(shapes[i]));
  return out + "]";
}

std::string format_dtype_list(const std::vector<DType>& dtypes) {
  std::string out = "[";
  for (size_t i = 0; i < dtypes.size(); ++i) str_append(&out, i ? ", " : "", dtype_short_name(dtypes[i]));
  return out + "]";
}

// The registry behind lookup_described_op. Patterns are few (one per Op() a
// test writes), so it simply grows.
struct DescribedOps {
  std::mutex mu;
  absl::flat_hash_map<std::string, OpPattern> by_description;
};

DescribedOps& described_ops() {
  static DescribedOps* registry = new DescribedOps();
  return *registry;
}

void remember(const OpPattern& pattern) {
  DescribedOps& r = described_ops();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_description.try_emplace(pattern.describe(), pattern);
}

// OpMatcherImpl: Matcher<const RecordedOp&> for one pattern.
class OpMatcherImpl : public ::testing::MatcherInterface<const RecordedOp&> {
 public:
  explicit OpMatcherImpl(OpPattern pattern) : pattern_(std::move(pattern)) {}
  bool MatchAndExplain(const RecordedOp& op, ::testing::MatchResultListener* listener) const override {
    const std::string why = pattern_.mismatch(op);
    if (!why.empty()) *listener << why;
    return why.empty();
  }
  void DescribeTo(std::ostream* os) const override { *os << pattern_.describe(); }
  void DescribeNegationTo(std::ostream* os) const override { *os << "isn't " << pattern_.describe().substr(3); }

 private:
  OpPattern pattern_;
};

bool all_name_only(const std::vector<OpPattern>& patterns) {
  for (const OpPattern& p : patterns) {
    if (p.constrains_tensors()) return false;
  }
  return true;
}

std::vector<std::string> pattern_names(const std::vector<OpPattern>& patterns) {
  std::vector<std::string> out;
  for (const OpPattern& p : patterns) out.push_back(p.name);
  return out;
}

std::string pattern_list(const std::vector<OpPattern>& patterns) {
  std::vector<std::string> parts;
  for (const OpPattern& p : patterns) parts.push_back(p.str());
  return absl::StrJoin(parts, ", ");
}

}  // namespace

bool OpPattern::any_overload() const {
  const size_t ns_end = name.find("::");
  return name.find('.', ns_end == std::string::npos ? 0 : ns_end + 2) == std::string::npos;
}

bool OpPattern::matches(const RecordedOp& op) const { return mismatch(op).empty(); }

std::string OpPattern::mismatch(const RecordedOp& op) const {
  if (!op_name_matches(name, op.name)) return str_cat("name is ", op.name);
  if (shapes && !std::equal(shapes->begin(), shapes->end(), op.shapes.begin(), op.shapes.end())) {
    return str_cat("tensor shapes are ", format_shape_list(op.shapes));
  }
  if (dtypes && *dtypes != op.dtypes) return str_cat("tensor dtypes are ", format_dtype_list(op.dtypes));
  return "";
}

std::string OpPattern::str() const {
  std::string out = name;
  if (any_overload()) out += ".*";
  if (!constrains_tensors()) return out;
  const size_t n = shapes ? shapes->size() : dtypes->size();
  const size_t m = dtypes ? dtypes->size() : n;
  out += '(';
  for (size_t i = 0; i < std::max(n, m); ++i) {
    if (i > 0) out += ", ";
    if (dtypes) out += i < dtypes->size() ? std::string(dtype_short_name((*dtypes)[i])) : "?";
    if (shapes) out += i < shapes->size() ? format_sizes((*shapes)[i]) : "[?]";
  }
  return out + ')';
}

std::string OpPattern::describe() const {
  std::string out = str_cat("is op ", name, any_overload() ? " (any overload)" : "");
  if (shapes) str_append(&out, " with tensor shapes ", format_shape_list(*shapes));
  if (dtypes) str_append(&out, shapes ? " and dtypes " : " with tensor dtypes ", format_dtype_list(*dtypes));
  return out;
}

OpPattern make_op_pattern(std::string_view name) {
  OpPattern p;
  p.name = name.find("::") == std::string_view::npos ? str_cat("aten::", name) : std::string(name);
  return p;
}

OpMatcher::OpMatcher(OpPattern pattern) : pattern_(std::move(pattern)) { remember(pattern_); }

OpMatcher OpMatcher::WithShapes(std::vector<std::vector<int64_t>> shapes) const {
  OpPattern p = pattern_;
  p.shapes.emplace();
  for (const auto& s : shapes) p.shapes->emplace_back(s.begin(), s.end());
  return OpMatcher(std::move(p));
}

OpMatcher OpMatcher::WithDtypes(std::vector<DType> dtypes) const {
  OpPattern p = pattern_;
  p.dtypes = std::move(dtypes);
  return OpMatcher(std::move(p));
}

OpMatcher::operator ::testing::Matcher<const RecordedOp&>() const {
  return ::testing::MakeMatcher(new OpMatcherImpl(pattern_));
}

OpMatcher::operator ::testing::Matcher<RecordedOp>() const {
  return ::testing::MatcherCast<RecordedOp>(::testing::Matcher<const RecordedOp&>(*this));
}

OpMatcher Op(std::string_view name) { return OpMatcher(make_op_pattern(name)); }

OpsSequenceMatcher OpsInOrder(const std::vector<std::string>& names) {
  std::vector<OpPattern> patterns;
  for (const std::string& n : names) patterns.push_back(make_op_pattern(n));
  return ::testing::MakeMatcher(new internal::OpsInOrderImpl(std::move(patterns)));
}

namespace internal {

OpPattern to_op_pattern(std::string_view name) { return make_op_pattern(name); }
OpPattern to_op_pattern(const OpMatcher& matcher) { return matcher.pattern(); }

std::optional<OpPattern> lookup_described_op(const std::string& description) {
  DescribedOps& r = described_ops();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_description.find(description);
  if (it == r.by_description.end()) return std::nullopt;
  return it->second;
}

size_t first_in_order_mismatch(const std::vector<OpPattern>& patterns, const std::vector<RecordedOp>& ops,
                               std::vector<size_t>* matched_at) {
  size_t next = 0;
  for (size_t k = 0; k < patterns.size(); ++k) {
    while (next < ops.size() && !patterns[k].matches(ops[next])) ++next;
    if (next == ops.size()) return k;
    if (matched_at) matched_at->push_back(next);
    ++next;
  }
  return patterns.size();
}

bool OpsInOrderImpl::MatchAndExplain(const std::vector<RecordedOp>& ops,
                                     ::testing::MatchResultListener* listener) const {
  std::vector<size_t> matched_at;
  const size_t missing = first_in_order_mismatch(patterns_, ops, &matched_at);
  if (missing == patterns_.size()) return true;
  if (!listener->IsInterested()) return false;
  if (all_name_only(patterns_)) {
    // The spec runner's wording (ops_contain), so both report alike.
    *listener << check_ops_contain(op_names(ops), pattern_names(patterns_)).message;
    return false;
  }
  *listener << "expected op " << patterns_[missing].str() << " (#" << missing + 1 << " of " << patterns_.size()
            << ") not found";
  if (missing > 0) {
    *listener << " after " << ops[matched_at.back()].str() << " at index " << matched_at.back();
  } else {
    *listener << " in the " << ops.size() << " recorded ops";
  }
  return false;
}

void OpsInOrderImpl::DescribeTo(std::ostream* os) const {
  *os << "contains, in this order (other ops may come between): " << pattern_list(patterns_);
}

void OpsInOrderImpl::DescribeNegationTo(std::ostream* os) const {
  *os << "doesn't contain, in this order: " << pattern_list(patterns_);
}

bool NoOpImpl::MatchAndExplain(const std::vector<RecordedOp>& ops, ::testing::MatchResultListener* listener) const {
  // A misspelt name could never be called: the check would pass whatever ran.
  if (CheckResult known = check_op_names_known(pattern_names(patterns_)); !known.ok) {
    *listener << known.message;
    return false;
  }
  bool ok = true;
  for (const RecordedOp& op : ops) {
    for (const OpPattern& p : patterns_) ok &= !p.matches(op);
  }
  if (ok || !listener->IsInterested()) return ok;
  if (all_name_only(patterns_)) {
    *listener << check_ops_exclude(op_names(ops), pattern_names(patterns_)).message;
    return false;
  }
  bool first_line = true;
  for (const OpPattern& p : patterns_) {
    std::vector<std::string> hits;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (p.matches(ops[i])) hits.push_back(str_cat(ops[i].str(), " at index ", i));
    }
    if (hits.empty()) continue;
    *listener << (first_line ? "" : "\n") << "excluded op " << p.str() << " was called: " << absl::StrJoin(hits, ", ");
    first_line = false;
  }
  return false;
}

void NoOpImpl::DescribeTo(std::ostream* os) const { *os << "has no op matching any of: " << pattern_list(patterns_); }

void NoOpImpl::DescribeNegationTo(std::ostream* os) const {
  *os << "has an op matching one of: " << pattern_list(patterns_);
}

}  // namespace internal
}  // namespace opspec
