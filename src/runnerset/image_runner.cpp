#include "runnerset/image_runner.h"

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
  ClassImageRunner out;
  out.image = cls.image;
  out.image_version = cls.image_version;
  if (out.image_version.empty()) {
    MVR_ASSIGN_OR_RETURN(aws::MicrovmImage image, microvms.GetMicrovmImage(cls.image));
    if (image.latest_active_image_version.empty()) {
      return NotFound("image " + cls.image + " has no active version");
    }
    out.image_version = image.latest_active_image_version;
  }
  aws::ListMicrovmImageVersionsRequest req;
  req.image_identifier = cls.image;
  MVR_ASSIGN_OR_RETURN(std::vector<aws::MicrovmImageVersion> all,
                       aws::ListAllMicrovmImageVersions(microvms, req, 20));
  for (const aws::MicrovmImageVersion& v : all) {
    if (v.image_version != out.image_version) continue;
    out.runner_version = RecordedRunnerVersion(v.config.description);
    return out;
  }
  return NotFound("image " + cls.image + " has no version " + out.image_version);
}

}  // namespace mvr::runnerset
