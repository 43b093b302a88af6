// QemuHost (`mvr emulate microvms --vm qemu`): each instance is a QEMU virtual machine, as on the
// platform, where every VM of an image version starts from one snapshot of it.
//  - The first instance of a program (an image) boots a Linux guest (the kernel of Debian's
//    linux-image-cloud-amd64, an initramfs from GuestImageBuilder) whose init runs the program,
//    waits until its /ready hook answers 200, stops it and saves it with QEMU's migration to a file
//    (memory and device state): the image's snapshot.
//  - kStartProgram restores a new QEMU process from that snapshot: every VM of the image wakes with
//    the same memory (random generator state, secrets read before the snapshot, clock).
//  - Each image also has a disk (an ext4 file system made by mkfs.ext4, mounted at the guest's
//    /vm): the image's boot writes to it, and every instance gets a copy-on-write qcow2 overlay of
//    it (qemu-img), so that a VM's files, like its memory, start as the snapshot held them.
//  - kFreeze stops the VM, saves it to its own file and ends the process; kThaw restores a new
//    process from that file, on the same disk overlay. Every connection the guest held is gone
//    after a resume.
//  - kStop ends the process and removes the instance's directory.
// Networking is QEMU's user network: the hook port and each guest port are forwarded from loopback
// ports of this host (fixed for the instance's life, across suspend and resume), and the guest
// reaches this host's loopback listeners on the host's ephemeral ports at its own 127.0.0.1.
// ARM64 guests (`arch` arm64): qemu-system-aarch64's `virt` machine under TCG, the kernel of
// Debian's linux-image-cloud-arm64, the guest's own userland (`guest_root`) and mvr
// (`guest_bundle`, the ARM64 guest tools); see GuestImageBuilder.
// Thread-safety: Execute may run concurrently for different effects; the tables are guarded by a
// mutex never held across a QEMU start, a save or a hook call. Snapshots of one program are
// built once, under a per-program mutex.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/seam.h"
#include "emulate/microvms/host/guest_host.h"
#include "emulate/microvms/host/guest_image.h"
#include "http/client.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {

class QemuHost : public GuestHost {
 public:
  struct Deps {
    Seam seam;
    http::HttpClient& http;
    process::ProcessRunner& processes;
    GuestHost& artifacts;  // resolves kPrepareArtifact (the process host's Dockerfile reader)
  };
  struct Options {
    std::string state_dir;
    std::string api_url;
    std::string region = "us-east-1";
    std::vector<int> guest_ports = {8080};
    std::string kernel_dir;       // vmlinuz + modules/ (scripts/fetch-vm-kernel.sh)
    std::string mvr_binary;       // this program (copied into every guest at its host path)
    std::string arch = "x86_64";  // x86_64 | arm64: the guests' machine
    std::string qemu;             // default: qemu-system-x86_64 or qemu-system-aarch64
    std::string guest_bundle;     // arm64: the ARM64 guest tools (build-arm64/guest-bundle)
    std::string qemu_img = "qemu-img";
    int disk_mib = 2048;         // each image's disk (sparse on the host)
    std::string accel = "auto";  // auto | kvm | tcg
    int memory_mib = 512;
    Duration poll_interval{100};
    Duration boot_timeout{180'000};  // an image's first boot until /ready answers
    Duration stop_grace{5000};
    // Names the guests' VPC resolver answers (--vm-dns-record NAME=IPV4); nothing else resolves.
    std::map<std::string, std::string> dns_records;
  };

  // Checks that the kernel and QEMU are there; picks the accelerator (`auto`: KVM when a short
  // test boot under it reaches the guest's init, TCG otherwise).
  static Result<std::unique_ptr<QemuHost>> Create(Deps deps, Options options);

  EffectOutcome Execute(const Effect& effect) override;
  std::optional<std::string> GuestAuthority(const std::string& target, int port) const override;
  std::string DirectoryOf(const std::string& target) const override;
  std::vector<std::pair<std::string, std::string>> ReapUnexpectedExits() override;
  void StopLeftovers() override;

  const std::string& accel() const { return accel_; }

 private:
  struct Instance {
    std::atomic<int> pid{0};
    int hook_port = 0;           // loopback port of this host forwarded to the guest's hook port
    int guest_hook_port = 9000;  // the image's hooks.port
    std::map<int, int> ports;    // guest port -> loopback port of this host
    std::string dir, image_dir;
    std::string disk, disk_format;  // the image's raw disk while it boots, else a qcow2 overlay
    std::atomic<bool> exited{false};
    std::atomic<bool> stopping{false};
    std::atomic<bool> saved{false};  // frozen: the process ended, its state is in dir/memory
  };
  struct Image {
    std::mutex mu;  // held while the snapshot is built
    bool ready = false;
    std::string dir;  // initrd.cpio, memory, disk.raw
  };

  QemuHost(Deps deps, Options options, std::string accel);
  EffectOutcome Start(const Effect& effect);
  EffectOutcome CallHook(const Effect& effect);
  EffectOutcome Freeze(const Effect& effect);
  EffectOutcome Thaw(const Effect& effect);
  EffectOutcome Stop(const Effect& effect);

  // The image's snapshot for `effect.program`, built on first use (its boot within
  // `boot_timeout`). Returns the image's directory.
  Result<std::string> SnapshotFor(const Effect& effect, Duration boot_timeout);
  // Whether a guest boots and saves under KVM here.
  bool ProbeKvm();
  // Runs a host tool (mkfs.ext4, qemu-img) to completion; its stderr names what failed.
  Status RunTool(const std::vector<std::string>& argv, const std::string& what);
  // Starts QEMU for `inst` with the image's initrd and `inst.disk`, restoring `memory` ("" = a cold
  // boot), and waits until the guest runs. Returns the pid.
  Result<int> Launch(Instance& inst, const std::string& log_name, const std::string& memory);
  // Stops the VM, saves it to `path` and ends the process.
  Status Save(Instance& inst, const std::string& path);
  // Reaps the process if it ends within `grace` (marking the instance exited).
  void WaitForExit(Instance& inst, Duration grace);
  void Kill(Instance& inst);
  std::shared_ptr<Instance> Find(const std::string& target) const;
  double SecondsSince(TimePoint start) const;
  std::map<std::string, std::string> GuestEnvironment(const Effect& effect) const;

  Deps deps_;
  Options options_;
  std::string accel_;
  std::string mvr_copy_;  // this program without debug sections, for the guests
  GuestNetwork network_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Instance>> instances_;
  std::map<std::string, std::shared_ptr<Image>> images_;
};

}  // namespace mvr::emulate::microvms
