// Warm pools end to end (001, the warm-pool piece) against both emulators and a real `mvr serve`:
// a warm-pool class serves a job by resuming a suspended VM and the pool refills, while the
// janitor (on a short period) leaves the suspended members alone; after the class's image
// changes, the old members are not used and are replaced by members of the new image.
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kOtherImage[] = "mvr-runner-b";

class RunnerSetWarmPool : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["classes"][0]["image"] = image_;
    UseWarmPoolOfOne(c);
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    stack.AddImage(kOtherImage, stack.StandInRunner());
  }

  // The class's pool members in `state` as GET /status shows them.
  int Members(const std::string& state) {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return -1;
    return s["classes"][0]["pool"]["members"].value(state, 0);
  }
  void AwaitPoolRecorded() override {
    EXPECT_TRUE(Eventually([&] { return Members("suspended") == 1; }, std::chrono::seconds(10)))
        << ServeStatus().dump();
  }
  // The class's VMs in `state` (as listed by its image).
  int ClassVms(const std::string& state) {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return -1;
    const json& vms = s["classes"][0]["vms"];
    return vms.is_object() ? vms.value(state, 0) : -1;
  }

  std::string image_ = kDemoImage;
};

TEST_F(RunnerSetWarmPool, ClassServesAJobByResumingASuspendedVmAndThePoolRefills) {
  ExpectWarmPoolServesAJobByResumingAndRefills();
  // GET /status shows the same pool.
  EXPECT_EQ(Members("suspended"), 1) << ServeStatus().dump();
  EXPECT_EQ(ClassVms("SUSPENDED"), 1);
  EXPECT_EQ(ServeStatus()["classes"][0]["pool"]["warmTarget"], 1);
}

TEST_F(RunnerSetWarmPool, OldImageMembersAreNotUsedAndAreReplaced) {
  ASSERT_TRUE(Eventually([&] { return Members("suspended") == 1; }, std::chrono::seconds(30)))
      << ServeStatus().dump();
  const int resumed = CountOperation("ResumeMicrovm");
  // The class moves to another image: a restart with the new configuration.
  EXPECT_TRUE(StopServe(SIGTERM).ok());
  image_ = kOtherImage;
  StartServe();
  // The old member is terminated and a member of the new image takes its place.
  ASSERT_TRUE(Eventually([&] { return ClassVms("SUSPENDED") == 1 && Members("suspended") == 1; },
                         std::chrono::seconds(30)))
      << ServeStatus().dump();
  EXPECT_GE(CountOperation("TerminateMicrovm"), 1);
  EXPECT_EQ(CountOperation("ResumeMicrovm"), resumed) << "the old member was never resumed";
  const int64_t id = QueueJob({"true"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
  EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  EXPECT_EQ(CountOperation("ResumeMicrovm"), resumed + 1) << "served by the new image's member";
}

}  // namespace
}  // namespace mvr::testbed
