#include "runnerset/classes/class_resolve.h"

#include <map>

#include "fleet/image_arn.h"

namespace mvr::runnerset {
namespace {

constexpr Duration kResolveTime{60'000};  // all the GetMicrovmImage calls of one start

Status ResolveList(std::optional<std::vector<std::string>>& list, const std::string& fallback_arn,
                   const std::string& region, const std::string& what) {
  if (!list) {
    list = std::vector<std::string>{fallback_arn};
    return Status::Ok();
  }
  MVR_ASSIGN_OR_RETURN(*list, fleet::ResolveConnectors(*list, region, what));
  return Status::Ok();
}

}  // namespace

Status ResolveClasses(ServeConfig& config, const Seam& seam, aws::MicrovmService& microvms,
                      const std::string& region) {
  const TimePoint deadline = seam.clock.Now() + kResolveTime;
  const fleet::NetworkConnectors defaults = fleet::DefaultConnectors(region);
  std::map<std::string, std::string> arns;  // configured image -> ARN
  for (size_t i = 0; i < config.classes.size(); ++i) {
    RunnerClass& c = config.classes[i];
    const std::string key = "classes[" + std::to_string(i) + "]";
    auto known = arns.find(c.image);
    if (known == arns.end()) {
      Result<std::string> arn = fleet::ResolveImageArn(seam, microvms, c.image, deadline);
      if (!arn.ok()) return arn.status().Annotate(key + ".image");
      known = arns.emplace(c.image, *arn).first;
    }
    c.image_arn = known->second;
    MVR_RETURN_IF_ERROR(
        ResolveList(c.ingress_connectors, defaults.ingress[0], region, key + ".ingressConnectors"));
    MVR_RETURN_IF_ERROR(
        ResolveList(c.egress_connectors, defaults.egress[0], region, key + ".egressConnectors"));
  }
  return Status::Ok();
}

fleet::NetworkConnectors ConnectorsOf(const RunnerClass& cls) {
  return fleet::NetworkConnectors{cls.ingress_connectors.value_or(std::vector<std::string>{}),
                                  cls.egress_connectors.value_or(std::vector<std::string>{})};
}

}  // namespace mvr::runnerset
