// An image's ARN from what a user configured (a name, an id or the ARN). The service model calls
// RunMicrovm's imageIdentifier "ARN or ID", but AWS's guide says run-microvm's image identifier
// "must be the ARN of the MicroVM image"; a name resolved once through GetMicrovmImage works under
// both readings, for RunMicrovm and ListMicrovms alike.
// Thread-safety: stateless; safe wherever its service is.
#pragma once

#include <string>

#include "aws/microvms/microvms.h"
#include "base/seam.h"

namespace mvr::fleet {

// `identifier` itself when it is an image ARN; otherwise GetMicrovmImage's imageArn (throttling
// and transient failures retried until `deadline`). Errors say which image and what to do.
Result<std::string> ResolveImageArn(const Seam& seam, aws::MicrovmService& microvms,
                                    const std::string& identifier, TimePoint deadline);

}  // namespace mvr::fleet
