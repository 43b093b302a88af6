// What GitHub's token endpoint (POST /app/installations/{id}/access_tokens) does that the rest of
// the App model does not: the shape of the tokens it issues, and its refusal of a JWT presented
// again within a second.
// - Since 2026-04 GitHub issues stateless installation tokens: `ghs_` and a JWT-like body of
//   three base64url parts joined by '.', about 520 characters. Classic tokens are `ghs_` and 36
//   alphanumerics. Both are opaque to the caller; the emulator still looks tokens up by hash.
// - terraform-aws-github-runner #5056: two App JWTs minted in the same second made GitHub answer
//   404 on access_tokens. The stricter reading modelled here: a second request whose JWT has the
//   same App, `iat` and `jti` (none counts as the same) within one second of the first is 404.
// Thread-safety: SameSecondJwts is not synchronised (Authenticator calls it under its lock).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "base/clock.h"
#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::emulate::github {

enum class InstallationTokenFormat { kStateless, kClassic };

// The length GitHub announced for stateless tokens ("about 520 characters"); ours are exactly it.
inline constexpr size_t kStatelessTokenLength = 520;

// "stateless" or "classic"; InvalidArgument naming both otherwise.
Result<InstallationTokenFormat> ParseInstallationTokenFormat(std::string_view text);
const char* InstallationTokenFormatName(InstallationTokenFormat format);

// A fresh installation token in `format`, every random part drawn from `secure_random`.
Secret MintInstallationToken(InstallationTokenFormat format, Random& secure_random,
                             int64_t installation_id, TimePoint expires_at);

// The JWTs presented to access_tokens in the last second.
class SameSecondJwts {
 public:
  static constexpr Duration kWindow{1'000};

  // Records the JWT (`jti` empty when it has none) presented at `now`; true when the same App
  // presented one with the same `iat` and `jti` less than kWindow before.
  bool SeenRecently(int64_t app_id, int64_t iat, const std::string& jti, TimePoint now);

 private:
  std::map<std::tuple<int64_t, int64_t, std::string>, TimePoint> last_seen_;
};

}  // namespace mvr::emulate::github
