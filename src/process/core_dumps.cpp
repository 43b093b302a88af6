#include "process/core_dumps.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace mvr::process {

Status DisableCoreDumps() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_CORE, &limit) != 0) {
    return Internal(std::string("getrlimit(RLIMIT_CORE): ") + std::strerror(errno));
  }
  limit.rlim_cur = 0;
  if (::setrlimit(RLIMIT_CORE, &limit) != 0) {
    return Internal(std::string("setrlimit(RLIMIT_CORE, 0): ") + std::strerror(errno));
  }
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return Internal(std::string("prctl(PR_SET_DUMPABLE, 0): ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace mvr::process
