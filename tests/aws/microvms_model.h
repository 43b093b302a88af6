// The Lambda MicroVMs service model, as the tests that check requests and answers against it
// name it.
#pragma once

#include "aws/microvms/service_model.h"

namespace mvr::aws::testing {

inline const ServiceModel& Model() { return ServiceModel::LambdaMicrovms(); }

}  // namespace mvr::aws::testing
