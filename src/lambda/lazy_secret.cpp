#include "lambda/lazy_secret.h"

#include <algorithm>
#include <string>

namespace mvr::lambda {

Result<Secret> LazySecret::Get() {
  const TimePoint now = clock_.Now();
  const bool fresh = value_ && now - read_at_ < options_.refresh_every;
  if (fresh) return *value_;
  if (now < retry_at_) {
    if (value_) return *value_;  // a refresh failed lately: keep what we have
    const auto wait = std::chrono::duration_cast<std::chrono::seconds>(retry_at_ - now).count();
    return Transient("not read again for " + std::to_string(wait + 1) +
                     " s after a failed read: " + last_error_.message());
  }
  ++reads_;
  Result<Secret> got = fetch_();
  if (!got.ok()) {
    last_error_ = got.status();
    backoff_ = backoff_.count() == 0 ? options_.first_backoff
                                     : std::min(backoff_ * 2, options_.max_backoff);
    retry_at_ = now + backoff_;
    if (value_) return *value_;
    return Status(Code::kTransient, last_error_.message());
  }
  backoff_ = Duration(0);
  retry_at_ = TimePoint{};
  if (!value_ || value_->Reveal() != got->Reveal()) ++generation_;
  value_ = std::move(*got);
  read_at_ = now;
  return *value_;
}

Result<const runnerset::WebhookRouter*> LazyWebhookRouter::Get() {
  MVR_ASSIGN_OR_RETURN(Secret secret, secret_.Get());
  if (!router_ || built_generation_ != secret_.generation()) {
    runnerset::WebhookRouterConfig c = config_;
    c.secret = std::move(secret);
    MVR_ASSIGN_OR_RETURN(runnerset::WebhookRouter router,
                         runnerset::WebhookRouter::Create(std::move(c)));
    router_.emplace(std::move(router));
    built_generation_ = secret_.generation();
  }
  return &*router_;
}

}  // namespace mvr::lambda
