// Warm pools end to end (001, the warm-pool piece) against both emulators and a real `mvr serve`:
// a warm-pool class serves a job by resuming a suspended VM and the pool refills, while the
// janitor (on a short period) leaves the suspended members alone; after the class's image
// changes, the old members are not used and are replaced by members of the new image.
#include "runner_set_e2e_fixture.h"

namespace mvr::demo {
namespace {

constexpr char kOtherImage[] = "mvr-runner-b";

class RunnerSetWarmPool : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["classes"][0]["image"] = image_;
    c["classes"][0]["warmPoolSize"] = 1;
    c["warmPool"] = {{"intervalSeconds", 1}};
    c["janitor"] = {{"intervalSeconds", 1}, {"strikes", 2}, {"graceSeconds", 2}};
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
  ASSERT_TRUE(Eventually([&] { return Members("suspended") == 1; }, std::chrono::seconds(30)))
      << ServeStatus().dump();
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  EXPECT_EQ(CountOperation("SuspendMicrovm"), 1);
  EXPECT_EQ(ServeStatus()["classes"][0]["pool"]["warmTarget"], 1);

  const int64_t id = QueueJob({"true"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
  EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  EXPECT_EQ(CountOperation("ResumeMicrovm"), 1) << "the job's VM is the resumed member";
  // The pool refills: one more pre-boot, and the job itself launched nothing cold.
  ASSERT_TRUE(Eventually([&] { return Members("suspended") == 1; }, std::chrono::seconds(30)))
      << ServeStatus().dump();
  EXPECT_EQ(CountOperation("RunMicrovm"), 2);
  EXPECT_EQ(Metric("launched"), 1);

  // Several janitor periods later the suspended member is still there, untouched.
  const int terminated = CountOperation("TerminateMicrovm");
  real_.sleeper.Sleep(Duration(5'000));
  EXPECT_EQ(Members("suspended"), 1);
  EXPECT_EQ(ClassVms("SUSPENDED"), 1);
  EXPECT_EQ(CountOperation("TerminateMicrovm"), terminated) << "nothing of the pool was reaped";
  EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
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
}  // namespace mvr::demo
