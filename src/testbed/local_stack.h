// LocalStack: the two emulators as child processes of one `mvr` binary, on loopback ports they
// pick themselves. Each MicroVMs image runs the real `mvr supervisor` (without Docker) whose
// runner is a small script on the VM's disk; the default image "mvr-runner" runs the stand-in
// `mvr emulate runner`. The VM's Docker data directory is $MVR_VM_DIR/var/lib/docker, given to
// jobs as MVR_DOCKER_DATA_ROOT (the state a warm server keeps between jobs). Used by `mvr demo`
// and by the end-to-end tests.
// Thread-safety: AddImage, Start and Stop from one thread; the accessors afterwards from any.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/files.h"
#include "base/seam.h"
#include "base/secret.h"
#include "process/process_runner.h"

namespace mvr::testbed {

inline constexpr char kDemoImage[] = "mvr-runner";
inline constexpr char kDemoRepository[] = "demo/app";
inline constexpr char kDemoRegion[] = "us-east-1";

// Whether a local image's supervisor manages a real Docker engine (Debian's dockerd, on the VM's
// own socket and data root, without bridge or iptables) or none.
enum class GuestDocker { kNone, kReal };

// A demo's work directory: the one asked for, or a new temporary one that is removed at the end
// unless Keep() is called (to keep the logs of a failed run).
struct WorkDir {
  std::string path;
  std::optional<TemporaryDirectory> temporary;
  static Result<WorkDir> Open(const std::string& requested, std::string_view prefix);
  void Keep() {
    if (temporary) temporary->Keep();
  }
};

class LocalStack {
 public:
  LocalStack(const Seam& seam, process::ProcessRunner& processes, std::string mvr_path,
             std::string work_dir)
      : seam_(seam), processes_(processes), mvr_(std::move(mvr_path)), dir_(std::move(work_dir)) {}
  ~LocalStack() { Stop(); }

  // Registers another image (before Start) whose runner script runs `runner_body`: shell lines
  // written into the VM's runner script when the VM boots, so "$MVR_VM_DIR" there is the VM's
  // disk and a "$" meant for the runner's own run time is written "\$". With GuestDocker::kReal
  // the supervisor starts and stops dockerd as in a real image, and jobs get DOCKER_HOST.
  void AddImage(const std::string& name, const std::string& runner_body,
                GuestDocker docker = GuestDocker::kNone);
  // More `mvr emulate microvms` flags (before Start), e.g. its timing knobs.
  void AddMicrovmsArgs(const std::vector<std::string>& args) {
    microvms_args_.insert(microvms_args_.end(), args.begin(), args.end());
  }
  // Runs every MicroVM as a QEMU guest (`mvr emulate microvms --vm qemu`, its kernel in
  // `kernel_dir`, "" for the default; guests of machine `arch`, x86_64 or arm64) before Start. Only
  // then does a guest's supervisor set the clock after a restore: in the process backend its clock
  // is this machine's.
  void UseQemuVms(const std::string& kernel_dir = "", const std::string& arch = "x86_64") {
    qemu_vms_ = true;
    // Software emulation runs a guest many times slower: the images get the service's longest
    // runtime hook timeouts (a real image's resume and suspend get 60 s too, image/hooks.json).
    AddMicrovmsArgs({"--vm", "qemu", "--image-hook-timeout", "60"});
    if (!kernel_dir.empty()) AddMicrovmsArgs({"--vm-kernel", kernel_dir});
    if (arch != "x86_64") AddMicrovmsArgs({"--vm-arch", arch});
  }
  // The supervisor's docker.dns for every image with real Docker (before Start); unset, its
  // default (the VPC resolver, 169.254.169.253).
  void SetDockerDns(std::vector<std::string> addresses) { docker_dns_ = std::move(addresses); }
  // With QEMU guests (before Start): their dockerd makes Docker's bridge, so containers get the
  // container network of a MicroVM. Off by default, so the other guest tests keep the engine
  // they were measured with (--bridge=none); the tests of the container network turn it on.
  void UseDockerBridgeInGuests() { docker_bridge_ = true; }
  // For every image with real Docker (before Start): a container a job leaves running keeps
  // running across suspend and resume and into the next warm job, as a warm service (dockerd
  // --live-restore, so stopping the daemons for /suspend leaves containers up, and no
  // cleanup.dockerPrune between jobs). Off by default, as in the image's supervisor.json.
  void KeepContainersAcrossJobs() { keep_containers_ = true; }
  // More `mvr supervisor` flags for every image's supervisor (before Start).
  void AddSupervisorArgs(const std::vector<std::string>& args) {
    supervisor_args_.insert(supervisor_args_.end(), args.begin(), args.end());
  }
  // The form of the /run hook's body the emulator sends (before Start): raw (the default),
  // envelope or envelope-with-id (`mvr emulate microvms --run-body`).
  void SetRunBody(std::string form) { run_body_ = std::move(form); }
  // More `mvr emulate github` flags (before Start), e.g. --webhook-url and its secret file.
  void AddGithubArgs(const std::vector<std::string>& args) {
    github_args_.insert(github_args_.end(), args.begin(), args.end());
  }
  // The default image's runner body: exec the stand-in runner with its work folder on the disk.
  std::string StandInRunner() const;

  // Starts both emulators and waits (up to 30 s) for each to print its URL.
  Status Start();
  // SIGTERM to each emulator (which terminates its VMs), then waits for it.
  void Stop();

  const std::string& github_url() const { return github_url_; }
  const std::string& microvms_url() const { return microvms_url_; }
  // The MicroVMs emulator's process (0 before Start).
  int microvms_pid() const { return microvms_pid_; }
  const Secret& token() const { return token_; }
  // The Action's MVR_CONTROL_KEY for the steps of this stack (warm and pooled starts need one).
  const Secret& control_key() const { return control_key_; }
  const std::string& dir() const { return dir_; }
  // The file holding the token (0600); the only file under dir() that may contain it.
  std::string token_file() const { return dir_ + "/github-token"; }
  // One JSON line per MicroVMs API or ingress request ({"operation": …}), without secrets.
  std::string request_log() const { return dir_ + "/microvms-requests.log"; }
  // A VM's disk while it exists.
  std::string vm_dir(const std::string& microvm_id) const {
    return dir_ + "/microvms/vms/" + microvm_id;
  }
  // The environment a workflow step would have for `mvr start`/`mvr stop` (no secrets: pass
  // token() through ProcessSpec::secret_env as INPUT_GITHUB_TOKEN).
  std::map<std::string, std::string> StepEnvironment(const std::string& run_id,
                                                     const std::string& job) const;

 private:
  Result<std::string> WaitForUrl(const std::string& log_path, const std::string& what, int pid);
  struct Image {
    std::string name, runner_body;
    GuestDocker docker = GuestDocker::kNone;
  };
  Result<std::string> WriteGuestScript(const Image& image);
  std::string DockerSupervisorConfig() const;  // the guest config's "docker" with real Docker

  Seam seam_;
  process::ProcessRunner& processes_;
  std::string mvr_;
  std::string dir_;
  std::vector<Image> images_;
  std::vector<std::string> microvms_args_;
  std::vector<std::string> supervisor_args_;
  bool qemu_vms_ = false;
  std::optional<std::vector<std::string>> docker_dns_;
  bool docker_bridge_ = false;
  bool keep_containers_ = false;
  std::string run_body_ = "raw";
  std::vector<std::string> github_args_;
  Secret token_;
  Secret control_key_;
  std::string github_url_, microvms_url_;
  std::vector<int> pids_;
  int microvms_pid_ = 0;
};

}  // namespace mvr::testbed
