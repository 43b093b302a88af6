// FakeRuntimeApi: a local stand-in for the Lambda Runtime API on 127.0.0.1, for tests and the
// cold-start benchmark. Events are queued with Enqueue; GET …/invocation/next hands them out in
// order (blocking until there is one, as Lambda does) with a request id and a deadline header;
// the answers (…/response, …/error, /init/error) are recorded and can be awaited.
// Thread-safety: every method is safe from any thread; the server's handlers run on its own.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "http/router.h"
#include "http/server.h"

namespace mvr::lambda {

class FakeRuntimeApi {
 public:
  struct Answer {
    enum class Kind { kResponse, kError, kInitError };
    Kind kind = Kind::kResponse;
    std::string request_id;  // "" for an init error
    std::string body;
    std::string error_type;  // Lambda-Runtime-Function-Error-Type, for errors
  };

  FakeRuntimeApi();
  ~FakeRuntimeApi();

  // Serves on 127.0.0.1 and a free port.
  Status Start();
  // Unblocks waiting /next calls (they answer 500, which ends a runtime loop) and stops.
  void Stop();
  // "127.0.0.1:PORT": the value of AWS_LAMBDA_RUNTIME_API.
  const std::string& endpoint() const { return endpoint_; }

  // Queues one event; returns its request id.
  std::string Enqueue(std::string event);
  // The answer to `request_id`, once it arrives (nullopt after `within`).
  std::optional<Answer> WaitAnswer(const std::string& request_id, Duration within);
  // The first init error, once it arrives.
  std::optional<Answer> WaitInitError(Duration within);
  std::vector<Answer> answers() const;

 private:
  http::HttpResponse Next();
  http::HttpResponse Record(Answer answer);
  std::optional<Answer> WaitFor(const std::function<bool(const Answer&)>& match, Duration within);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::string>> events_;  // (request id, event)
  std::vector<Answer> answers_;
  int next_id_ = 1;
  bool stopping_ = false;
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
  std::string endpoint_;
};

}  // namespace mvr::lambda
