// A JIT config shaped like GitHub's encoded_jit_config: base64 of a JSON object whose
// ".runner", ".credentials" and ".credentialsRSA" values are themselves base64 (the last of an
// RSA key in XML with random key material). Deterministic for a seed; about 3.5 KB.
#pragma once

#include <string>

#include "base/encoding.h"
#include "base/random.h"

namespace mvr::supervisor::testing {

inline std::string MakeJitFixture(uint64_t seed = 7, size_t key_bytes = 256) {
  SeededRandom random(seed);
  auto b64 = [](const std::string& s) { return Base64Encode(s); };
  std::string runner =
      R"({"AgentId":"4211","AgentName":"lambda-mvm-3f6c2a9d0b1e4c7f8a2d5e6b9c0d1f2a","PoolId":"1",)"
      R"("PoolName":"Default","ServerUrl":"https://pipelinesghubeus21.actions.githubusercontent.com/)" +
      random.Hex(24) +
      R"(/","GitHubUrl":"https://github.com/example-org/example-repo","WorkFolder":"_work",)"
      R"("UseV2Flow":true,"ServerUrlV2":"https://broker.actions.githubusercontent.com/"})";
  std::string credentials = R"({"Scheme":"OAuthAccessToken","Data":{"ClientId":")" +
                            random.Hex(16) +
                            R"(","AuthorizationUrl":"https://vstoken.actions.)"
                            R"(githubusercontent.com/_apis/oauth2/token/)" +
                            random.Hex(16) + R"(","RequireFipsCryptography":"False"}})";
  std::string rsa = "<RSAParameters><D>" + b64(random.Bytes(key_bytes)) + "</D><DP>" +
                    b64(random.Bytes(key_bytes / 2)) + "</DP><DQ>" +
                    b64(random.Bytes(key_bytes / 2)) + "</DQ><Exponent>AQAB</Exponent><InverseQ>" +
                    b64(random.Bytes(key_bytes / 2)) + "</InverseQ><Modulus>" +
                    b64(random.Bytes(key_bytes)) + "</Modulus><P>" +
                    b64(random.Bytes(key_bytes / 2)) + "</P><Q>" +
                    b64(random.Bytes(key_bytes / 2)) + "</Q></RSAParameters>";
  std::string json = R"({".runner":")" + b64(runner) + R"(",".credentials":")" + b64(credentials) +
                     R"(",".credentialsRSA":")" + b64(rsa) + R"("})";
  return b64(json);
}

}  // namespace mvr::supervisor::testing
