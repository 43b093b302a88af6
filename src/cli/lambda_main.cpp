// mvr-lambda: the Lambda bootstrap's executable, only `lambda` and `version`, linked without
// libcurl so that a cold start loads a handful of libraries instead of libcurl's ~30
// (docs/lambda.md, "Cold start"). `mvr package lambda` bundles it when it is beside mvr.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "process/core_dumps.h"

int main(int argc, char** argv) {
  // The functions hold secrets (the webhook secret, a token or key): no core file.
  if (mvr::Status s = mvr::process::DisableCoreDumps(); !s.ok()) {
    std::fprintf(stderr, "mvr: warning: core dumps stay enabled: %s\n", s.message().c_str());
  }
  mvr::cli::Context ctx;
  CLI::App app{"mvr-lambda: the runner set's AWS Lambda functions"};
  app.require_subcommand(1);
  mvr::cli::AddVersionCommand(app, ctx);
  mvr::cli::AddLambdaCommand(app, ctx);
  CLI11_PARSE(app, argc, argv);
  return ctx.exit_code;
}
