#include "emulate/github/tokens/installation_tokens.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::emulate::github {

Result<InstallationTokenFormat> ParseInstallationTokenFormat(std::string_view text) {
  if (text == "stateless") return InstallationTokenFormat::kStateless;
  if (text == "classic") return InstallationTokenFormat::kClassic;
  return InvalidArgument("installation token format '" + std::string(text) +
                         "' is unknown; use 'stateless' (GitHub's since 2026-04) or 'classic'");
}

const char* InstallationTokenFormatName(InstallationTokenFormat format) {
  return format == InstallationTokenFormat::kClassic ? "classic" : "stateless";
}

namespace {

const char kAlphanumerics[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

Secret ClassicToken(Random& random) {
  std::string token = "ghs_";
  for (int i = 0; i < 36; ++i) token += kAlphanumerics[random.Uniform(sizeof(kAlphanumerics) - 1)];
  return Secret(std::move(token));
}

// `ghs_` + header.claims.signature, base64url, padded with signature bytes to exactly
// kStatelessTokenLength. The claims say what a self-contained token would carry; nothing reads
// them (the emulator looks the token up by hash, as clients must treat it as opaque).
Secret StatelessToken(Random& random, int64_t installation_id, TimePoint expires_at) {
  nlohmann::json header = {{"alg", "ES256"}, {"typ", "JWT"}, {"kid", random.Hex(8)}};
  nlohmann::json claims = {{"iss", "github.com"},
                           {"sub", "installation:" + std::to_string(installation_id)},
                           {"exp", ToUnixSeconds(expires_at)},
                           {"nonce", random.Hex(16)}};
  std::string token =
      "ghs_" + Base64UrlEncode(JsonText(header)) + "." + Base64UrlEncode(JsonText(claims)) + ".";
  const size_t left =
      kStatelessTokenLength > token.size() ? kStatelessTokenLength - token.size() : 0;
  std::string signature = Base64UrlEncode(random.Bytes(left * 3 / 4 + 3));
  token += signature.substr(0, left);
  return Secret(std::move(token));
}

}  // namespace

Secret MintInstallationToken(InstallationTokenFormat format, Random& secure_random,
                             int64_t installation_id, TimePoint expires_at) {
  if (format == InstallationTokenFormat::kClassic) return ClassicToken(secure_random);
  return StatelessToken(secure_random, installation_id, expires_at);
}

bool SameSecondJwts::SeenRecently(int64_t app_id, int64_t iat, const std::string& jti,
                                  TimePoint now) {
  std::erase_if(last_seen_, [&](const auto& e) { return now - e.second >= kWindow; });
  auto [it, added] = last_seen_.try_emplace({app_id, iat, jti}, now);
  if (added) return false;
  it->second = now;
  return true;
}

}  // namespace mvr::emulate::github
