// LazySecret: a secret a Lambda function reads only when a request needs it (issue 53, item 7).
// The internet-facing webhook function must not read SSM on every cold start: a flood of unsigned
// requests would scale it out and spend SSM's 40 TPS. So the read waits for the first request,
// its value is kept for the function instance's life and read again at most every
// `refresh_every` (a rotated parameter is picked up), and a failed read backs off (1 s, doubling
// to 60 s) instead of hammering SSM: during the back-off a request gets an error without a read.
// A failed refresh keeps the value it had. LazyWebhookRouter builds the webhook router from it.
// Time comes from the injected Clock. Thread-safety: one caller at a time (the runtime loop).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "runnerset/intake/webhook_router.h"

namespace mvr::lambda {

class LazySecret {
 public:
  using Fetch = std::function<Result<Secret>()>;
  struct Options {
    Duration first_backoff{1'000};
    Duration max_backoff{60'000};
    Duration refresh_every{15 * 60 * 1'000};
  };

  LazySecret(Fetch fetch, const Clock& clock) : LazySecret(std::move(fetch), clock, Options()) {}
  LazySecret(Fetch fetch, const Clock& clock, Options options)
      : fetch_(std::move(fetch)), clock_(clock), options_(options) {}

  // The secret: the kept value, or read now when there is none or it is due for a refresh (and
  // no back-off is running). Without a kept value, a failed read, or a call during the back-off
  // that follows one, is Transient, naming the last error (which never holds the value).
  Result<Secret> Get();

  // How many reads were made (tests, logs).
  int64_t reads() const { return reads_; }
  // Changes whenever a read brings a value different from the kept one.
  uint64_t generation() const { return generation_; }

 private:
  Fetch fetch_;
  const Clock& clock_;
  const Options options_;
  std::optional<Secret> value_;
  TimePoint read_at_{};
  TimePoint retry_at_{};  // no read before this (a back-off is running while it is ahead)
  Duration backoff_{0};
  Status last_error_ = Status::Ok();
  int64_t reads_ = 0;
  uint64_t generation_ = 0;
};

// The webhook router, built on the first request from the lazily read secret and rebuilt when a
// refresh brings another one.
class LazyWebhookRouter {
 public:
  // `config` is the router's configuration without its secret; `secret` must outlive this.
  LazyWebhookRouter(runnerset::WebhookRouterConfig config, LazySecret& secret)
      : config_(std::move(config)), secret_(secret) {}

  Result<const runnerset::WebhookRouter*> Get();

 private:
  runnerset::WebhookRouterConfig config_;
  LazySecret& secret_;
  std::optional<runnerset::WebhookRouter> router_;
  uint64_t built_generation_ = 0;
};

}  // namespace mvr::lambda
