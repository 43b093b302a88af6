# Lambda MicroVMs service model and client tests (included by tests/aws/CMakeLists.txt).
mvr_test(microvms_test
  SOURCES service_model_test.cpp service_model_validator_test.cpp
  DEPS mvr_microvms)
