// logging.h: the compiler's opt-in logs, selected by the environment variable
// OPSPEC_LOGS (comma-separated: graph_breaks, recompiles, graph_code, guards, fusion),
// as PyTorch's TORCH_LOGS. Messages go to stderr prefixed "[opspec:<topic>] ".
#pragma once

#include <string_view>

namespace opspec {

// log_enabled: whether topic is in OPSPEC_LOGS (read once, at first use; an
// unknown topic there is reported once on stderr) or was enabled with set_log_topics.
bool log_enabled(std::string_view topic);
// set_log_topics: replaces the enabled topics ("graph_breaks,recompiles"); for
// tests and tools. Throws on an unknown topic, naming the known ones.
void set_log_topics(std::string_view topics);
// log_message: writes message under topic when the topic is enabled.
void log_message(std::string_view topic, std::string_view message);

}  // namespace opspec
