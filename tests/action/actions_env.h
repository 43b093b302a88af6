// The environment the Actions runtime gives a step of mvr start/stop (with the inputs a start
// needs), for the tests of the Action's input parsing.
#pragma once

#include "base/environment.h"

namespace mvr::action::testing {

inline MapEnvironment ActionsEnv() {
  MapEnvironment env;
  env.Set("GITHUB_REPOSITORY", "octo/app");
  env.Set("GITHUB_REPOSITORY_ID", "123");
  env.Set("GITHUB_RUN_ID", "456");
  env.Set("GITHUB_RUN_ATTEMPT", "2");
  env.Set("GITHUB_JOB", "build");
  env.Set("INPUT_GITHUB-TOKEN", "ghp_fixture_token_value");
  env.Set("INPUT_IMAGE-ID", "img-1");
  env.Set("INPUT_REGION", "us-east-1");
  return env;
}

}  // namespace mvr::action::testing
