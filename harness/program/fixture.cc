// fixture.cc: the fixture registry. See Note [Fixtures].
#include "harness/program/fixture.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace opspec {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, Fixture, std::less<>> fixtures;
};

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
  OPSPEC_CHECK(it == r.fixtures.end(), "register_fixture: fixture '", f.name, "' is already registered (at ",
               it == r.fixtures.end() ? std::string() : absl::StrCat(it->second.file, ":", it->second.line), ")");
  std::string name = f.name;
  r.fixtures.emplace(std::move(name), std::move(f));
}

const Fixture* find_fixture(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fixtures.find(name);
  return it == r.fixtures.end() ? nullptr : &it->second;
}

std::vector<const Fixture*> list_fixtures() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
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
  register_fixture(std::move(f));
}
}  // namespace internal

}  // namespace opspec
