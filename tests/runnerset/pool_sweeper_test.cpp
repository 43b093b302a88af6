// PoolSweeper (pools/sweep/pool_sweeper.h), the one sweep over the warm pool's and the hot pool's
// sweepers: each class's members of each kind go to the sweeper of that pool, class by class in
// the order the sweepers were added, and a member of a class no longer configured is retired by
// its own pool's sweeper (claimed first unless the sweeper holds it already; one a launch holds
// is left alone). Recording sweepers stand in for the two pools; the rows are real.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {
namespace {

std::vector<std::string>* g_calls = nullptr;

template <PoolMember::Kind K>
class RecordingSweeper final : public PoolKindSweeper {
 public:
  explicit RecordingSweeper(PoolSweeperCore& /*core*/) {}
  PoolMember::Kind kind() const override { return K; }
  void SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                  PoolSweepReport& /*report*/) override {
    std::string line = std::string(PoolMemberKindName(K)) + " sweeps " + cls.label + ":";
    for (const PoolMember& m : members) line += " " + m.microvm_id;
    g_calls->push_back(line);
  }
  void Retire(const PoolMember& m, const std::string& reason, bool claim,
              PoolSweepReport& /*report*/) override {
    g_calls->push_back(std::string(PoolMemberKindName(K)) + " retires " + m.microvm_id +
                       (claim ? " claiming it" : "") + ": " + reason);
  }
};
using RecordingWarm = RecordingSweeper<PoolMember::Kind::kWarm>;
using RecordingHot = RecordingSweeper<PoolMember::Kind::kHot>;

class PoolSweeperTest : public RunnerSetTest {
 protected:
  PoolSweeperTest() {
    g_calls = &calls_;
    RunnerClass large = config_.classes[0];
    large.label = "mvr-large";
    config_.classes.push_back(large);
    Row("vm-small-warm", PoolMember::Kind::kWarm, "mvr-small");
    Row("vm-small-hot", PoolMember::Kind::kHot, "mvr-small");
    Row("vm-large-hot", PoolMember::Kind::kHot, "mvr-large");
    Row("vm-gone-warm", PoolMember::Kind::kWarm, "mvr-removed");
    Row("vm-gone-hot", PoolMember::Kind::kHot, "mvr-removed", kSweeperHolder);
    Row("vm-gone-taken", PoolMember::Kind::kHot, "mvr-removed", "a-launch");
  }
  ~PoolSweeperTest() override { g_calls = nullptr; }

  void Row(const std::string& id, PoolMember::Kind kind, const std::string& label,
           const std::string& holder = "") {
    PoolMember m;
    m.microvm_id = id;
    m.kind = kind;
    m.class_label = label;
    m.image = mvr::testing::kPlatformImage;
    m.created_ms = ToUnixMillis(m_.clock.Now());
    m.expires_ms = m.created_ms + 3'600'000;  // a row past its VM's maximum duration is gone
    ASSERT_TRUE(pool_.AddMember(m).ok());
    if (!holder.empty()) {
      ASSERT_TRUE(pool_.Claim(id, holder).value());
    }
  }
  // The sweeps in order, then the retirements (the rows' scan order) sorted.
  std::vector<std::string> Calls() {
    std::vector<std::string> out = calls_;
    auto retires = std::find_if(out.begin(), out.end(), [](const std::string& c) {
      return c.find(" retires ") != std::string::npos;
    });
    std::sort(retires, out.end());
    return out;
  }

  std::vector<std::string> calls_;
};

TEST_F(PoolSweeperTest, EachClassesMembersGoToTheirPoolsSweeperWarmBeforeHot) {
  PoolSweeper sweeper(config_, PoolSweeperDeps{m_.seam, platform_.vms(), pool_});
  sweeper.Add<RecordingWarm>();
  sweeper.Add<RecordingHot>();
  const PoolSweepReport report = sweeper.Sweep();
  EXPECT_EQ(report.errors, 0);
  EXPECT_EQ(Calls(), (std::vector<std::string>{
                         "warm sweeps mvr-small: vm-small-warm",
                         "hot sweeps mvr-small: vm-small-hot",
                         "warm sweeps mvr-large:",
                         "hot sweeps mvr-large: vm-large-hot",
                         "hot retires vm-gone-hot: its class is no longer configured",
                         "warm retires vm-gone-warm claiming it: its class is no longer configured",
                     }));
  ASSERT_TRUE(sweeper.LastSweep().has_value());
}

TEST_F(PoolSweeperTest, AMemberOfAPoolNoSweeperKeepsIsLeftAlone) {
  PoolSweeper sweeper(config_, PoolSweeperDeps{m_.seam, platform_.vms(), pool_});
  sweeper.Add<RecordingWarm>();
  sweeper.Sweep();
  EXPECT_EQ(Calls(), (std::vector<std::string>{
                         "warm sweeps mvr-small: vm-small-warm",
                         "warm sweeps mvr-large:",
                         "warm retires vm-gone-warm claiming it: its class is no longer configured",
                     }));
}

}  // namespace
}  // namespace mvr::runnerset::testing
