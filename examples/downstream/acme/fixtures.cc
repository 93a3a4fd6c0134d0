// fixtures.cc: acme's fixtures: C++ programs specs run by name (`fixture:
// acme_residual`) and inline programs call (`y = acme_residual(x)`). This file
// is compiled into each executable (an OBJECT library), so the linker keeps
// the static registrars. See Note [Fixtures] in harness/program/fixture.h.
#include "acme/acme.h"
#include "harness/program/fixture.h"
#include "runtime/ops/ops.h"

namespace {

using opspec::Tensor;
namespace ops = opspec::ops;

// acme_residual: x + 0.5 * relu(x @ w), with w created once per case from the
// case's seed (make() runs after the runner seeds the generator).
opspec::FixtureFn make_residual() {
  const Tensor w = ops::randn({8, 8});
  return [w](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{acme::scaled_add(in[0], ops::relu(ops::mm(in[0], w)), 0.5)};
  };
}

}  // namespace

OPSPEC_FIXTURE(acme_residual, "x + 0.5 * relu(x @ w): acme::scaled_add after a matmul", {{"x", {4, 8}}},
               &make_residual);
