// The simulation's GitHub App keys: RSA keys made once per process and shared by every world, so
// that a run with several Apps (WorldOptions::github_apps) pays for key generation once. The
// keys' bytes never reach the trace (a JWT's signature is sent, not scheduled on), so a seed
// replays alike with other keys.
// Thread-safety: safe from many threads.
#pragma once

#include <string>

namespace mvr::sim {

// App i's private key in PEM form (the same string for the same i within a process).
const std::string& SimAppKeyPem(int i);

}  // namespace mvr::sim
