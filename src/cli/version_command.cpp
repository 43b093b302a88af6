#include <cstdio>

#include "cli/commands.h"

// How this binary was built, kept in its read-only data (strip leaves it) for `mvr package lambda`,
// which reads it from the bytes it packs (lambda/package.h, BuildMarkerOf): the build type and
// whether this is the whole mvr or the Lambda bootstrap build.
#ifndef MVR_BUILD_TYPE
#define MVR_BUILD_TYPE "unknown"
#endif
#ifndef MVR_BUILD_FLAVOUR
#define MVR_BUILD_FLAVOUR "mvr"
#endif
extern const char kMvrBuildMarker[];
[[gnu::used]] const char kMvrBuildMarker[] =
    "mvr-build-marker:" MVR_BUILD_TYPE ";" MVR_BUILD_FLAVOUR ";";

namespace mvr::cli {

void AddVersionCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("version", "Print mvr's version");
  cmd->callback([&ctx] {
    std::printf("mvr %s (%s, %s build)\n", MVR_VERSION, MVR_BUILD_FLAVOUR, MVR_BUILD_TYPE);
    ctx.exit_code = 0;
  });
}

}  // namespace mvr::cli
