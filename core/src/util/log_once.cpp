#include "util/log_once.hpp"

#include <spdlog/details/log_msg.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace blis {

namespace {

// Passes a message to the sinks it wraps unless the same text at the same
// level passed before.
class OnceSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit OnceSink(std::vector<spdlog::sink_ptr> inner) : inner_(std::move(inner)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!seen_.emplace(msg.level, std::string(msg.payload.data(), msg.payload.size())).second) return;
    for (const auto& s : inner_)
      if (s->should_log(msg.level)) s->log(msg);
  }
  void flush_() override {
    for (const auto& s : inner_) s->flush();
  }

 private:
  std::vector<spdlog::sink_ptr> inner_;
  std::set<std::pair<spdlog::level::level_enum, std::string>> seen_;
};

}  // namespace

LogOnce::LogOnce() {
  auto& sinks = spdlog::default_logger_raw()->sinks();
  saved_ = sinks;
  sinks = {std::make_shared<OnceSink>(saved_)};
}

LogOnce::~LogOnce() { spdlog::default_logger_raw()->sinks() = saved_; }

}  // namespace blis
