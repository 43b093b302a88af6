// A MicrovmModel on a manual clock with a scripted host (an EffectDriver): every due effect is
// recorded and completed at once, successfully unless a hook is told to fail.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "emulate/microvms/model/effect_driver.h"
#include "emulate/microvms/model/microvm_model.h"

namespace mvr::emulate::microvms {

class ModelFixture : public ::testing::Test {
 protected:
  ModelFixture() { Rebuild(MicrovmModelOptions()); }

  void Rebuild(MicrovmModelOptions options) {
    model_ =
        std::make_unique<MicrovmModel>(Seam{clock_, sleeper_, random_, secure_, logger_}, options);
    ProgramSpec program;
    program.argv = {"/bin/guest"};
    ASSERT_TRUE(model_->RegisterImage("img", program).ok());
  }

  // Executes due effects (and those they cause) until none is due; returns what ran.
  std::vector<Effect> Drain() {
    EffectDriver driver(*model_, [this](const Effect& e) {
      EffectOutcome outcome;
      if (e.kind == Effect::Kind::kCallHook && failing_hooks_.count(e.hook) != 0) {
        outcome = EffectOutcome::Failure("hook answered 500");
      }
      if (e.kind == Effect::Kind::kPrepareArtifact && outcome.ok) {
        ProgramSpec p;
        p.argv = {"/bin/built"};
        outcome.program = p;
      }
      log_.push_back(Describe(e));
      return outcome;
    });
    return driver.ExecuteDue();
  }

  static std::string Describe(const Effect& e) {
    if (e.kind == Effect::Kind::kCallHook) return std::string("hook:") + HookName(e.hook);
    return EffectKindName(e.kind);
  }

  Result<nlohmann::json> Call(const std::string& op, const nlohmann::json& in) {
    return model_->Invoke(op, in);
  }

  // Runs a VM of "img" and drives it to RUNNING; returns its id.
  std::string RunningVm(nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json in = {{"imageIdentifier", "img"}};
    in.update(extra);
    auto out = Call("RunMicrovm", in);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return "";
    Drain();
    std::string id = (*out)["microvmId"];
    EXPECT_EQ(model_->StateOf(id), MicrovmState::kRunning);
    return id;
  }

  std::string StateOf(const std::string& id) {
    auto out = Call("GetMicrovm", {{"microvmIdentifier", id}});
    return out.ok() ? (*out)["state"].get<std::string>() : out.status().ToString();
  }

  void Advance(std::chrono::milliseconds d) {
    clock_.Advance(d);
    model_->Tick();
    Drain();
  }

  ManualClock clock_;
  SeededRandom random_{42};
  SeededRandom secure_{7};
  ManualSleeper sleeper_{clock_};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  std::unique_ptr<MicrovmModel> model_;
  std::set<Hook> failing_hooks_;
  std::vector<std::string> log_;
};

}  // namespace mvr::emulate::microvms
