// What `--vm qemu` needs on this machine before QemuHost starts: the guest kernel, for ARM64 the
// guest's own userland and tools, QEMU and qemu-img. Each refusal names what is missing and the
// command that provides it.
#pragma once

#include "base/status.h"
#include "emulate/microvms/host/qemu_host.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {

// `options.qemu` is the QEMU program to check (QemuHost::Create fills in the default).
Status CheckQemuPrerequisites(const QemuHost::Options& options, process::ProcessRunner& processes);

}  // namespace mvr::emulate::microvms
