# cmake -DINPUT=<service-2.json> -DOUTPUT=<file.cpp> -P microvms_embed_model.cmake
# Writes a C++ source whose EmbeddedLambdaMicrovmsModel() returns the model's exact text, so the
# binaries never look the model up on disk.
file(READ "${INPUT}" content)
string(FIND "${content}" ")mvr_model\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter used to embed it")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by src/aws/microvms_embed_model.cmake. Do not edit.\n"
  "#include <string_view>\n\n"
  "#include \"aws/microvms/service_model.h\"\n\n"
  "namespace mvr::aws {\n\n"
  "std::string_view EmbeddedLambdaMicrovmsModel() {\n"
  "  static constexpr char kModel[] = R\"mvr_model(${content})mvr_model\";\n"
  "  return std::string_view(kModel, sizeof(kModel) - 1);\n"
  "}\n\n"
  "}  // namespace mvr::aws\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
