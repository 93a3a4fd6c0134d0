// plugin.h: user ops, kernels, fixtures and backends loaded into the stock
// `opspec` command at run time: `opspec run --load libmyops.so specs/`.
// See Note [Plugins].
#pragma once

#include <string>

#include "absl/status/status.h"

// Note [Plugins]
// A plugin is a shared library (CMake: opspec_add_plugin, a MODULE library)
// built against opspec's headers but not its libraries: its undefined
// symbols resolve to the `opspec` executable's own at dlopen, which exports
// them (ENABLE_EXPORTS) and links opspec's libraries whole, so there is one
// dispatcher, one fixture registry and one backend registry. Loading runs the
// plugin's static registrars (OPSPEC_FIXTURE, ...) and then its
// OPSPEC_PLUGIN_INIT function, if it has one, before any spec file is read
// (the loader resolves op names while parsing programs). Workers are forked
// after loading, so they have the plugin too. A plugin must be built by the
// same compiler and flags as opspec (C++ has no stable ABI); a linked runner
// (opspec_add_spec_runner) has no such constraint.

// OPSPEC_PLUGIN_INIT: defines the function `opspec run --load` (or bench, list, show) calls once
// after loading the plugin: `OPSPEC_PLUGIN_INIT { acme::register_all(); }`.
#define OPSPEC_PLUGIN_INIT extern "C" __attribute__((visibility("default"))) void opspec_plugin_init()

namespace opspec::cli {

// load_plugin: dlopens path and calls its opspec_plugin_init, if any. An
// error names the path and the loader's reason (a missing file, an undefined
// symbol: a plugin built against another opspec), or what the init threw.
absl::Status load_plugin(const std::string& path);

}  // namespace opspec::cli
