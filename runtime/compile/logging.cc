#include "runtime/compile/logging.h"

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include "absl/strings/str_split.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

struct LogTopics {
  std::mutex mu;
  std::string topics = [] {
    const char* env = std::getenv("OPSPEC_LOGS");
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
  LogTopics& t = log_topics();
  std::lock_guard<std::mutex> lock(t.mu);
  t.topics = std::string(topics);
}

void log_message(std::string_view topic, std::string_view message) {
  if (!log_enabled(topic)) return;
  std::cerr << str_cat("[opspec:", topic, "] ", message, "\n");
}

}  // namespace opspec
