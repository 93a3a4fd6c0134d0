// fixture.cc: the fixture registry. See Note [Fixtures].
#include "harness/program/fixture.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"

namespace opspec {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, Fixture, std::less<>> fixtures;
  // Names registered twice by OPSPEC_FIXTURE: a static initializer cannot
  // throw (the program would abort before main), so the clash is kept and
  // every lookup reports it.
  std::vector<std::string> clashes;
};

// check_no_clashes: throws the kept clashes, if any (r.mu held).
void check_no_clashes(const Registry& r) {
  if (r.clashes.empty()) return;
  std::string message;
  for (const std::string& c : r.clashes) absl::StrAppend(&message, message.empty() ? "" : "\n", c);
  throw Error(message);
}

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: fixtures may be looked up at exit
  return *r;
}

}  // namespace

void register_fixture(Fixture f) {
  OPSPEC_CHECK(!f.name.empty(), "register_fixture: a fixture needs a name");
  OPSPEC_CHECK(static_cast<bool>(f.make), "register_fixture: fixture '", f.name, "' has no make function");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fixtures.find(f.name);
  OPSPEC_CHECK(it == r.fixtures.end(), "fixture '", f.name, "' is registered twice: at ", it->second.file, ":",
               it->second.line, " and at ", f.file.empty() ? std::string("<unknown>") : str_cat(f.file, ":", f.line),
               "; fixture names are global (opspec's own included): rename one");
  std::string name = f.name;
  r.fixtures.emplace(std::move(name), std::move(f));
}

const Fixture* find_fixture(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  check_no_clashes(r);
  auto it = r.fixtures.find(name);
  return it == r.fixtures.end() ? nullptr : &it->second;
}

FixtureFn module_program(std::shared_ptr<nn::Module> module) {
  OPSPEC_CHECK(module != nullptr, "module_program: the module is null");
  return [module = std::move(module)](const std::vector<Tensor>& in) {
    OPSPEC_CHECK(in.size() == 1, "module '", module->type_name(), "' takes one input, got ", in.size());
    return std::vector<Tensor>{(*module)(in[0])};
  };
}

namespace internal {

Fixture module_fixture(std::string name, std::string description, MakeModule make_module,
                       std::vector<FixtureInput> inputs) {
  Fixture f{std::move(name), std::move(description), std::move(inputs)};
  f.make = [make_module] { return module_program(make_module()); };
  f.make_module = std::move(make_module);
  return f;
}

}  // namespace internal

std::vector<const Fixture*> list_fixtures() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  check_no_clashes(r);
  std::vector<const Fixture*> out;
  for (const auto& [name, f] : r.fixtures) out.push_back(&f);
  return out;
}

namespace internal {
FixtureRegistrar::FixtureRegistrar(Fixture f, std::source_location loc) {
  if (f.file.empty()) {
    f.file = loc.file_name();
    f.line = static_cast<int>(loc.line());
  }
  try {
    register_fixture(std::move(f));
  } catch (const Error& e) {  // See Registry::clashes
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.clashes.push_back(e.what());
  }
}
}  // namespace internal

}  // namespace opspec
