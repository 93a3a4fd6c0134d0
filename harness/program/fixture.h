// fixture.h: the fixture registry: named C++ programs that spec cases run
// (`fixture: mlp`) and that inline programs call (`y = mlp(x)`).
// See Note [Fixtures].
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/nn/module.h"

namespace opspec {

// Note [Fixtures]
// A fixture is a C++ program registered by name. Registration gives a factory
// (`make`) rather than the program itself: the runner seeds the generator and
// calls make() once per case, so a module's parameters are created once, from
// the case's seed, and stay the same across the eager run and every compiled
// call. A fixture also declares its default inputs, so a spec may name it
// without an `inputs:` section. A module fixture (OPSPEC_MODULE_FIXTURE) makes
// an nn::Module instead, whose call on the single input is the program; a spec
// can then compile the module itself (`compile: {module: true}`, as
// torch.compile(model) does) rather than a function that calls it.

// FixtureInput: one default input of a fixture (used when a case gives none).
struct FixtureInput {
  std::string name;
  SizeVec shape;
  DType dtype = DType::kFloat32;
  std::string init = "randn";  // randn | rand | zeros | ones | arange
};

// FixtureFn: the program: tensors in (in FixtureInput order), tensors out.
using FixtureFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// MakeModule: builds a module fixture's module (its parameters drawn from the
// current generator state).
using MakeModule = std::function<std::shared_ptr<nn::Module>()>;

// Fixture: a registered program.
struct Fixture {
  std::string name;
  std::string description;
  std::vector<FixtureInput> inputs;
  // make: builds the program (creating parameters with the current generator state).
  std::function<FixtureFn()> make;
  std::string file;  // where it was registered, for `opspec list`
  int line = 0;
  // make_module: for a module fixture, builds the module; make() then calls
  // module_program(make_module()). Empty for a plain fixture.
  MakeModule make_module;
};

// register_fixture: adds f; a second fixture of the same name throws,
// naming both registrations ("fixture 'mlp' is registered twice: at ...").
void register_fixture(Fixture f);
// find_fixture: the fixture called name, or null. Throws when two
// OPSPEC_FIXTUREs share a name (reported here, since a static initializer
// that threw would abort the program before main).
const Fixture* find_fixture(std::string_view name);
// list_fixtures: every registered fixture, sorted by name; throws as find_fixture.
std::vector<const Fixture*> list_fixtures();

// module_program: the program that calls module on its single input, through
// operator() so forward hooks (DebugMode's module boundaries) see it.
FixtureFn module_program(std::shared_ptr<nn::Module> module);

namespace internal {
// module_fixture: the Fixture OPSPEC_MODULE_FIXTURE registers.
Fixture module_fixture(std::string name, std::string description, MakeModule make_module,
                       std::vector<FixtureInput> inputs);

// FixtureRegistrar: registers a fixture from a static initializer (OPSPEC_FIXTURE).
struct FixtureRegistrar {
  FixtureRegistrar(Fixture f, std::source_location loc = std::source_location::current());
};
}  // namespace internal

}  // namespace opspec

// OPSPEC_FIXTURE(name, description, inputs, make): registers a fixture at
// start-up. Put it in a source file linked into the executable (or an OBJECT
// library), not a static library, so the linker keeps it. Example:
//   OPSPEC_FIXTURE(gelu_chain, "gelu(x) * x + 1", {{"x", {8, 8}}},
//                  [] { return [](const std::vector<Tensor>& in) { ... }; });
// (Variadic so that braces with commas in inputs need no extra parentheses.)
#define OPSPEC_FIXTURE(name, description, ...)                                                \
  static ::opspec::internal::FixtureRegistrar opspec_fixture_registrar_##name(::opspec::Fixture{ \
      #name, description, __VA_ARGS__})

// OPSPEC_MODULE_FIXTURE(name, description, make_module, inputs): registers a
// module fixture: make_module returns a std::shared_ptr to an nn::Module
// whose call on the single input is the program. Example:
//   OPSPEC_MODULE_FIXTURE(mlp, "Linear -> gelu -> Linear", [] { return std::make_shared<Mlp>(16, 32); },
//                         {{"x", {8, 16}}});
// (A comma outside parentheses in make_module, as in `std::map<int, int>`,
// needs the lambda wrapped in parentheses.)
#define OPSPEC_MODULE_FIXTURE(name, description, make_module, ...)                                \
  static ::opspec::internal::FixtureRegistrar opspec_fixture_registrar_##name(                    \
      ::opspec::internal::module_fixture(#name, description, make_module,                         \
                                         std::vector<::opspec::FixtureInput> __VA_ARGS__))
