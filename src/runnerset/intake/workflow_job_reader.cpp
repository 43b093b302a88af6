#include "runnerset/intake/workflow_job_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "base/encoding.h"

namespace mvr::runnerset {
namespace {

namespace od = simdjson::ondemand;

Status Malformed(const std::string& what) {
  return InvalidArgument("workflow_job payload: " + what).WithErrorType("MalformedPayload");
}

Status NotJson(simdjson::error_code error) {
  return Malformed(std::string("the body is not valid JSON (") + simdjson::error_message(error) +
                   ")");
}

Status WrongType(const char* member, const char* expected) {
  return Malformed(std::string(member) + ": expected " + expected);
}

// The value's JSON type, or the parse error that stopped us reading it.
simdjson::error_code TypeOf(od::value& value, od::json_type& type) {
  return value.type().get(type);
}

// A string member that may also be null or absent (then empty).
Status ReadOptionalString(od::value value, const char* member, std::string& out) {
  od::json_type type;
  if (auto e = TypeOf(value, type)) return NotJson(e);
  if (type == od::json_type::null) {
    out.clear();
    return Status::Ok();
  }
  std::string_view text;
  if (type != od::json_type::string || value.get_string().get(text)) {
    return WrongType(member, "a string or null");
  }
  out.assign(text);
  return Status::Ok();
}

Status ReadPositiveInt(od::value value, const char* member, int64_t& out) {
  if (value.get_int64().get(out) || out <= 0) return WrongType(member, "a positive integer");
  return Status::Ok();
}

Status ReadLabels(od::value value, std::vector<std::string>& out) {
  od::json_type type;
  if (auto e = TypeOf(value, type)) return NotJson(e);
  out.clear();
  if (type == od::json_type::null) return Status::Ok();
  od::array array;
  if (type != od::json_type::array || value.get_array().get(array)) {
    return WrongType("workflow_job.labels", "an array of strings");
  }
  for (auto element : array) {
    std::string_view label;
    if (element.get_string().get(label)) {
      return WrongType("workflow_job.labels", "an array of strings");
    }
    out.emplace_back(label);
  }
  return Status::Ok();
}

Status ReadJob(od::value value, WorkflowJobFields& out) {
  od::object job;
  if (value.get_object().get(job)) return WrongType("workflow_job", "an object");
  bool have_id = false;
  bool have_run_id = false;
  for (auto member : job) {
    od::field field;
    if (auto e = std::move(member).get(field)) return NotJson(e);
    od::raw_json_string key = field.key();
    if (key.unsafe_is_equal("id")) {
      MVR_RETURN_IF_ERROR(ReadPositiveInt(field.value(), "workflow_job.id", out.job_id));
      have_id = true;
    } else if (key.unsafe_is_equal("run_id")) {
      MVR_RETURN_IF_ERROR(ReadPositiveInt(field.value(), "workflow_job.run_id", out.run_id));
      have_run_id = true;
    } else if (key.unsafe_is_equal("run_attempt")) {
      od::value attempt = field.value();
      od::json_type type;
      if (auto e = TypeOf(attempt, type)) return NotJson(e);
      out.run_attempt = 1;
      if (type != od::json_type::null) {
        MVR_RETURN_IF_ERROR(ReadPositiveInt(attempt, "workflow_job.run_attempt", out.run_attempt));
      }
    } else if (key.unsafe_is_equal("name")) {
      MVR_RETURN_IF_ERROR(ReadOptionalString(field.value(), "workflow_job.name", out.job_name));
    } else if (key.unsafe_is_equal("labels")) {
      MVR_RETURN_IF_ERROR(ReadLabels(field.value(), out.labels));
    } else if (key.unsafe_is_equal("runner_name")) {
      MVR_RETURN_IF_ERROR(
          ReadOptionalString(field.value(), "workflow_job.runner_name", out.runner_name));
    } else if (key.unsafe_is_equal("status")) {
      MVR_RETURN_IF_ERROR(ReadOptionalString(field.value(), "workflow_job.status", out.status));
    } else if (key.unsafe_is_equal("conclusion")) {
      MVR_RETURN_IF_ERROR(
          ReadOptionalString(field.value(), "workflow_job.conclusion", out.conclusion));
    } else if (key.unsafe_is_equal("created_at")) {
      MVR_RETURN_IF_ERROR(
          ReadOptionalString(field.value(), "workflow_job.created_at", out.created_at));
    } else if (key.unsafe_is_equal("started_at")) {
      MVR_RETURN_IF_ERROR(
          ReadOptionalString(field.value(), "workflow_job.started_at", out.started_at));
    }
  }
  if (!have_id) return Malformed("workflow_job.id is missing");
  if (!have_run_id) return Malformed("workflow_job.run_id is missing");
  return Status::Ok();
}

// repository.full_name is the name GitHub routes by; owner.login and name are only its parts and
// are read when full_name is absent. They may disagree with it (GitHub's own example payloads
// do, after a transfer), which is no reason to refuse the delivery.
Status ReadRepository(od::value value, WorkflowJobFields& out, bool& from_full_name) {
  od::object repo;
  if (value.get_object().get(repo)) return WrongType("repository", "an object");
  std::string_view text;
  od::value member;
  // Only "no such field" may be followed by another lookup: after a parse error the object's
  // iterator is spent, and simdjson does not guard a second use of it.
  simdjson::error_code found = repo.find_field_unordered("full_name").get(member);
  if (found && found != simdjson::NO_SUCH_FIELD) return NotJson(found);
  from_full_name = !found && !member.get_string().get(text);
  if (from_full_name) {
    out.repository.assign(text);
  } else {
    std::string_view name;
    std::string_view login;
    od::value owner;
    if (repo.find_field_unordered("name").get(member) || member.get_string().get(name) ||
        repo.find_field_unordered("owner").get(owner) ||
        owner.find_field_unordered("login").get(member) || member.get_string().get(login)) {
      return Malformed("repository: neither full_name nor owner.login and name are strings");
    }
    out.repository.assign(login).append("/").append(name);
  }
  if (!IsRepositoryName(out.repository)) {
    // Quoted as printable ASCII: cut at a byte count, a multi-byte character would leave
    // invalid UTF-8 in the JSON answer, which cannot be written.
    return Malformed("repository.full_name: '" + PrintableExcerpt(out.repository, 100) +
                     "' is not owner/name");
  }
  return Status::Ok();
}

}  // namespace

struct WorkflowJobReader::Impl {
  od::parser parser;
  std::unique_ptr<char[]> buffer;
  size_t buffer_size = 0;

  // simdjson reads up to SIMDJSON_PADDING bytes past the end of the input. The text read is
  // `head` then `tail`, and `close` appends a '}' (simdjson checks that a document that starts
  // with '{' ends with '}' before reading it).
  simdjson::padded_string_view Pad(std::string_view head, std::string_view tail, bool close) {
    size_t size = head.size() + tail.size() + (close ? 1 : 0);
    size_t needed = size + simdjson::SIMDJSON_PADDING;
    if (buffer_size < needed) {
      buffer = std::make_unique<char[]>(needed);
      buffer_size = needed;
    }
    // memcpy from an empty view's null data is undefined even for 0 bytes.
    if (!head.empty()) std::memcpy(buffer.get(), head.data(), head.size());
    if (!tail.empty()) std::memcpy(buffer.get() + head.size(), tail.data(), tail.size());
    if (close) buffer[size - 1] = '}';
    std::memset(buffer.get() + size, ' ', simdjson::SIMDJSON_PADDING);
    return simdjson::padded_string_view(buffer.get(), size, buffer_size);
  }

  // Reading stops once action, workflow_job and repository have been read: GitHub sends them
  // first, and walking the organisation, enterprise, sender and installation objects after them
  // would cost as much as the rest of the read. A body cut short is refused by the check that it
  // ends with '}', or, when the cut falls right after a '}', read exactly as the whole body would
  // be, since everything read lies before the cut.
  Result<WorkflowJobFields> Read(std::string_view body) {
    constexpr std::string_view kWhitespace = " \t\r\n";
    size_t first = body.find_first_not_of(kWhitespace);
    if (first != std::string_view::npos && body[first] == '{' &&
        body[body.find_last_not_of(kWhitespace)] != '}') {
      return Malformed("the body does not end with '}' (was it cut short?)");
    }
    if (std::optional<Shortcut> cut = PlanShortcut(body)) {
      bool in_order = false;
      Result<WorkflowJobFields> quick = ReadMembers(cut->head, cut->tail, /*close=*/true, in_order);
      if (quick.ok() && in_order) return quick;
    }
    bool in_order = false;
    return ReadMembers(body, {}, /*close=*/false, in_order);
  }

  // simdjson indexes the whole of what it is given before reading any of it, and in GitHub's
  // order everything the reader needs ends at repository.full_name, a fifth of a queued job's
  // body, while a completed job's steps, which it never needs, fill most of the rest. So it
  // reads `head` + `tail` + '}' first: the body up to the ',' after the first "full_name" key,
  // less the job's `,"steps":[...]` member, and the whole body only when that read fails or is
  // not `in_order`: action, then workflow_job, then repository with a full_name, all before the
  // cut. Such a read is exactly the whole body's:
  // - a cut inside a string fails simdjson's check for closed strings, and workflow_job was
  //   closed before repository began, which is before the cut;
  // - the steps end at the first `],"KEY":` after `,"steps":[` whose ']' follows '}' or '[':
  //   in valid JSON a '"' after ',' is never escaped, so that ']' is structural, and a wrong one
  //   (an array nested in a step, which GitHub's steps do not have) leaves the job closed by a
  //   step's '}' and the step's siblings at the top level, which fails the read.
  // Returns nothing when there is no such start, or it is most of the body anyway.
  struct Shortcut {
    std::string_view head;
    std::string_view tail;
  };
  static std::optional<Shortcut> PlanShortcut(std::string_view body) {
    Shortcut cut{body.substr(0, 0), body};
    size_t from = 0;
    size_t steps = FindKey(body, 0, "\"steps\"");
    // A member's key follows a ','; a body that begins with the key has none before it.
    while (steps != std::string_view::npos &&
           (steps == 0 || body.substr(steps - 1, 10) != ",\"steps\":[")) {
      steps = FindKey(body, steps + 1, "\"steps\"");  // a value "steps", say a job's name
    }
    if (steps != std::string_view::npos) {
      if (size_t end = StepsEnd(body, steps + 9); end != std::string_view::npos) {
        cut.head = body.substr(0, steps - 1);
        cut.tail = body.substr(end);
        from = end;
      }
    }
    size_t key = FindKey(body, from, "\"full_name\"");
    if (key == std::string_view::npos) return std::nullopt;
    size_t comma = body.find(',', key);
    if (comma == std::string_view::npos) return std::nullopt;
    cut.tail = cut.tail.substr(0, comma + 1 - static_cast<size_t>(cut.tail.data() - body.data()));
    if (cut.head.size() + cut.tail.size() > body.size() / 4 * 3) return std::nullopt;
    return cut;
  }

  // The first `key` (quotes included) at or after `from`, found from its first letter: memchr
  // skips the rest at memory speed and that letter is rare in what comes first, where
  // string_view::find stops at every '"' (JSON is full of them) and memmem costs five times as
  // much here.
  static size_t FindKey(std::string_view body, size_t from, std::string_view key) {
    const char* begin = body.data();
    const char* end = begin + body.size();
    for (const char* p = begin + from + 1; p < end;) {
      p = static_cast<const char*>(std::memchr(p, key[1], static_cast<size_t>(end - p)));
      if (p == nullptr) break;
      if (static_cast<size_t>(end - (p - 1)) >= key.size() &&
          std::memcmp(p - 1, key.data(), key.size()) == 0) {
        return static_cast<size_t>(p - 1 - begin);
      }
      ++p;
    }
    return std::string_view::npos;
  }

  // Where the ',' after the steps array is, searching from just inside its '['; npos when the
  // array's end is not of the shape described above.
  static size_t StepsEnd(std::string_view body, size_t from) {
    for (size_t close = body.find(']', from); close != std::string_view::npos;
         close = body.find(']', close + 1)) {
      if (body[close - 1] != '}' && body[close - 1] != '[') continue;
      if (body.substr(close + 1, 2) != ",\"") continue;
      size_t word = close + 3;
      while (word < body.size() &&
             (std::islower(static_cast<unsigned char>(body[word])) || body[word] == '_')) {
        ++word;
      }
      if (word > close + 3 && body.substr(word, 2) == "\":") return close + 1;
    }
    return std::string_view::npos;
  }

  Result<WorkflowJobFields> ReadMembers(std::string_view head, std::string_view tail, bool close,
                                        bool& in_order) {
    od::document doc;
    if (auto e = parser.iterate(Pad(head, tail, close)).get(doc)) return NotJson(e);
    od::object top;
    if (auto e = doc.get_object().get(top)) {
      return e == simdjson::INCORRECT_TYPE ? Malformed("the body is not a JSON object")
                                           : NotJson(e);
    }
    WorkflowJobFields out;
    bool have_action = false;
    bool have_job = false;
    bool have_repository = false;
    for (auto member : top) {
      od::field field;
      if (auto e = std::move(member).get(field)) return NotJson(e);
      od::raw_json_string key = field.key();
      if (key.unsafe_is_equal("action")) {
        std::string_view action;
        if (field.value().get_string().get(action)) return WrongType("action", "a string");
        out.action.assign(action);
        have_action = true;
      } else if (key.unsafe_is_equal("workflow_job")) {
        MVR_RETURN_IF_ERROR(ReadJob(field.value(), out));
        have_job = true;
      } else if (key.unsafe_is_equal("repository")) {
        bool from_full_name = false;
        MVR_RETURN_IF_ERROR(ReadRepository(field.value(), out, from_full_name));
        in_order = have_action && have_job && from_full_name;
        have_repository = true;
      }
      if (have_action && have_job && have_repository) break;
    }
    if (!have_action) return Malformed("action is missing");
    if (!have_job) return Malformed("workflow_job is missing");
    if (!have_repository) return Malformed("repository is missing");
    return out;
  }
};

namespace {

// The id of a compact `,"installation":{"id":N` at the top level's end: the last such key, whose
// object holds no other object and closes the body. nullopt when the body is not of that shape.
std::optional<int64_t> CompactInstallationId(std::string_view body) {
  constexpr std::string_view kKey = ",\"installation\":{\"id\":";
  const size_t at = body.rfind(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t close = body.find('}', at);
  if (close == std::string_view::npos || body.find('{', at + kKey.size()) < close) {
    return std::nullopt;
  }
  // Only the body's own closing '}' may follow the object: it is a top-level member.
  constexpr std::string_view kWhitespace = " \t\r\n";
  const size_t last = body.find_first_not_of(kWhitespace, close + 1);
  if (last == std::string_view::npos || body[last] != '}' ||
      body.find_first_not_of(kWhitespace, last + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  int64_t id = 0;
  size_t i = at + kKey.size();
  const size_t digits = i;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9' && i - digits < 18) {
    id = id * 10 + (body[i] - '0');
    ++i;
  }
  if (i == digits || id <= 0 || (body[i] != ',' && body[i] != '}')) return std::nullopt;
  return id;
}

}  // namespace

Result<std::optional<int64_t>> WorkflowJobReader::ReadInstallationId(std::string_view body) {
  if (std::optional<int64_t> quick = CompactInstallationId(body)) return quick;
  od::document doc;
  if (auto e = impl_->parser.iterate(impl_->Pad(body, {}, false)).get(doc)) return NotJson(e);
  od::object top;
  if (doc.get_object().get(top)) return Malformed("the body is not a JSON object");
  od::value installation;
  simdjson::error_code found = top.find_field_unordered("installation").get(installation);
  if (found == simdjson::NO_SUCH_FIELD) return std::optional<int64_t>();
  if (found) return NotJson(found);
  od::json_type type;
  if (auto e = installation.type().get(type)) return NotJson(e);
  if (type == od::json_type::null) return std::optional<int64_t>();
  od::object object;
  od::value id_value;
  int64_t id = 0;
  if (installation.get_object().get(object) || object.find_field_unordered("id").get(id_value) ||
      id_value.get_int64().get(id) || id <= 0) {
    return WrongType("installation", "an object with a positive integer id");
  }
  return std::optional<int64_t>(id);
}

WorkflowJobReader::WorkflowJobReader() : impl_(std::make_unique<Impl>()) {}
WorkflowJobReader::~WorkflowJobReader() = default;

Result<WorkflowJobFields> WorkflowJobReader::Read(std::string_view body) {
  return impl_->Read(body);
}

bool IsRepositoryName(std::string_view repository) {
  if (repository.size() > 256) return false;
  size_t slash = repository.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == repository.size()) {
    return false;
  }
  for (size_t i = 0; i < repository.size(); ++i) {
    char c = repository[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || (c == '/' && i == slash);
    if (!ok) return false;
  }
  return true;
}

}  // namespace mvr::runnerset
