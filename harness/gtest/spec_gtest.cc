// spec_gtest.cc: register_spec_tests.
#include "harness/gtest/spec_gtest.h"

#include <deque>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "harness/spec/runner.h"
#include "harness/spec/spec_loader.h"

namespace opspec {
namespace {

// The suites must outlive the registered tests, which point into them.
std::deque<spec::SuiteSpec>& loaded_suites() {
  static auto* suites = new std::deque<spec::SuiteSpec>();
  return *suites;
}

class SpecCaseTest : public testing::Test {
 public:
  explicit SpecCaseTest(spec::CaseRef ref) : ref_(ref) {}
  void TestBody() override {
    spec::CaseResult r = spec::run_case(ref_);
    switch (r.outcome) {
      case spec::Outcome::kPassed: break;
      case spec::Outcome::kFailed:
        ADD_FAILURE_AT(r.file.c_str(), r.line) << r.id << " failed:\n" << r.message;
        break;
      case spec::Outcome::kSkipped: GTEST_SKIP() << r.message; break;
      case spec::Outcome::kXfailed: RecordProperty("xfail", r.message.substr(0, r.message.find('\n'))); break;
    }
  }

 private:
  spec::CaseRef ref_;
};

class LoadErrorTest : public testing::Test {
 public:
  explicit LoadErrorTest(std::string message) : message_(std::move(message)) {}
  void TestBody() override { ADD_FAILURE() << message_; }

 private:
  std::string message_;
};

}  // namespace

std::string gtest_name(std::string_view name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out.empty() ? "_" : out;
}

int register_spec_tests(const std::vector<std::string>& paths) {
  int n = 0;
  absl::StatusOr<std::vector<std::string>> files = spec::find_spec_files(paths);
  if (!files.ok()) {
    std::string message(files.status().message());
    testing::RegisterTest("opspec_specs", "load", nullptr, nullptr, __FILE__, __LINE__,
                          [message]() -> testing::Test* { return new LoadErrorTest(message); });
    return 1;
  }
  for (const std::string& file : *files) {
    absl::StatusOr<spec::SuiteSpec> suite = spec::load_suite_file(file);
    if (!suite.ok()) {
      std::string message(suite.status().message());
      testing::RegisterTest(gtest_name(std::filesystem::path(file).stem().string()).c_str(), "load", nullptr, nullptr,
                            file.c_str(), 1, [message]() -> testing::Test* { return new LoadErrorTest(message); });
      ++n;
      continue;
    }
    const spec::SuiteSpec& s = loaded_suites().emplace_back(*std::move(suite));
    for (const spec::CaseRef& ref : spec::expand_cases(s)) {
      std::string test = gtest_name(ref.spec->name);
      if (ref.device != "cpu" || ref.spec->devices.size() > 1) str_append(&test, "_", gtest_name(ref.device));
      testing::RegisterTest(gtest_name(s.name).c_str(), test.c_str(), nullptr, nullptr, s.file.c_str(),
                            ref.spec->where.line, [ref]() -> testing::Test* { return new SpecCaseTest(ref); });
      ++n;
    }
  }
  return n;
}

}  // namespace opspec
