#include "imagebuild/artifact.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "base/encoding.h"
#include "base/files.h"

namespace mvr::imagebuild {
namespace {

namespace fs = std::filesystem;

// Executable for its owner → 0755, else 0644: the only mode difference a build cares about, and
// the same on every machine whatever its umask.
uint32_t ModeOf(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IXUSR) != 0) return 0755;
  return 0644;
}

Status AddFile(const fs::path& path, const std::string& name, std::vector<ZipEntry>& out) {
  MVR_ASSIGN_OR_RETURN(std::string data, ReadFile(path.string(), "image artifact"));
  out.push_back(ZipEntry{name, std::move(data), ModeOf(path)});
  return Status::Ok();
}

bool IsWithin(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

// Symlinks are followed only while they stay inside the build context (issue 53, item 12): one that
// leads out would pack files from elsewhere on the machine (a directory's under '..' names), and
// one that leads back to a directory it is in would be listed without end. `link` is below `top`
// (the include, `shown` as written); `context` is canonical.
Status CheckSymlink(const fs::path& link, const fs::path& top, const fs::path& context,
                    const std::string& shown) {
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec) return Status::Ok();  // a broken link leads nowhere: skipped (or "does not exist")
  if (!IsWithin(target, context)) {
    return InvalidArgument("the symlink " + shown + " leads to " + target.string() +
                           ", outside the build context " + context.string() +
                           "; copy what it points to into the context instead");
  }
  // A loop: the target holds a directory the listing passed through to reach the link.
  for (fs::path dir = link.parent_path(); IsWithin(dir, top); dir = dir.parent_path()) {
    const fs::path real = fs::canonical(dir, ec);
    if (!ec && IsWithin(real, target)) {
      return InvalidArgument("the symlink " + shown + " leads to " + target.string() +
                             ", a directory that holds it: listing it would never end");
    }
    if (dir == top) break;
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<ZipEntry>> CollectArtifactFiles(const ArtifactSources& sources) {
  std::vector<ZipEntry> out;
  std::error_code ec;
  const fs::path context = fs::canonical(sources.context_dir, ec);
  if (ec || !fs::is_directory(context)) {
    return InvalidArgument("the build context " + sources.context_dir + " is not a directory");
  }
  MVR_RETURN_IF_ERROR(AddFile(sources.dockerfile, "Dockerfile", out));
  for (const std::string& include : sources.include) {
    fs::path rel = fs::path(include).lexically_normal();
    if (rel.is_absolute() || rel.empty() || *rel.begin() == "..") {
      return InvalidArgument("include '" + include + "' must be a path inside the build context " +
                             sources.context_dir);
    }
    const fs::path full = context / rel;
    if (fs::is_symlink(full, ec)) {
      MVR_RETURN_IF_ERROR(CheckSymlink(full, context, context, rel.generic_string()));
    }
    if (fs::is_regular_file(full, ec)) {
      MVR_RETURN_IF_ERROR(AddFile(full, rel.generic_string(), out));
      continue;
    }
    if (!fs::is_directory(full, ec)) {
      return InvalidArgument(full.string() +
                             " does not exist or is neither a file nor a directory (an include of "
                             "the image artifact; for build-arm64/supervisor-bundle run "
                             "scripts/build-supervisor-arm64.sh first)");
    }
    size_t before = out.size();
    for (auto it = fs::recursive_directory_iterator(
             full, fs::directory_options::follow_directory_symlink, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      // Named by the path as listed (through any symlink), as the Dockerfile's COPY sees it.
      std::string name =
          (rel / it->path().lexically_relative(full)).lexically_normal().generic_string();
      if (it->is_symlink(ec)) MVR_RETURN_IF_ERROR(CheckSymlink(it->path(), full, context, name));
      if (!it->is_regular_file(ec)) continue;  // directories come from their files' paths
      MVR_RETURN_IF_ERROR(AddFile(it->path(), name, out));
    }
    if (ec) return InvalidArgument("cannot list " + full.string() + ": " + ec.message());
    if (out.size() == before) {
      return InvalidArgument(full.string() +
                             " holds no files (for build-arm64/supervisor-bundle: run "
                             "scripts/build-supervisor-arm64.sh first)");
    }
  }
  return out;
}

std::string RunnerVersionOf(const std::string& dockerfile) {
  std::istringstream in(dockerfile);
  std::string line;
  const std::string key = "RUNNER_VERSION=";
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 4, "ARG ") != 0) continue;
    size_t at = line.find(key, start + 4);
    if (at == std::string::npos || line.find_first_not_of(" \t", start + 4) != at) continue;
    std::string value = line.substr(at + key.size());
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
      value.pop_back();
    }
    return value;
  }
  return "";
}

Result<Artifact> PackArtifact(std::vector<ZipEntry> entries) {
  auto dockerfile = std::find_if(entries.begin(), entries.end(),
                                 [](const ZipEntry& e) { return e.name == "Dockerfile"; });
  if (dockerfile == entries.end()) {
    return InvalidArgument("the image artifact needs a Dockerfile at its root");
  }
  Artifact out;
  out.runner_version = RunnerVersionOf(dockerfile->data);
  out.files = entries.size();
  MVR_ASSIGN_OR_RETURN(out.zip, WriteZip(std::move(entries)));
  out.sha256 = Sha256Hex(out.zip);
  return out;
}

Result<std::string> ImageName(const std::string& runner_set_id, int class_index,
                              const Artifact& artifact) {
  if (runner_set_id.empty()) return InvalidArgument("the runner set id is empty");
  // The runner set's id rule (runnerset/config/runner_name.h: CheckRunnerSetId): '_' is the
  // separator.
  for (char c : runner_set_id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return InvalidArgument("runner set id '" + runner_set_id +
                             "' can only hold lowercase letters, digits and '-' ('_' ends the id "
                             "in the set's image names: <id>_<class index>-<8 hex>)");
    }
  }
  if (class_index < 0) return InvalidArgument("the class index must be 0 or more");
  const std::string hash =
      Sha256Hex("mvr-image-name-v1\n" + artifact.sha256 + "\n" + artifact.runner_version + "\n");
  std::string name = runner_set_id + "_" + std::to_string(class_index) + "-" + hash.substr(0, 8);
  if (name.size() > 64) {
    return InvalidArgument("image name " + name +
                           " is longer than the service's 64 characters: shorten the runner set "
                           "id");
  }
  return name;
}

}  // namespace mvr::imagebuild
