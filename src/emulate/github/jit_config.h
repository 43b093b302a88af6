// The encoded JIT runner configuration the emulator hands out and the stand-in runner reads.
// Shaped like GitHub's: base64 of a JSON map from file name (".runner", ".credentials",
// ".credentials_rsaparams") to the base64 of that file, with RSA parameters of a 2048-bit key in
// the last one, so that the encoded size (about 3-4 KB) and randomness match production.
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::emulate::github {

// The parts of a JIT config the stand-in runner needs.
struct JitConfigContents {
  int64_t runner_id = 0;
  std::string runner_name;
  std::string server_url;  // the emulator's base URL
  std::string github_url;  // <server>/<owner>[/<repo>]
  std::string work_folder = "_work";
  Secret credential;  // authenticates the runner to the emulator until its job ends
};

// Encodes `contents` with freshly drawn RSA parameters (from `secure_random`).
Secret EncodeJitConfig(const JitConfigContents& contents, Random& secure_random);

// Decodes a config made by EncodeJitConfig. Errors name what is malformed, never the content.
Result<JitConfigContents> DecodeJitConfig(const Secret& encoded);

}  // namespace mvr::emulate::github
