// Logger: JSON lines ({"ts","level","msg",...fields}) to a sink. Every line passes through a
// Redactor first, so a secret value registered with it never reaches the sink even if a caller
// passes it by mistake; fields whose names look secret (token, secret, jit, password,
// authorization, key) are always printed as "***".
// Thread-safety: Logger, Redactor and the sinks here are safe to share between threads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"

namespace mvr {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
const char* LogLevelName(LogLevel level);
// "debug", "info", "warn", "error"; anything else is info.
LogLevel ParseLogLevel(std::string_view name);

// Replaces every registered secret value in a string with "***", and every run shaped like a
// GitHub token (classic or stateless: github_token_mask.h).
class Redactor {
 public:
  // Values shorter than 6 characters are not registered: they would redact ordinary words.
  void Add(const std::string& value);
  void Add(const Secret& secret) { Add(secret.Reveal()); }
  std::string Redact(std::string text) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> values_;
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void Write(std::string_view line) = 0;
};

// Writes to a stdio stream (stderr by default), one line at a time.
class StreamSink final : public LogSink {
 public:
  explicit StreamSink(std::FILE* stream = stderr) : stream_(stream) {}
  void Write(std::string_view line) override;

 private:
  std::mutex mu_;
  std::FILE* stream_;
};

// Keeps every line in memory (tests).
class MemorySink final : public LogSink {
 public:
  void Write(std::string_view line) override;
  std::vector<std::string> lines() const;
  std::string Joined() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

using LogFields = std::vector<std::pair<std::string, nlohmann::json>>;

class Logger {
 public:
  Logger(LogSink& sink, const Clock& clock, LogLevel min_level = LogLevel::kInfo,
         std::shared_ptr<Redactor> redactor = std::make_shared<Redactor>());

  // A logger that adds `fields` to every line and shares this one's sink and redactor.
  Logger With(LogFields fields) const;

  void Log(LogLevel level, std::string_view msg, const LogFields& fields = {}) const;
  void Debug(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kError, msg, fields);
  }

  Redactor& redactor() const { return *redactor_; }

 private:
  LogSink* sink_;
  const Clock* clock_;
  LogLevel min_level_;
  std::shared_ptr<Redactor> redactor_;
  LogFields context_;
};

// True for field names that carry credentials ("token", "jit_config", "Authorization" ...).
bool IsSecretFieldName(std::string_view name);

}  // namespace mvr
