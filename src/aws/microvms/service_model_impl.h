// Private state of ServiceModel, shared by its parsing/routing file and its validator file.
// Thread-safety: immutable after construction.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "aws/microvms/service_model.h"

namespace mvr::aws {

struct CompiledShapes;  // service_model_validator.cpp

struct ServiceModel::Impl {
  nlohmann::json raw;
  std::map<std::string, Operation, std::less<>> operations;
  // Compiled "pattern" traits by pattern text; absent when std::regex cannot express the
  // pattern (e.g. \p{L} classes), in which case the pattern is not checked.
  std::map<std::string, std::shared_ptr<const std::regex>, std::less<>> patterns;

  struct RouteSegment {
    std::string text;  // literal text, or the label name
    bool label = false;
    bool greedy = false;  // {name+}: matches the rest of the path
  };
  struct RouteEntry {
    const Operation* operation = nullptr;
    std::vector<RouteSegment> segments;
    int literal_count = 0;
  };
  std::vector<RouteEntry> routes;
  std::string protocol;  // metadata.protocol
  // Default timestampFormat of body members: "unixTimestamp" (JSON protocols) or "iso8601".
  std::string body_timestamp_format = "unixTimestamp";

  // The shapes as the validator walks them: their references resolved and traits read, so an
  // answer is checked without looking a name up (the emulator checks every answer it gives).
  std::shared_ptr<const CompiledShapes> compiled;

  // The shape definition named `name`, or nullptr.
  const nlohmann::json* Shape(std::string_view name) const;
};

// Every shape of `impl` resolved for the validator; called once its other members are set.
std::shared_ptr<const CompiledShapes> CompileShapes(const ServiceModel::Impl& impl);

}  // namespace mvr::aws
