// Seed 000's container test on a real virtual machine (label vm, deep tier: a QEMU guest under
// software emulation, minutes a run). A warm pair of jobs on one MicroVM whose image runs Debian's
// Docker engine: the first job imports a Node.js and a Redis image (roots built offline from this
// machine's Debian packages by container_roots.sh, the closest here to the seed's node:24; nothing
// is pulled), builds an image from the Node one, runs a Node container and leaves a Redis service
// container running with a key in memory. The VM is suspended for real (dockerd and containerd
// stopped, the guest's memory saved, its QEMU process ended) and resumed, and the second job finds
// the same image layers without importing anything, rebuilds from the build cache, runs the Node
// container again and reads the key from the same Redis process. Every container has no network
// (--network none). Skipped, with the reason, where QEMU, the guest kernel, Node.js or redis-tools
// is missing.
#include <regex>

#include "action_e2e_fixture.h"
#include "vm_support.h"

namespace mvr::testbed {
namespace {

// The image of this test: the stand-in runner under the supervisor, with a real Docker engine.
constexpr char kContainersImage[] = "mvr-containers";

std::string RootsDir() { return std::string(MVR_BINARY_DIR) + "/tests/e2e/container-roots"; }
std::string NodeTar() { return RootsDir() + "/node-root.tar"; }
std::string RedisTar() { return RootsDir() + "/redis-root.tar"; }

// The build of the first job, repeated unchanged by the second: one layer made by a Node program
// (exec form: the root has no shell), and a command that prints what that layer holds.
constexpr char kWriteDockerfile[] =
    "mkdir -p \"$RUNNER_TEMP/ctx\" && cat > \"$RUNNER_TEMP/ctx/Dockerfile\" <<'EOF'\n"
    "FROM mvr-node:local\n"
    "RUN [\"/usr/bin/node\", \"-e\", \"require('fs').writeFileSync('/built.txt', "
    "'built with node ' + process.version)\"]\n"
    "CMD [\"/usr/bin/node\", \"-e\", \"console.log('node-container-ok ' + "
    "require('fs').readFileSync('/built.txt', 'utf8'))\"]\n"
    "EOF";
// Docker's classic builder (the guest's Debian engine has no BuildKit): it says "Using cache" for
// each step it did not run again.
constexpr char kBuild[] =
    "DOCKER_BUILDKIT=0 docker build --network none -t warm-cache-proof \"$RUNNER_TEMP/ctx\" && "
    "echo \"built $(docker image inspect --format '{{.Id}}' warm-cache-proof)\"";
constexpr char kRunNode[] = "docker run --rm --network none warm-cache-proof";
// The imported images: id and the digest of their one layer.
constexpr char kShowImages[] =
    "for i in mvr-node:local mvr-redis:local; do echo \"image $i $(docker image inspect "
    "--format '{{.Id}} {{index .RootFS.Layers 0}}' $i)\"; done";
// The Redis process as Redis and Docker see it: its run id (new at each start of the server),
// its pid in the container and in the guest, and when Docker started it.
constexpr char kShowRedis[] =
    "echo \"redis $(docker exec redis-service /usr/bin/redis-cli INFO server | "
    "grep -E '^(run_id|process_id):' | tr -d '\\r' | tr '\\n' ' ')guest-pid $(docker inspect "
    "--format '{{.State.Pid}} started {{.State.StartedAt}}' redis-service)\"";

std::string Match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? m[1].str() : "";
}

class VmContainers : public ActionEndToEnd {
 protected:
  void SetUp() override {
    if (std::string why = WhyNoVms(); !why.empty()) GTEST_SKIP() << why;
    if (!HasProgram("node") || !HasProgram("redis-check-rdb")) {
      GTEST_SKIP() << "no node or redis-check-rdb to build the container roots from (scripts/"
                      "setup.sh deep installs nodejs and redis-tools)";
    }
    BuildRoots();
    if (HasFailure()) return;
    ActionEndToEnd::SetUp();
  }
  void ConfigureStack(LocalStack& stack) override {
    stack.UseQemuVms(KernelDir());
    if (KeepContainers()) stack.KeepContainersAcrossJobs();
    // The image's program names both roots, so the guest's initramfs carries them (at these same
    // paths); the guest's memory holds them and Docker's engine, hence the larger VM.
    stack.AddImage(
        kContainersImage,
        "# container roots: " + NodeTar() + " " + RedisTar() + "\n" + stack.StandInRunner(),
        GuestDocker::kReal);
    stack.AddMicrovmsArgs({"--vm-memory-mib", "1536"});
    // The resume hook's 60 s (the service's longest) for one dockerd start, not a third of it per
    // driver of the fallback chain: under TCG, dockerd restoring a live container takes longer
    // than 14 s, and the guest settles on overlay2 anyway.
    stack.AddSupervisorArgs({"--force-driver", "overlay2"});
  }

  // Builds the roots once into the build tree (the script rebuilds only what is stale).
  void BuildRoots() {
    process::ProcessSpec spec;
    spec.argv = {"bash", std::string(MVR_SOURCE_DIR) + "/tests/e2e/container_roots.sh", RootsDir()};
    spec.env = {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
    auto built = processes_.Run(spec, std::chrono::seconds(300));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    ASSERT_TRUE(built->exit.ok()) << built->output;
  }

  JobResult LongJob(const std::string& label, const std::vector<std::string>& steps) {
    // Importing 120 MB and running Node under TCG on a loaded machine takes minutes.
    auto job = workflow_->RunJob(label, steps, std::chrono::seconds(900));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : JobResult{};
  }

  // Whether the image keeps containers across jobs (dockerd --live-restore, no prune).
  virtual bool KeepContainers() const { return true; }

  struct WarmPair {
    StepResult first, second;
    JobResult job1, job2;
  };
  // The first job (import, build, run Node, start Redis and set the key), a real suspend, and
  // the second job on the same VM (no import: show the images, build again, run Node, read the
  // key and the Redis process).
  WarmPair RunWarmPair() {
    WarmPair p;
    p.first = Step("start", "containers-first",
                   {{"SERVER", "vm-containers"},
                    {"IMAGE_ID", kContainersImage},
                    {"STARTUP_TIMEOUT_SECONDS", "600"}});
    if (!p.first.ok()) return p;
    p.job1 = LongJob(
        p.first.outputs["label"],
        {"docker import " + NodeTar() + " mvr-node:local && docker import " + RedisTar() +
             " mvr-redis:local",
         kShowImages, kWriteDockerfile, kBuild, kRunNode,
         "docker run -d --network none --name redis-service mvr-redis:local "
         "/usr/bin/redis-server --save '' --appendonly no",
         "for i in $(seq 1 120); do docker exec redis-service /usr/bin/redis-cli PING 2>/dev/null "
         "| grep -q PONG && exit 0; sleep 1; done; exit 1",
         "docker exec redis-service /usr/bin/redis-cli SET warm-key \"from $RUNNER_NAME\"",
         kShowRedis});
    std::printf("the first job's output:\n%s\n", p.job1.stdout_text.c_str());
    EXPECT_EQ(p.job1.conclusion, "success") << p.job1.stdout_text;
    StepResult park = Step("stop", "containers-first", {{"SERVER", p.first.outputs["server"]}});
    EXPECT_TRUE(park.ok()) << park.Describe();
    EXPECT_EQ(StateOf(p.first.outputs["microvm-id"]), "SUSPENDED");
    p.second = Step("start", "containers-second",
                    {{"SERVER", p.first.outputs["server"]},
                     {"IMAGE_ID", kContainersImage},
                     {"STARTUP_TIMEOUT_SECONDS", "600"}});
    if (!p.second.ok()) return p;
    EXPECT_EQ(p.second.outputs["microvm-id"], p.first.outputs["microvm-id"]);
    EXPECT_EQ(p.second.outputs["warm-hit"], "true");
    EXPECT_NE(p.second.outputs["runner-name"], p.first.outputs["runner-name"]);
    // Nothing is imported or pulled.
    p.job2 = LongJob(p.second.outputs["label"],
                     {kShowImages, kWriteDockerfile, kBuild, kRunNode,
                      "echo \"warm-key $(docker exec redis-service /usr/bin/redis-cli GET "
                      "warm-key)\"",
                      kShowRedis});
    std::printf("the second job's output:\n%s\n", p.job2.stdout_text.c_str());
    EXPECT_EQ(p.job2.conclusion, "success") << p.job2.stdout_text;
    return p;
  }

  // The second job found the first job's images (same ids and layer digests), its build was the
  // cache's (not a rebuild under the same tag), and Node ran in both.
  static void ExpectSameLayersAndACacheHit(const WarmPair& p) {
    for (const char* image : {"mvr-node:local", "mvr-redis:local"}) {
      const std::string pattern =
          std::string("image ") + image + " (sha256:[0-9a-f]+ sha256:[0-9a-f]+)";
      const std::string before = Match(p.job1.stdout_text, pattern);
      EXPECT_FALSE(before.empty()) << image << "\n" << p.job1.stdout_text;
      EXPECT_EQ(Match(p.job2.stdout_text, pattern), before) << image;
    }
    const std::string built = Match(p.job1.stdout_text, "built (sha256:[0-9a-f]+)");
    EXPECT_FALSE(built.empty()) << p.job1.stdout_text;
    EXPECT_EQ(Match(p.job2.stdout_text, "built (sha256:[0-9a-f]+)"), built);
    EXPECT_NE(p.job2.stdout_text.find("Using cache"), std::string::npos) << p.job2.stdout_text;
    for (const JobResult* job : {&p.job1, &p.job2}) {
      EXPECT_NE(Match(job->stdout_text, "node-container-ok built with node (v[0-9.]+)"), "")
          << job->stdout_text;
    }
  }

  // Stops the second job's server and terminates the VM.
  void TearDownPair(WarmPair& p) {
    if (p.second.ok()) {
      StepResult park = Step("stop", "containers-second", {{"SERVER", p.second.outputs["server"]}});
      EXPECT_TRUE(park.ok()) << park.Describe();
    }
    StepResult done =
        Step("stop", "containers-teardown", {{"MICROVM_ID", p.first.outputs["microvm-id"]}});
    EXPECT_TRUE(done.ok()) << done.Describe();
    ExpectNothingLeft();
  }
};

// The Redis process as kShowRedis prints it.
constexpr char kRedisProcess[] =
    "(redis process_id:[0-9]+ run_id:[0-9a-f]+ guest-pid [0-9]+ started [0-9T:.Z-]+)";

TEST_F(VmContainers, NodeAndRedisContainersSurviveASuspendAndTheSecondJobFindsLayersAndWarmRedis) {
  WarmPair p = RunWarmPair();
  ASSERT_TRUE(p.first.ok()) << p.first.Describe();
  ASSERT_TRUE(p.second.ok()) << p.second.Describe();
  ExpectSameLayersAndACacheHit(p);
  // A warm Redis: the key written by the first job, read by the second from the same process
  // (same run id, pid and start time; the key was never saved: --save '' --appendonly no).
  EXPECT_NE(p.job2.stdout_text.find("warm-key from " + p.first.outputs["runner-name"]),
            std::string::npos)
      << p.job2.stdout_text;
  const std::string redis_before = Match(p.job1.stdout_text, kRedisProcess);
  EXPECT_FALSE(redis_before.empty()) << p.job1.stdout_text;
  EXPECT_EQ(Match(p.job2.stdout_text, kRedisProcess), redis_before)
      << "the Redis process did not survive the suspend and resume";
  TearDownPair(p);
}

// The same pair with the supervisor's defaults (dockerd without --live-restore, every container
// removed between warm jobs): the layers and the build cache stay on the VM's disk, but the Redis
// service and its key are gone, which is why the test above's image keeps its containers. It
// also shows that the assertions above fail without that.
class VmContainersWithDefaultCleanup : public VmContainers {
 protected:
  bool KeepContainers() const override { return false; }
};

TEST_F(VmContainersWithDefaultCleanup, TheLayersStayButTheRedisServiceAndItsKeyAreGone) {
  WarmPair p = RunWarmPair();
  ASSERT_TRUE(p.first.ok()) << p.first.Describe();
  ASSERT_TRUE(p.second.ok()) << p.second.Describe();
  ExpectSameLayersAndACacheHit(p);
  EXPECT_FALSE(Match(p.job1.stdout_text, kRedisProcess).empty()) << p.job1.stdout_text;
  EXPECT_EQ(p.job2.stdout_text.find("warm-key from"), std::string::npos) << p.job2.stdout_text;
  EXPECT_EQ(Match(p.job2.stdout_text, kRedisProcess), "") << p.job2.stdout_text;
  TearDownPair(p);
}

}  // namespace
}  // namespace mvr::testbed
