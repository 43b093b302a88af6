// The JSON Web Token a GitHub App signs to authenticate as itself ("Generating a JSON Web Token
// (JWT) for a GitHub App"): RS256 over {"iat": now - 60 s, "exp": now + 9 min, "iss": app id,
// "jti": 128 random bits}, signed with the App's PEM private key through OpenSSL. The 60 s
// back-dating absorbs clock drift; GitHub refuses an exp more than 10 minutes ahead. GitHub
// documents iat, exp and iss only; the jti (RFC 7519 §4.1.7) makes two JWTs minted in the same
// second differ, which GitHub needs (it answered 404 to the second one: terraform-aws-github-runner
// #5056). RS256 signatures are deterministic, so without it they would be the same bytes.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::github {

inline constexpr Duration kAppJwtBackdate{60'000};
inline constexpr Duration kAppJwtLifetime{540'000};

// `app_id` is the numeric App id ("123456", written as a JSON number) or the App's client id
// ("Iv23li...", written as a string). `private_key_pem` is a PKCS#1 or PKCS#8 RSA key.
// InvalidArgument when the id is empty or the key is not an RSA private key in PEM form; the
// error never quotes the key. `random` draws the jti.
Result<Secret> MakeAppJwt(const std::string& app_id, const Secret& private_key_pem, TimePoint now,
                          Random& random);

}  // namespace mvr::github
