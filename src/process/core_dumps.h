// Core dumps off for processes that hold secrets (the supervisor with JIT configs, start/stop
// with tokens and keys, the emulators, serve): a crash must not write their memory to disk, and
// other same-user processes must not read it through ptrace or /proc/<pid>/mem.
// Thread-safety: call once at startup, before threads start; it changes process-wide state.
#pragma once

#include "base/status.h"

namespace mvr::process {

// Sets the soft RLIMIT_CORE to 0 (children may raise it again: their own crashes are theirs) and
// marks this process non-dumpable (PR_SET_DUMPABLE 0; execve resets it for children). Internal
// error naming the call that failed.
Status DisableCoreDumps();

}  // namespace mvr::process
