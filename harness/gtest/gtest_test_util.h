// gtest_test_util.h: helpers for opspec_gtest's own tests: capture the
// failure a macro reports, to check its whole message.
#pragma once

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace opspec::testing_util {

// failure_of: runs fn with gtest's reporter intercepted and returns the
// message of the single failure it reported; adds a (real) failure when fn
// reported no failure, several, or one of the other kind (fatal/non-fatal).
inline std::string failure_of(const std::function<void()>& fn, bool fatal) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    fn();
  }
  if (results.size() != 1) {
    ADD_FAILURE() << "expected exactly one failure, got " << results.size();
    return results.size() > 0 ? results.GetTestPartResult(0).message() : "";
  }
  const ::testing::TestPartResult& r = results.GetTestPartResult(0);
  EXPECT_EQ(r.fatally_failed(), fatal) << r.message();
  return r.message();
}

// nonfatal_failure_of / fatal_failure_of: failure_of for EXPECT_ / ASSERT_ macros.
inline std::string nonfatal_failure_of(const std::function<void()>& fn) { return failure_of(fn, false); }
inline std::string fatal_failure_of(const std::function<void()>& fn) { return failure_of(fn, true); }

// ScopedEnv: sets (or, with nullopt, unsets) an environment variable for
// its lifetime, restoring the previous state after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace opspec::testing_util
