#include "action/identity.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::action {

Result<DerivedIdentity> DeriveIdentity(const JobIdentity& id) {
  struct Field {
    const char* name;
    const std::string& value;
  };
  for (const Field& f : {Field{"repository id (GITHUB_REPOSITORY_ID)", id.repository_id},
                         Field{"run id (GITHUB_RUN_ID)", id.run_id},
                         Field{"run attempt (GITHUB_RUN_ATTEMPT)", id.run_attempt},
                         Field{"job (GITHUB_JOB)", id.job}}) {
    if (f.value.empty()) {
      return InvalidArgument(std::string("job identity needs the ") + f.name +
                             "; run inside GitHub Actions or pass it as a flag");
    }
  }
  // Length-prefixed fields, so that ("ab","c") and ("a","bc") never collide.
  std::string material = "mvr-identity-v2";
  for (const std::string* f : {&id.repository_id, &id.run_id, &id.run_attempt, &id.job,
                               &id.job_index, &id.matrix, &id.step, &id.idempotency_key}) {
    material += "|" + std::to_string(f->size()) + ":" + *f;
  }
  DerivedIdentity out;
  out.digest_hex = Sha256Hex(material);
  out.label = std::string(kLabelPrefix) + out.digest_hex.substr(0, 24);
  return out;
}

std::string LaunchClientToken(const DerivedIdentity& id, std::string_view launch) {
  return "mvr1-" + Sha256Hex("mvr-launch-v1|" + id.digest_hex + "|" + std::string(launch));
}

Result<MatrixLeg> CanonicalMatrixLeg(const std::string& strategy_json,
                                     const std::string& matrix_json) {
  auto parse = [](const std::string& text, const char* what) -> Result<nlohmann::json> {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return nlohmann::json();
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
      return InvalidArgument(std::string("the ") + what +
                             " context is not JSON (action.yml passes toJSON(" + what + "))");
    }
    return j;
  };
  MVR_ASSIGN_OR_RETURN(nlohmann::json strategy, parse(strategy_json, "strategy"));
  MVR_ASSIGN_OR_RETURN(nlohmann::json matrix, parse(matrix_json, "matrix"));
  MatrixLeg leg;
  if (strategy.is_object() && strategy.contains("job-index")) {
    const nlohmann::json& index = strategy["job-index"];
    leg.job_index = index.is_string() ? index.get<std::string>() : JsonText(index);
  }
  // nlohmann's objects keep keys sorted, so dump() is canonical whatever order toJSON used.
  if (!matrix.is_null() && !(matrix.is_object() && matrix.empty())) leg.matrix = JsonText(matrix);
  return leg;
}

}  // namespace mvr::action
