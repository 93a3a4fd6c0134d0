#include "runtime/compile/logging.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "runtime/core/did_you_mean.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

constexpr std::string_view kTopics[] = {"all", "fusion", "graph_breaks", "graph_code", "guards", "recompiles"};

// unknown_topic: the first topic in text that no log has, with a suggestion, or "".
std::string unknown_topic(std::string_view text) {
  for (absl::string_view part : absl::StrSplit(absl::string_view(text.data(), text.size()), ',', absl::SkipEmpty())) {
    const std::string_view name(part.data(), part.size());
    if (std::find(std::begin(kTopics), std::end(kTopics), name) != std::end(kTopics)) continue;
    return str_cat("unknown log topic '", shorten(name), "'", did_you_mean(name, kTopics), " (topics: ",
                   absl::StrJoin(kTopics, ", ", [](std::string* out, std::string_view t) { out->append(t); }), ")");
  }
  return "";
}

struct LogTopics {
  std::mutex mu;
  std::string topics = [] {
    const char* env = std::getenv("OPSPEC_LOGS");
    // A typo in the environment must not silently log nothing; it is not
    // worth failing a run over either, so it is said once, on stderr.
    if (env != nullptr) {
      if (const std::string bad = unknown_topic(env); !bad.empty()) std::cerr << "[opspec] OPSPEC_LOGS: " << bad << "\n";
    }
    return std::string(env ? env : "");
  }();
};

LogTopics& log_topics() {
  static LogTopics* topics = new LogTopics();
  return *topics;
}

}  // namespace

bool log_enabled(std::string_view topic) {
  LogTopics& t = log_topics();
  std::lock_guard<std::mutex> lock(t.mu);
  for (absl::string_view part : absl::StrSplit(t.topics, ',')) {
    if (part == absl::string_view(topic.data(), topic.size()) || part == "all") return true;
  }
  return false;
}

void set_log_topics(std::string_view topics) {
  if (const std::string bad = unknown_topic(topics); !bad.empty()) OPSPEC_FAIL("set_log_topics: ", bad);
  LogTopics& t = log_topics();
  std::lock_guard<std::mutex> lock(t.mu);
  t.topics = std::string(topics);
}

void log_message(std::string_view topic, std::string_view message) {
  if (!log_enabled(topic)) return;
  std::cerr << str_cat("[opspec:", topic, "] ", message, "\n");
}

}  // namespace opspec
