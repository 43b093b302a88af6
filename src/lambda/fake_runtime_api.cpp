#include "lambda/fake_runtime_api.h"

#include <chrono>

namespace mvr::lambda {
namespace {

constexpr char kPrefix[] = "/2018-06-01/runtime";
// A deadline far enough ahead for any test; Lambda sends the function's timeout.
constexpr int64_t kDeadlineMs = 4'102'444'800'000;  // 2100-01-01

}  // namespace

FakeRuntimeApi::FakeRuntimeApi() {
  const std::string p = kPrefix;
  router_.Add("GET", p + "/invocation/next",
              [this](const http::ServerRequest&, const http::PathParams&) { return Next(); });
  router_.Add("POST", p + "/invocation/{id}/response",
              [this](const http::ServerRequest& r, const http::PathParams& params) {
                return Record(Answer{Answer::Kind::kResponse, params.at("id"), r.body, ""});
              });
  router_.Add("POST", p + "/invocation/{id}/error",
              [this](const http::ServerRequest& r, const http::PathParams& params) {
                return Record(Answer{Answer::Kind::kError, params.at("id"), r.body,
                                     r.headers.GetOr("Lambda-Runtime-Function-Error-Type", "")});
              });
  router_.Add("POST", p + "/init/error",
              [this](const http::ServerRequest& r, const http::PathParams&) {
                return Record(Answer{Answer::Kind::kInitError, "", r.body,
                                     r.headers.GetOr("Lambda-Runtime-Function-Error-Type", "")});
              });
}

FakeRuntimeApi::~FakeRuntimeApi() { Stop(); }

Status FakeRuntimeApi::Start() {
  http::HttpServer::Options options;
  options.max_body_bytes = 6 << 20;  // Lambda's synchronous payload limit
  options.read_timeout = Duration(600'000);
  server_ = std::make_unique<http::HttpServer>(router_.AsHandler(), options);
  MVR_ASSIGN_OR_RETURN(int port, server_->Start("127.0.0.1", 0));
  endpoint_ = "127.0.0.1:" + std::to_string(port);
  return Status::Ok();
}

void FakeRuntimeApi::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (server_) server_->Stop();
  server_.reset();
}

std::string FakeRuntimeApi::Enqueue(std::string event) {
  std::string id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = "fake-request-" + std::to_string(next_id_++);
    events_.emplace_back(id, std::move(event));
  }
  cv_.notify_all();
  return id;
}

http::HttpResponse FakeRuntimeApi::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || !events_.empty(); });
  if (stopping_) return http::HttpResponse::Text(500, "the fake Runtime API is stopping");
  auto [id, event] = std::move(events_.front());
  events_.pop_front();
  lock.unlock();
  http::HttpResponse r = http::HttpResponse::Json(200, std::move(event));
  r.headers.Set("Lambda-Runtime-Aws-Request-Id", id);
  r.headers.Set("Lambda-Runtime-Deadline-Ms", std::to_string(kDeadlineMs));
  r.headers.Set("Lambda-Runtime-Invoked-Function-Arn",
                "arn:aws:lambda:us-east-1:123456789012:function:mvr-fake");
  return r;
}

http::HttpResponse FakeRuntimeApi::Record(Answer answer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    answers_.push_back(std::move(answer));
  }
  cv_.notify_all();
  return http::HttpResponse::Json(202, R"({"status":"OK"})");
}

std::optional<FakeRuntimeApi::Answer> FakeRuntimeApi::WaitFor(
    const std::function<bool(const Answer&)>& match, Duration within) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Answer> found;
  // The test's own wait: a real-time bound on a condition variable, not a clock read of the code
  // under test.
  cv_.wait_for(lock, std::chrono::milliseconds(within.count()), [&] {
    for (const Answer& a : answers_) {
      if (match(a)) {
        found = a;
        return true;
      }
    }
    return false;
  });
  return found;
}

std::optional<FakeRuntimeApi::Answer> FakeRuntimeApi::WaitAnswer(const std::string& request_id,
                                                                 Duration within) {
  return WaitFor([&](const Answer& a) { return a.request_id == request_id; }, within);
}

std::optional<FakeRuntimeApi::Answer> FakeRuntimeApi::WaitInitError(Duration within) {
  return WaitFor([](const Answer& a) { return a.kind == Answer::Kind::kInitError; }, within);
}

std::vector<FakeRuntimeApi::Answer> FakeRuntimeApi::answers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return answers_;
}

}  // namespace mvr::lambda
