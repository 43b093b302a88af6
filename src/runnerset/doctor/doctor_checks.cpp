// The list of `mvr doctor`'s first-deployment checks (doctor_checks.h): one line per check.
#include "runnerset/doctor/doctor_checks.h"

namespace mvr::runnerset {

std::vector<DoctorCheck> FirstDeploymentChecks() {
  return {
      {"runner version", &CheckRunnerVersions},
  };
}

}  // namespace mvr::runnerset
