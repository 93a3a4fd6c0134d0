// check_result.h: CheckResult, the outcome of one harness check (an op
// sequence, a tolerance, a FileCheck run): pass, or fail with a message
// ready to print. Shared by the gtest macros and the spec runner.
#pragma once

#include <string>
#include <utility>

namespace opspec {

// CheckResult: ok, or not ok with a human-readable explanation.
struct CheckResult {
  bool ok = true;
  std::string message;  // empty when ok

  explicit operator bool() const { return ok; }
  static CheckResult pass() { return {}; }
  static CheckResult fail(std::string message) { return {false, std::move(message)}; }
};

}  // namespace opspec
