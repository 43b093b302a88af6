#include "emulate/github/jit_config.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::emulate::github {
namespace {

using nlohmann::json;

std::string Guid(Random& random) {
  std::string h = random.Hex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

// Parameters of a 2048-bit RSA key as the runner stores them (.NET RSAParameters): the sizes are
// real, the values random; nothing verifies them.
json RsaParams(Random& random) {
  json p;
  p["d"] = Base64Encode(random.Bytes(256));
  p["dp"] = Base64Encode(random.Bytes(128));
  p["dq"] = Base64Encode(random.Bytes(128));
  p["exponent"] = "AQAB";
  p["inverseQ"] = Base64Encode(random.Bytes(128));
  p["modulus"] = Base64Encode(random.Bytes(256));
  p["p"] = Base64Encode(random.Bytes(128));
  p["q"] = Base64Encode(random.Bytes(128));
  return p;
}

}  // namespace

Secret EncodeJitConfig(const JitConfigContents& c, Random& secure_random) {
  json runner;
  runner["agentId"] = c.runner_id;
  runner["agentName"] = c.runner_name;
  runner["poolId"] = 1;
  runner["poolName"] = "Default";
  runner["ephemeral"] = true;
  runner["serverUrl"] = c.server_url;
  runner["gitHubUrl"] = c.github_url;
  runner["workFolder"] = c.work_folder;
  runner["useV2Flow"] = true;
  json credentials;
  credentials["scheme"] = "OAuth";
  credentials["data"]["clientId"] = Guid(secure_random);
  credentials["data"]["authorizationUrl"] = c.server_url + "/_runner/token";
  credentials["data"]["requireFipsCryptography"] = "False";
  credentials["data"]["accessToken"] = c.credential.Reveal();
  json files;
  files[".runner"] = Base64Encode(JsonText(runner));
  files[".credentials"] = Base64Encode(JsonText(credentials));
  files[".credentials_rsaparams"] = Base64Encode(JsonText(RsaParams(secure_random)));
  return Secret(Base64Encode(JsonText(files)));
}

Result<JitConfigContents> DecodeJitConfig(const Secret& encoded) {
  auto outer = Base64Decode(encoded.Reveal());
  if (!outer.ok())
    return InvalidArgument("JIT config is not base64; pass the encoded_jit_config as issued");
  json files = json::parse(*outer, nullptr, false);
  if (!files.is_object() || !files.contains(".runner") || !files.contains(".credentials")) {
    return InvalidArgument(
        "JIT config does not hold .runner and .credentials; pass the encoded_jit_config as issued");
  }
  auto file = [&](const char* name) -> Result<json> {
    if (!files[name].is_string())
      return InvalidArgument(std::string("JIT config file ") + name + " is not a string");
    auto bytes = Base64Decode(files[name].get<std::string>());
    if (!bytes.ok())
      return InvalidArgument(std::string("JIT config file ") + name + " is not base64");
    json j = json::parse(*bytes, nullptr, false);
    if (!j.is_object())
      return InvalidArgument(std::string("JIT config file ") + name + " is not JSON");
    return j;
  };
  MVR_ASSIGN_OR_RETURN(json runner, file(".runner"));
  MVR_ASSIGN_OR_RETURN(json credentials, file(".credentials"));
  JitConfigContents c;
  try {
    c.runner_id = runner.at("agentId").get<int64_t>();
    c.runner_name = runner.at("agentName").get<std::string>();
    c.server_url = runner.at("serverUrl").get<std::string>();
    c.github_url = runner.value("gitHubUrl", "");
    c.work_folder = runner.value("workFolder", "_work");
    c.credential = Secret(credentials.at("data").at("accessToken").get<std::string>());
  } catch (const json::exception&) {
    return InvalidArgument(
        "JIT config lacks a runner id, name, server URL or credential; it was not issued by the "
        "mvr emulator");
  }
  return c;
}

}  // namespace mvr::emulate::github
