// `mvr doctor --canary` end to end, on the doctor's fixture (doctor_e2e_fixture.h): the real
// binary launches one MicroVM of the class's image on the MicroVMs emulator (its real
// `mvr supervisor` and the stand-in runner), registers a JIT runner on the GitHub emulator,
// dispatches the canary workflow (`--dispatch-workflow mvr-canary.yml`) and waits for the job
// and the VM's end, printing each segment's time. A canary that fails midway names the segment
// and the likely cause, and still leaves no VM running and no runner registered.
#include <regex>

#include "tests/e2e/doctor_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class DoctorCanaryEndToEnd : public DoctorEndToEnd {
 protected:
  // The canary's runners GitHub still lists.
  std::vector<std::string> CanaryRunners() {
    std::vector<std::string> out;
    auto listed = workflow_->GitHub("GET", "/_emulator/runners");
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return out;
    const json runners = listed->is_array() ? *listed : listed->value("runners", json::array());
    for (const json& r : runners) {
      const std::string name = r.value("name", "");
      if (name.find("canary-") != std::string::npos) out.push_back(name);
    }
    return out;
  }
  // The state of each MicroVM of the class's image ("TERMINATED" ...).
  std::vector<std::string> VmStates() {
    aws::MicrovmsClient microvms = Microvms();
    // The emulator runs strict (requireImageArn): the listing takes the image's ARN.
    auto image = microvms.GetMicrovmImage(kSetImage);
    EXPECT_TRUE(image.ok()) << image.status().ToString();
    if (!image.ok()) return {};
    aws::ListMicrovmsRequest req;
    req.image_identifier = image->image_arn;
    auto listed = microvms.ListMicrovms(req);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> out;
    if (!listed.ok()) return out;
    for (const aws::MicrovmSummary& vm : listed->items) {
      out.push_back(aws::MicrovmStateName(vm.state));
    }
    return out;
  }
  // Every VM of the image ends (a terminate's hook takes a moment).
  void ExpectNoVmLeft() {
    const bool ended = Eventually(
        [&] {
          for (const std::string& s : VmStates()) {
            if (s != "TERMINATED") return false;
          }
          return true;
        },
        std::chrono::seconds(30));
    EXPECT_TRUE(ended) << "a canary VM is left";
  }
};

TEST_F(DoctorCanaryEndToEnd, RunsOneJobEndToEndTimesEachSegmentAndCleansUp) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  DoctorRun run = Doctor(Config(), {"--canary", "--canary-timeout-seconds", "120"});
  EXPECT_EQ(run.exit_code, 0) << run.output << run.log;
  for (const char* segment : {"registration", "RunMicrovm", "VM running", "runner online",
                              "job queued", "job started", "job completed", "VM terminated"}) {
    const std::regex timed(std::string("\n  ") + segment + " +[0-9]+\\.[0-9] s  ok ");
    EXPECT_TRUE(std::regex_search(run.output, timed)) << segment << " in:\n" << run.output;
  }
  EXPECT_NE(run.output.find("PASS        canary: one job end to end in"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("ended by its own supervisor"), std::string::npos) << run.output;
  EXPECT_TRUE(CanaryRunners().empty()) << run.output;
  ExpectNoVmLeft();
  ExpectNoSecrets(run);
}

// The workflow is not in the repository: the canary gets as far as a running VM and an online
// runner, fails at "job queued" with the cause, and its cleanup terminates the VM and removes
// the runner.
TEST_F(DoctorCanaryEndToEnd, FailingMidwayNamesTheSegmentAndStillCleansUp) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  DoctorRun run = Doctor(Config(), {"--canary", "--canary-workflow", "missing.yml",
                                    "--canary-timeout-seconds", "120"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("FAIL        canary: at job queued"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("likely cause: GitHub did not take the dispatch"), std::string::npos)
      << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex("\n  runner online +[0-9.]+ s  ok ")))
      << run.output;
  EXPECT_NE(run.output.find("terminated by the canary"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("removed by the canary"), std::string::npos) << run.output;
  EXPECT_TRUE(CanaryRunners().empty()) << run.output;
  ExpectNoVmLeft();
}

// A check that fails means the canary is not run: no VM is launched on a broken assumption.
TEST_F(DoctorCanaryEndToEnd, IsNotRunWhenACheckFailed) {
  image_runner_ = "2.321.0";
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  DoctorRun run = Doctor(Config(), {"--canary"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_EQ(Line(run, "canary").rfind("NOT CHECKED", 0), 0u) << run.output;
  EXPECT_TRUE(VmStates().empty()) << run.output;
}

}  // namespace
}  // namespace mvr::testbed
