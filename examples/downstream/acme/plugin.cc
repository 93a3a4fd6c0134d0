// plugin.cc: acme as a plugin of the stock `opspec` command:
// `opspec run --load libacme_plugin.so specs/`. The plugin holds acme's
// sources and this init; opspec's symbols come from the command when it loads
// the plugin (See Note [Plugins] in harness/cli/plugin.h).
#include "acme/acme.h"
#include "harness/cli/plugin.h"

OPSPEC_PLUGIN_INIT { acme::register_all(); }
