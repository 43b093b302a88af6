// What a runner set settles about its classes once, when it starts, before any launch: each
// class's image ARN (RunMicrovm and ListMicrovms get the ARN, which works whether the service
// takes a bare name or not) and its network connectors (AWS's managed ones unless configured).
// Thread-safety: call before the set's threads start; the config is read-only afterwards.
#pragma once

#include <string>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "fleet/network_connectors.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {

// Fills every class's image_arn (one GetMicrovmImage per distinct image that is not an ARN) and
// its ingress/egress connectors: unset → the managed defaults of `region`; managed names → their
// ARNs. Errors name the class ("classes[1].image: ...") and what to do.
Status ResolveClasses(ServeConfig& config, const Seam& seam, aws::MicrovmService& microvms,
                      const std::string& region);

// The connectors a launch of `cls` sends (its lists as resolved; unset sends none).
fleet::NetworkConnectors ConnectorsOf(const RunnerClass& cls);

}  // namespace mvr::runnerset
