// Warm- and hot-pool unit-test fixture: the runner set over the in-process platform
// (platform_fixture.h) with a class that keeps a pool of suspended VMs; the launcher, the sweeper
// and the janitor built over the MicroVMs and GitHub models.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {

class WarmPoolTest : public RunnerSetTest {
 protected:
  WarmPoolTest() {
    config_.classes[0].max_duration_seconds = 3600;
    config_.classes[0].warm_pool_size = 2;
    config_.warm_pool.replace_before_seconds = 600;
  }

  // Sweeps until no member is on its way (booting or parking; a sweep follows its pre-boots for
  // a minute, so one sweep is enough unless a VM is slower). The first sweep's report.
  PoolSweepReport Fill() {
    PoolSweepReport first = Sweeper().Sweep();
    for (int i = 0; i < 3 && (Members().count("booting") || Members().count("parking")); ++i) {
      Sweeper().Sweep();
    }
    return first;
  }
  // A launch for a job queued in GitHub now.
  LaunchIntent NewJob() { return Intent(QueueJob()); }
  // The requests that change something (every method but GET) in the platform's trace from `from`
  // on, with the VM and runner ids left in.
  std::vector<std::string> Changes(size_t from = 0) const {
    std::vector<std::string> out;
    for (size_t i = from; i < platform_.trace.size(); ++i) {
      if (platform_.trace[i].rfind("GET ", 0) != 0) out.push_back(platform_.trace[i]);
    }
    return out;
  }
  // Among the changes from `from` on, runner `runner_id`'s registration is deleted, then VM `vm`
  // is terminated: a hot member's runner goes before its VM.
  void ExpectRunnerDeletedBeforeVm(size_t from, int64_t runner_id, const std::string& vm) const {
    const std::vector<std::string> changes = Changes(from);
    const auto deleted =
        std::find(changes.begin(), changes.end(),
                  "DELETE /repos/octo/app/actions/runners/" + std::to_string(runner_id));
    const auto terminated =
        std::find(changes.begin(), changes.end(), "DELETE /2025-09-09/microvms/" + vm);
    ASSERT_NE(deleted, changes.end());
    ASSERT_NE(terminated, changes.end());
    EXPECT_LT(deleted, terminated) << "the registration goes before its VM";
  }
};

}  // namespace mvr::runnerset::testing
