// What the emulator's process host needs from the machine: the way it starts every program
// (guests, unzip, `ip`) through the process seam, and free loopback ports for guests.
// Thread-safety: plain functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {

// A spec for `argv` as the emulator runs programs: in a session of its own (pid == pgid, so that
// freezing, thawing and killing reach all it started), on top of the emulator's own environment,
// with output files readable by the emulator's user only.
process::ProcessSpec HostProcessSpec(std::vector<std::string> argv);

}  // namespace mvr::emulate::microvms
