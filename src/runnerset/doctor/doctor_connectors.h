// `mvr doctor`'s checks of what every RunMicrovm of the set carries: each class's image resolves
// to an ARN (RunMicrovm and ListMicrovms get the ARN), and its network connectors let traffic in
// (the runner's delivery goes through the VM's endpoint) and may be passed
// (lambda:PassNetworkConnector, simulated where IAM's policy simulator answers).
// Thread-safety: runs on the doctor's one thread.
#pragma once

#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {

// Adds the checks "image arns" and "network connectors" to `report`.
void CheckImageArnsAndConnectors(const ServeConfig& config, DoctorClients& clients,
                                 DoctorReport& report);

}  // namespace mvr::runnerset
