# Lambda MicroVMs service model and client tests (included by tests/aws/CMakeLists.txt).
mvr_test(microvms_test
  SOURCES service_model_test.cpp service_model_validator_test.cpp microvms_client_test.cpp
          microvms_errors_test.cpp microvms_ingress_test.cpp microvms_loopback_test.cpp
  DEPS mvr_microvms mvr_http
  LABELS unit asan)
target_include_directories(microvms_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)
