// Reads the program an image runs from its Dockerfile: ENTRYPOINT and CMD (exec form, a JSON
// array; shell form runs under /bin/sh -c) and ENV. The emulator runs that program locally with
// the artifact directory as its working directory; it does not build a container.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "emulate/microvms/model/model_types.h"

namespace mvr::emulate::microvms {

// InvalidArgument when there is neither CMD nor ENTRYPOINT, or an exec form is not a JSON array
// of strings.
Result<ProgramSpec> ParseDockerfile(std::string_view text);

}  // namespace mvr::emulate::microvms
