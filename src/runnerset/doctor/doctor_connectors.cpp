#include "runnerset/doctor/doctor_connectors.h"

#include <set>

#include "fleet/image_arn.h"
#include "fleet/network_connectors.h"

namespace mvr::runnerset {
namespace {

constexpr char kImageArns[] = "image arns";
constexpr char kConnectors[] = "network connectors";
constexpr Duration kDoctorReadTime{30'000};

void CheckImageArns(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  if (clients.microvms == nullptr) return report.NotChecked(kImageArns, "no MicroVMs client");
  std::set<std::string> images;
  for (const RunnerClass& cls : config.classes) images.insert(cls.image);
  std::string found;
  for (const std::string& image : images) {
    Result<std::string> arn = fleet::ResolveImageArn(clients.seam, *clients.microvms, image,
                                                     clients.seam.clock.Now() + kDoctorReadTime);
    if (!arn.ok()) {
      return report.Fail(kImageArns, arn.status().message(),
                         "give classes[].image as the image's ARN, or a name of an existing image "
                         "the set's roles may read (lambda:GetMicrovmImage): the set resolves "
                         "names once when it starts");
    }
    found += (found.empty() ? "" : ", ") + (image == *arn ? image : image + " -> " + *arn);
  }
  report.Pass(kImageArns, found);
}

// The connectors the classes send, as the set resolves them; fails the check on a class whose
// connectors let no traffic in.
bool GatherConnectors(const ServeConfig& config, const std::string& region, DoctorReport& report,
                      std::set<std::string>& arns) {
  for (size_t i = 0; i < config.classes.size(); ++i) {
    const RunnerClass& cls = config.classes[i];
    const fleet::NetworkConnectors defaults = fleet::DefaultConnectors(region);
    auto resolve = [&](const std::optional<std::vector<std::string>>& given,
                       const std::vector<std::string>& fallback,
                       const std::string& what) -> Result<std::vector<std::string>> {
      if (!given) return fallback;
      return fleet::ResolveConnectors(*given, region, what);
    };
    const std::string key = "classes[" + std::to_string(i) + "]";
    Result<std::vector<std::string>> in =
        resolve(cls.ingress_connectors, defaults.ingress, key + ".ingressConnectors");
    Result<std::vector<std::string>> out =
        resolve(cls.egress_connectors, defaults.egress, key + ".egressConnectors");
    if (!in.ok() || !out.ok()) {
      report.Fail(kConnectors, (!in.ok() ? in : out).status().message(),
                  "name connector ARNs, or AWS's managed ALL_INGRESS / INTERNET_EGRESS");
      return false;
    }
    if (!fleet::AllowsIngress(*in)) {
      report.Fail(kConnectors,
                  key + " (" + cls.label +
                      ") sends no ingress connector that lets traffic in: every launch delivers "
                      "its runner through the VM's endpoint, which AWS opens only through an "
                      "ingress connector",
                  "leave " + key + ".ingressConnectors out (AWS's ALL_INGRESS) or name one");
      return false;
    }
    arns.insert(in->begin(), in->end());
    arns.insert(out->begin(), out->end());
  }
  return true;
}

}  // namespace

void CheckImageArnsAndConnectors(const ServeConfig& config, DoctorClients& clients,
                                 DoctorReport& report) {
  CheckImageArns(config, clients, report);
  if (clients.region.empty()) return report.NotChecked(kConnectors, "no AWS region");
  std::set<std::string> arns;
  if (!GatherConnectors(config, clients.region, report, arns)) return;
  std::string listed;
  for (const std::string& a : arns) listed += (listed.empty() ? "" : ", ") + a;
  if (clients.sts == nullptr || clients.iam == nullptr) {
    return report.Pass(kConnectors, listed +
                                        " (lambda:PassNetworkConnector not simulated: no "
                                        "IAM client)");
  }
  Result<aws::CallerIdentity> who = aws::GetCallerIdentity(*clients.sts);
  Result<std::string> principal =
      who.ok() ? aws::PolicySourceArn(who->arn) : Result<std::string>(who.status());
  std::string denied;
  for (const std::string& arn : arns) {
    Result<std::vector<aws::SimulatedDecision>> r =
        principal.ok() ? aws::SimulatePrincipalPolicy(*clients.iam, *principal,
                                                      {"lambda:PassNetworkConnector"}, arn)
                       : Result<std::vector<aws::SimulatedDecision>>(principal.status());
    if (!r.ok()) {
      return report.Pass(kConnectors, listed + " (lambda:PassNetworkConnector not simulated: " +
                                          r.status().message() + ")");
    }
    for (const aws::SimulatedDecision& d : *r) {
      if (!d.allowed()) denied += (denied.empty() ? "" : ", ") + d.resource;
    }
  }
  if (!denied.empty()) {
    return report.Fail(kConnectors,
                       "lambda:PassNetworkConnector denied for " + *principal + " on " + denied,
                       "allow it on those connectors (the PassNetworkConnectors statement of "
                       "deploy/iam/runner-set-launcher.json and runner-set-warm-pool.json)");
  }
  report.Pass(kConnectors,
              listed + " (lambda:PassNetworkConnector allowed for " + *principal + ")");
}

}  // namespace mvr::runnerset
