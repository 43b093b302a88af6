// The code artifact of a runner image and the image's name. The artifact is a zip holding the
// Dockerfile at its root and the files it COPYs (image/ and the ARM64 supervisor bundle), laid out
// as in the repository, so the same inputs always give the same bytes (base/zip_writer.h: fixed
// order, fixed timestamps, only the mode kept). The name is
// `<runnerSetId>_<index>-<8 hex>` (001's scheme with issue 53's separator), hashed over those bytes
// and the runner version, so a change to either is a new image and the launcher and janitor can
// pick the set's VMs by image ARN. Thread-safety: pure functions, except CollectArtifactFiles,
// which reads the file system.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/zip_writer.h"

namespace mvr::imagebuild {

struct ArtifactSources {
  std::string context_dir;  // the build context: the repository root
  std::string dockerfile;   // stored as "Dockerfile" at the artifact's root
  // Files or directories below context_dir, stored under the same relative paths (directories
  // recursively, symlinks followed while they stay inside context_dir: a file behind one is
  // stored under the link's path).
  std::vector<std::string> include;
};

// Reads the sources. InvalidArgument naming the path for a missing file, an include outside the
// context, a symlink that leads outside it (or to a directory it is in: a loop), or an entry that
// is neither a file nor a directory; an empty directory is refused too (an unbuilt supervisor
// bundle is the usual cause).
Result<std::vector<ZipEntry>> CollectArtifactFiles(const ArtifactSources& sources);

struct Artifact {
  std::string zip;
  std::string sha256;          // hex, of `zip`
  std::string runner_version;  // the Dockerfile's ARG RUNNER_VERSION default ("" when none)
  size_t files = 0;
};

// Packs the entries (one of them "Dockerfile"). InvalidArgument when there is no Dockerfile.
Result<Artifact> PackArtifact(std::vector<ZipEntry> entries);

// `ARG RUNNER_VERSION=<v>` in a Dockerfile, or "".
std::string RunnerVersionOf(const std::string& dockerfile);

// `<runnerSetId>_<index>-<8 hex>`: the hex is the start of SHA-256 over the artifact's SHA-256 and
// the runner version; '_' ends the id, which cannot hold one, so no set's image names start with
// another set's (`ci_…` vs `ci1_…`, `ci-gpu_…`). InvalidArgument when the id has characters
// other than lowercase letters, digits and '-', or the name would exceed the service's 64.
Result<std::string> ImageName(const std::string& runner_set_id, int class_index,
                              const Artifact& artifact);

}  // namespace mvr::imagebuild
