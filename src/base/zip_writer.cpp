#include "base/zip_writer.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <limits>

namespace mvr {
namespace {

constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint16_t kDosTimeMidnight = 0;

void Put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v & 0xffff));
  Put16(out, static_cast<uint16_t>(v >> 16));
}

Result<std::string> Deflate(const std::string& data) {
  z_stream z{};
  // Raw deflate (no zlib header), as ZIP wants; level 9 and the default memory level, fixed.
  if (deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("zlib deflateInit2 failed");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Internal("zlib deflate did not finish");
  return out;
}

// A '..' component would make an unzip write outside its target directory ("zip slip").
bool HasParentComponent(const std::string& name) {
  const std::filesystem::path path(name);
  return std::find(path.begin(), path.end(), "..") != path.end();
}

}  // namespace

Result<std::string> WriteZip(std::vector<ZipEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const ZipEntry& a, const ZipEntry& b) { return a.name < b.name; });
  std::string out, central;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    if (e.name.empty() || e.name[0] == '/') {
      return InvalidArgument("zip: entry name '" + e.name + "' must be a relative path");
    }
    if (HasParentComponent(e.name)) {
      return InvalidArgument("zip: entry name '" + e.name +
                             "' has a '..' component, which would unpack outside the target "
                             "directory");
    }
    if (i > 0 && entries[i - 1].name == e.name) {
      return InvalidArgument("zip: entry " + e.name + " is given twice");
    }
    if (e.data.size() >= std::numeric_limits<uint32_t>::max() ||
        out.size() >= std::numeric_limits<uint32_t>::max()) {
      return InvalidArgument("zip: " + e.name + " is too large for a ZIP without ZIP64");
    }
    MVR_ASSIGN_OR_RETURN(std::string packed, Deflate(e.data));
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    const uint32_t offset = static_cast<uint32_t>(out.size());
    // Local file header.
    Put32(out, 0x04034b50);
    Put16(out, 20);  // version needed: deflate
    Put16(out, 0);   // flags
    Put16(out, 8);   // deflate
    Put16(out, kDosTimeMidnight);
    Put16(out, kDosDate1980);
    Put32(out, crc);
    Put32(out, static_cast<uint32_t>(packed.size()));
    Put32(out, static_cast<uint32_t>(e.data.size()));
    Put16(out, static_cast<uint16_t>(e.name.size()));
    Put16(out, 0);  // no extra field (no timestamps beyond the DOS one)
    out += e.name;
    out += packed;
    // Central directory header.
    Put32(central, 0x02014b50);
    Put16(central, (3 << 8) | 20);  // made by Unix, spec 2.0: the external attributes are a mode
    Put16(central, 20);
    Put16(central, 0);
    Put16(central, 8);
    Put16(central, kDosTimeMidnight);
    Put16(central, kDosDate1980);
    Put32(central, crc);
    Put32(central, static_cast<uint32_t>(packed.size()));
    Put32(central, static_cast<uint32_t>(e.data.size()));
    Put16(central, static_cast<uint16_t>(e.name.size()));
    Put16(central, 0);                                     // extra
    Put16(central, 0);                                     // comment
    Put16(central, 0);                                     // disk
    Put16(central, 0);                                     // internal attributes
    Put32(central, (0100000u | (e.mode & 07777u)) << 16);  // a regular file with this mode
    Put32(central, offset);
    central += e.name;
  }
  const uint32_t central_offset = static_cast<uint32_t>(out.size());
  out += central;
  Put32(out, 0x06054b50);
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, static_cast<uint16_t>(entries.size()));
  Put16(out, static_cast<uint16_t>(entries.size()));
  Put32(out, static_cast<uint32_t>(central.size()));
  Put32(out, central_offset);
  Put16(out, 0);  // no comment
  return out;
}

}  // namespace mvr
