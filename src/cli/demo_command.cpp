#include <unistd.h>
#include <climits>

#include "cli/commands.h"
#include "emulate/github/runner_versions.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "testbed/demo.h"
#include "testbed/runner_set_demo.h"

namespace mvr::cli {
namespace {

// This very binary, so every part of the demo runs the same build.
std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "mvr";
}

struct DemoFlags {
  bool action = false;
  int jobs = 0;  // 0: the mode's default
  bool warm_pair = true;
  std::string work_dir;
  bool keep = false;
  std::string run_body = "raw";
  std::string vm = "process";
  std::string vm_arch = "x86_64";
  testbed::RunnerSetDemoOptions set;
};

int RunDemo(DemoFlags& f, Context& ctx) {
  process::PosixProcessRunner processes;
  http::CurlHttpClient http;
  Seam seam = ctx.seam();
  if (f.action) {
    if (f.jobs > 20) {
      std::fprintf(stderr, "mvr demo --action: --jobs is at most 20 (the jobs run at once)\n");
      return 2;
    }
    testbed::DemoOptions options;
    options.mvr_path = SelfPath();
    if (f.jobs > 0) options.ephemeral_jobs = f.jobs;
    options.warm_pair = f.warm_pair;
    options.work_dir = f.work_dir;
    options.keep_work_dir = f.keep;
    options.run_body = f.run_body;
    options.vm = f.vm;
    options.vm_arch = f.vm_arch;
    return testbed::Demo(seam, processes, http, options).Run();
  }
  testbed::RunnerSetDemoOptions options = f.set;
  options.mvr_path = SelfPath();
  if (f.jobs > 0) options.jobs = f.jobs;
  options.work_dir = f.work_dir;
  options.keep_work_dir = f.keep;
  options.run_body = f.run_body;
  options.vm = f.vm;
  options.vm_arch = f.vm_arch;
  return testbed::RunnerSetDemo(seam, processes, http, options).Run();
}

// What breaks runner fleets in the field (docs/runner-set-failures.md): the GitHub
// emulator's faults the demo passes on.
void AddFieldFaultOptions(CLI::App& cmd, testbed::RunnerSetDemoOptions& set) {
  cmd.add_option("--runner-busy-lies", set.runner_busy_lies,
                 "probability that the GitHub emulator's runner listing or GET says busy:false "
                 "for a runner running a job (actions/runner #4422); no job may be lost to it")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--assignment", set.assignment,
                 "which idle runner the GitHub emulator hands a queued job: oldest, or random "
                 "(any whose labels match: a runner launched for one job may take another)")
      ->check(CLI::IsMember({"oldest", "random"}))
      ->capture_default_str();
  cmd.add_option("--min-runner-version", set.min_runner_version,
                 "the GitHub emulator refuses runners older than this version (actions/runner "
                 "#4392); mvr-small's runner reports 2.332.0 and mvr-large's this version, so "
                 "with a higher minimum mvr-small turns unhealthy and its jobs fall back to "
                 "mvr-large (its fallbackClass)")
      ->check([](const std::string& v) {
        Status s = emulate::github::CheckRunnerVersion(v);
        return s.ok() ? std::string() : s.message();
      });
  cmd.add_option("--rate-limits", set.rate_limits,
                 "github: the GitHub emulator enforces GitHub's secondary rate limits (80 JIT "
                 "configs a minute, 500 an hour, ...); the set paces itself and loses no job")
      ->check(CLI::IsMember({"off", "github"}))
      ->capture_default_str();
}

// The runner set demo's emulated platform: its pace, delays and faults.
void AddPlatformOptions(CLI::App& cmd, testbed::RunnerSetDemoOptions& set) {
  cmd.add_option("--run-rate", set.run_rate,
                 "RunMicrovm calls per second the MicroVMs emulator allows (the platform's quota)")
      ->check(CLI::Range(0.1, 1000.0))
      ->capture_default_str();
  cmd.add_option("--vm-boot-ms", set.vm_boot_ms,
                 "median time from RunMicrovm to the VM's program starting (log-normal, p90 = "
                 "1.7x; 0: at once)")
      ->check(CLI::Range(0, 600'000))
      ->capture_default_str();
  cmd.add_option("--boot-failure", set.boot_failure,
                 "probability that a launched VM never boots (the launcher must recover)")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  cmd.add_option("--webhook-delay-ms", set.webhook_delay_ms,
                 "webhook deliveries are delayed uniformly between 0 and this")
      ->check(CLI::Range(0, 600'000))
      ->capture_default_str();
  cmd.add_option("--webhook-duplication", set.webhook_duplication,
                 "probability that a webhook is delivered twice")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--runner-startup-ms", set.runner_startup_ms,
                 "the stand-in runner's start-up delay and its registration delay, each (the "
                 "real runner: about 8200 and 9000)")
      ->check(CLI::Range(0, 600'000))
      ->capture_default_str();
  cmd.add_option("--runner-registration-ms", set.runner_registration_ms,
                 "the stand-in runner's registration delay alone (the real runner: about 9000; "
                 "default: the same as --runner-startup-ms)")
      ->check(CLI::Range(0, 600'000));
  cmd.add_option("--runner-offline-after-seconds", set.runner_offline_after_seconds,
                 "the GitHub emulator shows an idle runner that stopped polling offline after "
                 "this (GitHub: about a minute); a hot member is claimable only then")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd.add_option("--microvms-config", set.microvms_config,
                 "a `mvr emulate microvms --config` file for every other knob (replaces "
                 "--run-rate, --vm-boot-ms and --boot-failure)")
      ->check(CLI::ExistingFile);
}

// The runner set demo's burst: its pools, its jobs, how long it may take and its report.
void AddBurstOptions(CLI::App& cmd, testbed::RunnerSetDemoOptions& set) {
  cmd.add_option("--warm-pool", set.warm_pool,
                 "mvr-small keeps this many suspended VMs (its warmPoolSize), filled before the "
                 "burst; compare its p50s with mvr-large's")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd.add_option("--hot-pool", set.hot_pool,
                 "mvr-small keeps this many suspended VMs whose runners are registered and "
                 "connected (its hotPoolSize), filled before the burst")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd.add_option("--job-seconds", set.job_seconds, "how long each queued job runs")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  cmd.add_option("--timeout-seconds", set.timeout_seconds,
                 "how long the burst may take to complete")
      ->check(CLI::Range(10, 7200))
      ->capture_default_str();
  cmd.add_option("--report", set.report_html,
                 "runner set: save mvr serve's status page (HTML) to this file at the end");
}

}  // namespace

void AddDemoCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "demo",
      "Run the runner set end to end on this machine (emulated GitHub and Lambda MicroVMs, the "
      "real mvr serve and supervisor; no account needed), or with --action the Action's "
      "start/stop path");
  auto f = std::make_shared<DemoFlags>();
  cmd->add_flag("--action", f->action,
                "demo the Action (mvr start / mvr stop per job, then a warm pair) instead");
  cmd->add_option("--jobs", f->jobs,
                  "jobs to queue at once (runner set: default 20, at most 1000; --action: "
                  "default 3, at most 20)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("!--no-warm", f->warm_pair, "with --action: skip the warm pair");
  cmd->add_option("--work-dir", f->work_dir, "keep state and logs here");
  cmd->add_option("--run-body", f->run_body,
                  "the /run hook body the emulated platform sends: raw (default), envelope or "
                  "envelope-with-id")
      ->check(CLI::IsMember({"raw", "envelope", "envelope-with-id"}));
  cmd->add_option("--vm", f->vm,
                  "what stands behind each MicroVM: process (default: host processes) or qemu (a "
                  "QEMU virtual machine restored from its image's snapshot; needs "
                  "scripts/fetch-vm-kernel.sh)")
      ->check(CLI::IsMember({"process", "qemu"}));
  cmd->add_option("--vm-arch", f->vm_arch,
                  "with --vm qemu: the guests' machine, x86_64 (default) or arm64 (needs "
                  "scripts/fetch-vm-kernel.sh --arch arm64 and scripts/build-supervisor-arm64.sh)")
      ->check(CLI::IsMember({"x86_64", "arm64"}));
  cmd->add_flag("--keep", f->keep, "keep the work directory afterwards");
  AddFieldFaultOptions(*cmd, f->set);
  AddPlatformOptions(*cmd, f->set);
  AddBurstOptions(*cmd, f->set);
  cmd->callback([&ctx, f] { ctx.exit_code = RunDemo(*f, ctx); });
}

}  // namespace mvr::cli
