// printing_mode: the README's example. A PrintingMode sees every aten op,
// including factory functions, and linear decomposes into t + addmm below it.
// With --check it compares what it saw against PyTorch's sequence and exits 1
// on any difference (ci/run-specs runs it that way).
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace {

// PrintingMode: prints each op with its arguments, then runs it.
class PrintingMode : public opspec::DispatchMode {
 public:
  bool dispatch(opspec::OpCall& call) override {
    std::cout << call.name() << "(" << call.op().schema().format_arguments(call.stack()) << ")\n";
    seen.push_back(call.name());
    call.proceed();  // like `func(*args, **kwargs)`: runs the op below this mode
    return true;
  }
  std::vector<std::string> seen;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace opspec;
  const bool check = argc > 1 && std::strcmp(argv[1], "--check") == 0;
  PrintingMode mode;
  {
    ModeGuard guard(mode);
    Tensor x = ops::randn({8, 4});
    Tensor w = ops::randn({3, 4});
    Tensor b = ops::zeros({3});
    Tensor y = ops::relu(ops::linear(x, w, b));
    const double total = ops::sum(y).item().to_double();
    std::cout << "sum = " << total << "\n";
  }
  const std::vector<std::string> expected = {"aten::randn", "aten::randn",   "aten::zeros", "aten::t",
                                             "aten::addmm", "aten::relu",    "aten::sum",   "aten::_local_scalar_dense"};
  if (check && mode.seen != expected) {
    std::cerr << "printing_mode: unexpected op sequence\n";
    return 1;
  }
  return 0;
}
