# Lambda MicroVMs: the embedded service model, its validator, and the rest-json client.
# Included by src/aws/CMakeLists.txt.
set(MVR_MICROVMS_MODEL ${PROJECT_SOURCE_DIR}/models/lambda-microvms/service-2.json)
set(MVR_MICROVMS_MODEL_CPP ${CMAKE_CURRENT_BINARY_DIR}/lambda_microvms_model.cpp)
add_custom_command(
  OUTPUT ${MVR_MICROVMS_MODEL_CPP}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${MVR_MICROVMS_MODEL} -DOUTPUT=${MVR_MICROVMS_MODEL_CPP}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/microvms_embed_model.cmake
  DEPENDS ${MVR_MICROVMS_MODEL} ${CMAKE_CURRENT_SOURCE_DIR}/microvms_embed_model.cmake
  COMMENT "Embedding the Lambda MicroVMs service model"
  VERBATIM)

mvr_library(mvr_microvms
  SOURCES microvms/service_model.cpp microvms/service_model_validator.cpp ${MVR_MICROVMS_MODEL_CPP}
          microvms/microvms.cpp microvms/microvms_json_reader.cpp microvms/microvms_json.cpp microvms/microvms_image_json.cpp
          microvms/microvms_errors.cpp microvms/microvms_ingress.cpp microvms/microvms_client.cpp
  DEPS mvr_aws mvr_http_core nlohmann_json::nlohmann_json)

# botocore's models of the other services mvr calls, read at run time, and the check of a wire
# request against them (tests/support/moto.h puts it in front of moto).
find_package(ZLIB REQUIRED)
mvr_library(mvr_aws_contracts
  SOURCES contracts/aws_contracts.cpp contracts/xml_payload.cpp
  DEPS mvr_microvms ZLIB::ZLIB)
