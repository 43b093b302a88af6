#include <unistd.h>
#include <climits>

#include "cli/commands.h"
#include "demo/demo.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

namespace mvr::cli {
namespace {

// This very binary, so every part of the demo runs the same build.
std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "mvr";
}

}  // namespace

void AddDemoCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "demo",
      "Run the Action end to end on this machine: emulated GitHub and Lambda MicroVMs, "
      "the real supervisor and start/stop commands; no account needed");
  auto options = std::make_shared<demo::DemoOptions>();
  cmd->add_option("--jobs", options->ephemeral_jobs, "ephemeral jobs to run at once")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cmd->add_flag("!--no-warm", options->warm_pair, "skip the warm pair");
  cmd->add_option("--work-dir", options->work_dir, "keep state and logs here");
  cmd->add_flag("--keep", options->keep_work_dir, "keep the work directory afterwards");
  cmd->callback([&ctx, options] {
    options->mvr_path = SelfPath();
    process::PosixProcessRunner processes;
    http::CurlHttpClient http;
    Seam seam = ctx.seam();
    ctx.exit_code = demo::Demo(seam, processes, http, *options).Run();
  });
}

}  // namespace mvr::cli
