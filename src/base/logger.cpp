#include "base/logger.h"

#include <algorithm>
#include <cctype>

#include "base/github_token_mask.h"
#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr {

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

LogLevel ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

void Redactor::Add(const std::string& value) {
  if (value.size() < 6) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(values_.begin(), values_.end(), value) == values_.end()) values_.push_back(value);
  // Longest first, so a secret that contains another is replaced whole.
  std::sort(values_.begin(), values_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::Redact(std::string text) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& v : values_) {
    size_t pos = 0;
    while ((pos = text.find(v, pos)) != std::string::npos) {
      text.replace(pos, v.size(), "***");
      pos += 3;
    }
  }
  // And what looks like a GitHub token though nobody registered it (github_token_mask.h).
  return MaskGitHubTokens(std::move(text));
}

void StreamSink::Write(std::string_view line) {
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), stream_);
  std::fputc('\n', stream_);
  std::fflush(stream_);
}

void MemorySink::Write(std::string_view line) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.emplace_back(line);
}

std::vector<std::string> MemorySink::lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

std::string MemorySink::Joined() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& l : lines_) out += l + "\n";
  return out;
}

bool IsSecretFieldName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"token", "secret", "jit", "password", "authorization", "private_key",
                           "credential", "signature"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return lower == "key";
}

Logger::Logger(LogSink& sink, const Clock& clock, LogLevel min_level,
               std::shared_ptr<Redactor> redactor)
    : sink_(&sink), clock_(&clock), min_level_(min_level), redactor_(std::move(redactor)) {}

Logger Logger::With(LogFields fields) const {
  Logger child = *this;
  for (auto& f : fields) child.context_.push_back(std::move(f));
  return child;
}

void Logger::Log(LogLevel level, std::string_view msg, const LogFields& fields) const {
  if (level < min_level_) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = FormatRfc3339Millis(clock_->Now());
  line["level"] = LogLevelName(level);
  line["msg"] = std::string(msg);
  auto add = [&](const std::pair<std::string, nlohmann::json>& f) {
    line[f.first] = IsSecretFieldName(f.first) ? nlohmann::json("***") : f.second;
  };
  for (const auto& f : context_) add(f);
  for (const auto& f : fields) add(f);
  sink_->Write(redactor_->Redact(JsonText(line)));
}

}  // namespace mvr
