// classes[].fallbackClass: where a class's jobs go while it is unhealthy. A configuration error
// (unknown class, a class naming itself, a cycle) is refused at start-up with the class it is
// about.
#include <set>

#include "runnerset/config/config.h"

namespace mvr::runnerset {

Status CheckFallbackClasses(const ServeConfig& config) {
  for (size_t i = 0; i < config.classes.size(); ++i) {
    const RunnerClass& start = config.classes[i];
    if (start.fallback_class.empty()) continue;
    const std::string key = "classes[" + std::to_string(i) + "].fallbackClass";
    const RunnerClass* next = config.FindClass(start.fallback_class);
    if (!next) {
      return InvalidArgument(key + ": \"" + start.fallback_class + "\" is not a configured class");
    }
    if (next == &start) {
      return InvalidArgument(key + ": class \"" + start.label + "\" cannot fall back to itself");
    }
    std::set<const RunnerClass*> seen{&start};
    std::string path = start.label;
    for (const RunnerClass* at = next; at; at = config.FindClass(at->fallback_class)) {
      path += " -> " + at->label;
      if (!seen.insert(at).second) {
        return InvalidArgument(key + ": fallback classes form a cycle (" + path + ")");
      }
      if (at->fallback_class.empty()) break;
    }
  }
  return Status::Ok();
}

}  // namespace mvr::runnerset
