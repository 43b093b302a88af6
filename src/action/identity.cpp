#include "action/identity.h"

#include "base/encoding.h"

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
  std::string material = "mvr-identity-v1";
  for (const std::string* f :
       {&id.repository_id, &id.run_id, &id.run_attempt, &id.job, &id.idempotency_key}) {
    material += "|" + std::to_string(f->size()) + ":" + *f;
  }
  DerivedIdentity out;
  out.digest_hex = Sha256Hex(material);
  out.label = std::string(kLabelPrefix) + out.digest_hex.substr(0, 24);
  out.client_token = "mvr1-" + out.digest_hex;
  return out;
}

}  // namespace mvr::action
