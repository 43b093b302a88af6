// A scripted HttpClient for the AWS client tests: answers from a queue (or a function), records
// every request it was sent.
// Thread-safety: guarded by a mutex; fine for the single-threaded tests here.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "aws/signing/credentials.h"
#include "base/clock.h"
#include "base/random.h"
#include "base/retry.h"
#include "http/client.h"
#include "support/manual_seam.h"

namespace mvr::aws::testing {

using EnvMap = std::map<std::string, std::string>;

class FakeHttpClient final : public http::HttpClient {
 public:
  void Push(Result<http::HttpResponse> r) { queue_.push_back(std::move(r)); }
  void PushJson(int status, const std::string& body,
                std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::HttpResponse resp = http::HttpResponse::Json(status, body);
    for (auto& [k, v] : headers) resp.headers.Set(k, v);
    Push(resp);
  }
  void SetHandler(std::function<Result<http::HttpResponse>(const http::HttpRequest&)> h) {
    handler_ = std::move(h);
  }

  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    if (handler_) return handler_(request);
    if (queue_.empty()) return Internal("FakeHttpClient: no scripted response left");
    auto r = std::move(queue_.front());
    queue_.pop_front();
    return r;
  }

  const std::vector<http::HttpRequest>& requests() const { return requests_; }

 private:
  std::mutex mu_;
  std::deque<Result<http::HttpResponse>> queue_;
  std::function<Result<http::HttpResponse>(const http::HttpRequest&)> handler_;
  std::vector<http::HttpRequest> requests_;
};

inline AwsCredentials TestCredentials() {
  AwsCredentials c;
  c.access_key_id = "AKIDTESTKEY";
  c.secret_access_key = Secret("test-secret-do-not-log-0123456789");
  c.source = "test";
  return c;
}

using mvr::testing::ManualSeam;

}  // namespace mvr::aws::testing
