#include "github/auth.h"

#include "base/json_fields.h"
#include "base/retry.h"
#include "github/app_jwt.h"
#include "github/json_parsers.h"

namespace mvr::github {

GitHubAuth GitHubAuth::Token(Secret token) {
  GitHubAuth out;
  out.token = std::move(token);
  return out;
}

GitHubAuth GitHubAuth::App(AppCredentials app) {
  GitHubAuth out;
  out.app = std::move(app);
  return out;
}

Status GitHubAuth::Validate() const {
  if (token.has_value() == app.has_value()) {
    return InvalidArgument("give GitHub either a token or GitHub App credentials (exactly one)");
  }
  if (token && token->empty()) return InvalidArgument("the GitHub token is empty");
  if (app) {
    if (app->app_id.empty()) return InvalidArgument("the GitHub App id is empty");
    if (app->installation_id <= 0) {
      return InvalidArgument(
          "the GitHub App installation id must be a positive number (see the App's "
          "installation URL, .../installations/<id>)");
    }
    if (app->private_key_pem.empty()) return InvalidArgument("the GitHub App private key is empty");
  }
  if (refresh_margin.count() < 0 || refresh_margin > Duration(3'000'000)) {
    return InvalidArgument("the installation token refresh margin must be 0 to 50 minutes");
  }
  return Status::Ok();
}

namespace {

// Log lines are JSON, where a PEM's newlines become "\n": register each base64 line as well as
// the whole key, so no part of the key survives redaction.
void RegisterPem(Redactor& redactor, const Secret& pem) {
  redactor.Add(pem);
  const std::string& text = pem.Reveal();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("-----", 0) != 0) redactor.Add(line);
    Secret wipe(std::move(line));
    start = end + 1;
  }
}

}  // namespace

Authenticator::Authenticator(GitHubAuth auth, const Logger* logger, AuthSeam seam)
    : logger_(logger), seam_(seam), auth_(std::move(auth)) {
  if (logger_ == nullptr) return;
  if (auth_.token) logger_->redactor().Add(*auth_.token);
  if (auth_.app) RegisterPem(logger_->redactor(), auth_.app->private_key_pem);
}

Result<Secret> Authenticator::BearerToken(RestTransport& rest) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auth_.token) return *auth_.token;
  }
  std::optional<uint64_t> waited_since;  // flights_done_ when this caller began to wait
  for (;;) {
    const TimePoint now = rest.clock().Now();  // a seam call: never under the lock
    std::unique_lock<std::mutex> lock(mu_);
    if (!in_flight_ && waited_since && flights_done_ != *waited_since) {
      // The exchange this caller waited on is over: its outcome is this caller's too.
      if (!last_flight_.ok()) return last_flight_;
      if (installation_token_) return installation_token_->token;
    }
    if (!in_flight_ && installation_token_ &&
        now < installation_token_->expires_at - auth_.refresh_margin) {
      return installation_token_->token;
    }
    if (!in_flight_ || !seam_.single_flight) {
      in_flight_ = true;
      break;
    }
    if (!waited_since) waited_since = flights_done_;
    lock.unlock();
    seam_.sleeper->Sleep(kTokenFlightPoll);
  }
  // This caller owns the flight. It ends however the exchange ends (an exception too: the
  // simulation crashes actors by throwing from a seam call), or the waiters would wait forever.
  struct FlightEnd {
    explicit FlightEnd(Authenticator& owner) : self(owner) {}
    Authenticator& self;
    Status outcome = Internal("the installation token exchange was interrupted");
    std::optional<RegistrationToken> token;
    ~FlightEnd() {
      std::lock_guard<std::mutex> lock(self.mu_);
      self.in_flight_ = false;
      ++self.flights_done_;
      self.last_flight_ = outcome;
      if (token) self.installation_token_ = std::move(token);
    }
  } end(*this);
  Result<RegistrationToken> fresh = ExchangeWithRetry(rest);
  if (!fresh.ok()) {
    end.outcome = fresh.status();
    return fresh.status();
  }
  Secret token = fresh->token;
  end.outcome = Status::Ok();
  end.token = std::move(*fresh);
  return token;
}

Result<Secret> Authenticator::AppJwt(TimePoint now) {
  AppCredentials app;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!auth_.app) return InvalidArgument("only a GitHub App can read its own hook's deliveries");
    app = *auth_.app;
  }
  MVR_ASSIGN_OR_RETURN(Secret jwt, MakeAppJwt(app.app_id, app.private_key_pem, now, *seam_.random));
  if (logger_ != nullptr) logger_->redactor().Add(jwt);
  return jwt;
}

Result<RegistrationToken> Authenticator::ExchangeWithRetry(RestTransport& rest) {
  RetryPolicy backoff;
  backoff.base_delay = kTokenExchangeRetryFloor;
  backoff.max_delay = 4 * kTokenExchangeRetryFloor;
  for (int attempt = 1;; ++attempt) {
    Result<RegistrationToken> token = Exchange(rest);
    if (token.ok() || token.status().code() != Code::kNotFound) return token;
    if (attempt == kTokenExchangeAttempts) {
      // Not NotFound to the caller: that would read as "the runner (or job) is gone" to code
      // that asked for one, and lose the job. Transient keeps it for another try.
      return Transient("GitHub answered 404 to " + std::to_string(attempt) +
                       " installation token requests of installation " +
                       std::to_string(installation_id()) +
                       ": check that the GitHub App is installed there (github.installationId); "
                       "GitHub also answers 404 to a JWT it saw in the same second")
          .WithErrorType("InstallationTokenNotFound");
    }
    const Duration wait =
        kTokenExchangeRetryFloor + FullJitterDelay(backoff, attempt - 1, *seam_.random);
    if (logger_ != nullptr) {
      // The status names the request, never the JWT (which the redactor holds anyway).
      logger_->Warn("github installation token request answered 404; retrying",
                    {{"installation_id", installation_id()},
                     {"attempt", attempt},
                     {"wait_ms", wait.count()},
                     {"error", token.status().message()}});
    }
    seam_.sleeper->Sleep(wait);
  }
}

Result<RegistrationToken> Authenticator::Exchange(RestTransport& rest) {
  AppCredentials app;
  {
    std::lock_guard<std::mutex> lock(mu_);
    app = *auth_.app;
  }
  MVR_ASSIGN_OR_RETURN(
      Secret jwt, MakeAppJwt(app.app_id, app.private_key_pem, rest.clock().Now(), *seam_.random));
  if (logger_ != nullptr) logger_->redactor().Add(jwt);
  std::string path = "/app/installations/" + std::to_string(app.installation_id) + "/access_tokens";
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++exchanges_;
  }
  Result<http::HttpResponse> response = rest.Send("POST", path, "", &jwt);
  if (!response.ok()) {
    return response.status().Annotate("exchanging the GitHub App JWT for an installation token");
  }
  Result<RegistrationToken> token = ParseObjectBody<RegistrationToken>(
      response->body, "the installation token answer", ParseTokenAnswer);
  if (!token.ok()) {
    return Internal("GitHub POST " + path +
                    " gave a malformed answer: " + token.status().message());
  }
  if (logger_ != nullptr) logger_->redactor().Add(token->token);
  if (logger_ != nullptr) {
    logger_->Debug("github installation token refreshed",
                   {{"installation_id", app.installation_id},
                    {"expires_at", ToUnixSeconds(token->expires_at)}});
  }
  return token;
}

void Authenticator::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  installation_token_.reset();
}

Result<bool> Authenticator::Reload() {
  std::function<Result<Secret>()> reload;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reload = auth_.reload;
  }
  if (!reload) return false;
  // Read outside the lock: it may be an SSM call.
  MVR_ASSIGN_OR_RETURN(Secret fresh, reload());
  if (fresh.empty()) return InvalidArgument("the re-read GitHub credential is empty");
  std::lock_guard<std::mutex> lock(mu_);
  Secret& current = auth_.token ? *auth_.token : auth_.app->private_key_pem;
  if (fresh.Reveal() == current.Reveal()) return false;
  if (logger_ != nullptr) {
    if (auth_.token) {
      logger_->redactor().Add(fresh);
    } else {
      RegisterPem(logger_->redactor(), fresh);
    }
  }
  current = std::move(fresh);
  installation_token_.reset();
  return true;
}

int Authenticator::exchanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchanges_;
}

int64_t Authenticator::installation_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return auth_.app ? auth_.app->installation_id : 0;
}

}  // namespace mvr::github
