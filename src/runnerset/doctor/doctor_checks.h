// The checks of `mvr doctor` that docs/first-deployment.md walks through, one per assumption a
// first deployment makes (issue 52), each a small function in its own file. They run after the
// configuration, GitHub, image, store and AWS checks (doctor.h), with the clients those wired.
// To add one: write `void CheckSomething(const ServeConfig&, DoctorClients&, DoctorReport&)` in
// doctor_something.cpp, declare it below, and add one line to FirstDeploymentChecks
// (doctor_checks.cpp). A check reports PASS, FAIL (with the fix) or NOT CHECKED (with why) under
// its own name, makes no change, and never puts a secret in the report.
// Thread-safety: run on one thread, in order.
#pragma once

#include <vector>

#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {

using DoctorCheckFn = void (*)(const ServeConfig& config, DoctorClients& clients,
                               DoctorReport& report);

struct DoctorCheck {
  const char* name;  // what docs/first-deployment.md calls it
  DoctorCheckFn run;
};

// The checks in the order they run.
std::vector<DoctorCheck> FirstDeploymentChecks();

// "runner version <class>": GitHub accepts the runner each class's image carries (at least
// github::kMinRunnerVersion, and not past 30 days behind the latest release), by the version
// `mvr image build` recorded (doctor_runner_version.cpp).
void CheckRunnerVersions(const ServeConfig& config, DoctorClients& clients, DoctorReport& report);

}  // namespace mvr::runnerset
