// ApiSelfTerminator: SelfTerminator over the MicroVMs API (TerminateMicrovm on this VM's own id),
// retried with full jitter on throttling and transient errors. NotFound counts as done: the VM
// is already going away.
// Thread-safety: safe to share when the MicrovmService and the retry seam are.
#pragma once

#include "aws/microvms/microvms.h"
#include "base/logger.h"
#include "base/retry.h"
#include "base/seam.h"
#include "supervisor/supervisor.h"

namespace mvr::supervisor {

class ApiSelfTerminator final : public SelfTerminator {
 public:
  ApiSelfTerminator(aws::MicrovmService& service, Seam seam, RetryPolicy policy = DefaultPolicy())
      : service_(service), seam_(seam), policy_(policy) {}

  bool available() const override { return true; }
  Status TerminateSelf(const std::string& microvm_id) override;

  static RetryPolicy DefaultPolicy() {
    RetryPolicy p;
    p.max_attempts = 8;
    p.base_delay = Duration(500);
    p.max_delay = Duration(10'000);
    p.deadline = Duration(120'000);
    return p;
  }

 private:
  aws::MicrovmService& service_;
  Seam seam_;
  RetryPolicy policy_;
};

}  // namespace mvr::supervisor
