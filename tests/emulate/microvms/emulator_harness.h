// An in-process Emulator with real processes, clock and HTTP, plus raw rest-json calls to it, for
// the e2e tests. Guests are the test_guest binary built beside the tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "aws/microvms/service_model.h"
#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "emulate/microvms/emulator.h"
#include "http/curl_client.h"

namespace mvr::emulate::microvms {

inline std::string GuestBinary() {
  return std::string(MVR_BINARY_DIR) + "/tests/emulate/microvms/emulate_microvms_test_guest";
}

inline std::string MakeTempDir(const char* name) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// A temporary directory removed when it goes out of scope.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const char* name) : path_(MakeTempDir(name)) {}
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes into `dir` a Dockerfile whose program is the test guest (with `env`, "K=V ...", as its
// ENV line when not empty) and returns the CreateMicrovmImage request for it with `hooks`.
// The test guest's counter (it writes a rising number to DIR/counter while it runs); -1 before
// the first write.
inline long GuestCounter(const std::string& dir) {
  std::string text = ReadText(dir + "/counter");
  return text.empty() ? -1 : std::stol(text);
}

inline nlohmann::json GuestImageRequest(const std::string& name, const std::string& dir,
                                        const std::string& env, nlohmann::json hooks) {
  std::filesystem::create_directories(dir);
  std::ofstream dockerfile(dir + "/Dockerfile");
  dockerfile << "FROM public.ecr.aws/amazonlinux/amazonlinux:2023\n";
  if (!env.empty()) dockerfile << "ENV " << env << "\n";
  dockerfile << "CMD [\"" << GuestBinary() << "\"]\n";
  return {{"name", name},
          {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
          {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
          {"codeArtifact", {{"uri", "file://" + dir}}},
          {"hooks", std::move(hooks)}};
}

class EmulatorHarness {
 public:
  explicit EmulatorHarness(Emulator::Options options) {
    work_ = MakeTempDir("mvr-emu-test");
    if (options.state_dir.empty()) options.state_dir = work_ + "/state";
    state_dir_ = options.state_dir;
    options.request_log = &requests_;
    emulator_ = std::make_unique<Emulator>(
        Emulator::Deps{Seam{clock_, sleeper_, random_, secure_, logger_}, http_, processes_},
        options);
    Result<std::string> url = emulator_->Start();
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    url_ = url.value_or("");
  }
  ~EmulatorHarness() {
    // Idle keep-alive connections from the test's client would hold the servers' shutdown.
    client_.reset();
    emulator_->Shutdown();
    std::error_code ec;
    std::filesystem::remove_all(work_, ec);
  }

  struct Answer {
    int status = 0;
    nlohmann::json body;
    http::Headers headers;
  };
  Answer Call(const std::string& method, const std::string& path,
              const nlohmann::json& body = nullptr) {
    http::HttpRequest r;
    r.method = method;
    r.url = url_ + path;
    if (!body.is_null()) {
      r.body = body.dump();
      r.headers.Set("Content-Type", "application/json");
    }
    Answer a;
    Result<http::HttpResponse> res = client_->Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) return a;
    a.status = res->status;
    a.headers = res->headers;
    a.body = res->body.empty() ? nlohmann::json::object()
                               : nlohmann::json::parse(res->body, nullptr, false);
    return a;
  }

  // Polls GetMicrovm until `state` (or a 60 s budget runs out); returns the last answer.
  nlohmann::json WaitForState(const std::string& id, const std::string& state) {
    const TimePoint deadline = clock_.Now() + Duration(60'000);
    nlohmann::json last;
    while (clock_.Now() < deadline) {
      Answer a = Call("GET", "/2025-09-09/microvms/" + id);
      last = a.body;
      if (a.status == 200 && last.value("state", "") == state) return last;
      sleeper_.Sleep(Duration(50));
    }
    ADD_FAILURE() << id << " never reached " << state << "; last: " << last.dump();
    return last;
  }

  const std::string& url() const { return url_; }
  const std::string& work() const { return work_; }
  const std::string& state_dir() const { return state_dir_; }
  Emulator& emulator() { return *emulator_; }
  http::CurlHttpClient& http() { return *client_; }
  Sleeper& sleeper() { return sleeper_; }
  const Clock& clock() const { return clock_; }
  std::string RequestLog() const { return requests_.Joined(); }

 private:
  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{1234};
  SecureRandom secure_;
  MemorySink log_sink_;
  Logger logger_{log_sink_, clock_, LogLevel::kWarn};
  MemorySink requests_;
  http::CurlHttpClient http_;  // the emulator's (hooks, proxied requests)
  std::unique_ptr<http::CurlHttpClient> client_ = std::make_unique<http::CurlHttpClient>();
  process::PosixProcessRunner processes_;
  std::string work_, state_dir_, url_;
  std::unique_ptr<Emulator> emulator_;
};

}  // namespace mvr::emulate::microvms
