#include "runnerset/classes/image_runner.h"

#include <cstdint>

#include "base/numbers.h"

namespace mvr::runnerset {

std::string RecordedRunnerVersion(const std::string& description) {
  const std::string key = "runner=";
  size_t at = description.find(key);
  // The key starts a word: "xrunner=" is not it.
  while (at != std::string::npos && at > 0 && description[at - 1] != ' ') {
    at = description.find(key, at + 1);
  }
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  const size_t end = description.find(' ', from);
  return description.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

Result<ClassImageRunner> FindClassImageRunner(const RunnerClass& cls,
                                              aws::MicrovmService& microvms) {
  aws::ListMicrovmImageVersionsRequest req;
  req.image_identifier = cls.image;
  MVR_ASSIGN_OR_RETURN(std::vector<aws::MicrovmImageVersion> all,
                       aws::ListAllMicrovmImageVersions(microvms, req, 20));
  // The pinned version, else the newest ACTIVE one (what GetMicrovmImage calls the latest active
  // version: read from the listing, since the janitor's role may list versions but not get the
  // image, deploy/iam/runner-set-janitor.json).
  const aws::MicrovmImageVersion* found = nullptr;
  for (const aws::MicrovmImageVersion& v : all) {
    if (!cls.image_version.empty()) {
      if (v.image_version == cls.image_version) found = &v;
      continue;
    }
    if (v.status != aws::ImageVersionStatus::kActive ||
        v.state != aws::ImageVersionState::kSuccessful) {
      continue;
    }
    const int64_t n = ParseInt64InRange(v.image_version, 0, INT64_MAX).value_or(-1);
    if (!found || n > ParseInt64InRange(found->image_version, 0, INT64_MAX).value_or(-1)) {
      found = &v;
    }
  }
  if (found == nullptr) {
    return NotFound(cls.image_version.empty()
                        ? "image " + cls.image + " has no active version"
                        : "image " + cls.image + " has no version " + cls.image_version);
  }
  ClassImageRunner out;
  out.image = cls.image;
  out.image_version = found->image_version;
  out.runner_version = RecordedRunnerVersion(found->config.description);
  return out;
}

}  // namespace mvr::runnerset
