#include "emulate/microvms/sigv4_keys.h"

#include "base/files.h"

namespace mvr::emulate::microvms {

Result<std::map<std::string, std::string>> ParseSigv4Keys(std::string_view text,
                                                          std::string_view source) {
  std::map<std::string, std::string> keys;
  constexpr std::string_view kSeparators = " :\t";
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = TrimTrailingWhitespace(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    size_t separator = line.find_first_of(kSeparators);
    size_t secret = separator == std::string_view::npos
                        ? std::string_view::npos
                        : line.find_first_not_of(kSeparators, separator);
    if (separator == 0 || secret == std::string_view::npos) {
      return InvalidArgument(std::string(source) + " line " + std::to_string(number) +
                             ": each line is 'ACCESS_KEY_ID SECRET'");
    }
    keys[std::string(line.substr(0, separator))] = std::string(line.substr(secret));
  }
  return keys;
}

}  // namespace mvr::emulate::microvms
