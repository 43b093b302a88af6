// The form of the /run hook's body that every end-to-end fixture starts the MicroVMs emulator
// with: $MVR_E2E_RUN_BODY (raw, envelope or envelope-with-id; the emulator refuses anything else
// with a clear error), raw when unset, as the emulator's own default. One variable, so that a
// whole `ctest -L e2e` run can be repeated under each form.
#pragma once

#include <cstdlib>
#include <string>

namespace mvr::testing_support {

inline std::string E2eRunBody() {
  const char* form = std::getenv("MVR_E2E_RUN_BODY");
  return form != nullptr && *form != '\0' ? form : "raw";
}

}  // namespace mvr::testing_support
