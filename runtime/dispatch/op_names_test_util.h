// op_names_test_util.h: OpNames, the op-recording dispatch mode tests share.
#pragma once

#include <string>
#include <vector>

#include "runtime/dispatch/mode.h"

namespace opspec::test_util {

// OpNames: a dispatch mode that records the name of every op it sees and runs
// it (what a TorchDispatchMode logging `func` does); a test asserts on names.
class OpNames : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    names.push_back(call.name());
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
};

}  // namespace opspec::test_util
