// The `hooks` JSON (image/hooks.json): the lifecycle hook budgets, and the plans derived from them.
#include "supervisor/hook_budgets.h"
#include "supervisor/config.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr::supervisor;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto budgets = ParseHookBudgets(text);
  if (budgets.ok()) {
    SupervisorConfig config;
    (void)WorstCase(PlanSuspend(budgets->suspend, config), config);
    (void)WorstCase(PlanResume(budgets->resume, config, 3), config, 3);
    (void)WorstCase(PlanTerminate(budgets->terminate, config), config);
  }
  return 0;
}
