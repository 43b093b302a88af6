#include "lambda/elf_info.h"

#include <elf.h>

#include <cstring>
#include <optional>

namespace mvr::lambda {
namespace {

template <typename T>
std::optional<T> At(std::string_view bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

std::string CString(std::string_view bytes, uint64_t offset) {
  if (offset >= bytes.size()) return "";
  const char* start = bytes.data() + offset;
  return std::string(start, strnlen(start, bytes.size() - offset));
}

}  // namespace

Result<ElfInfo> ReadElfInfo(std::string_view bytes) {
  auto eh = At<Elf64_Ehdr>(bytes, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
    return InvalidArgument("not an ELF file");
  }
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
    return InvalidArgument("not a 64-bit little-endian ELF file");
  }
  ElfInfo info;
  info.machine = eh->e_machine == EM_X86_64    ? ElfMachine::kX86_64
                 : eh->e_machine == EM_AARCH64 ? ElfMachine::kAarch64
                                               : ElfMachine::kOther;
  std::vector<Elf64_Phdr> loads;
  std::optional<Elf64_Phdr> dynamic;
  for (int i = 0; i < eh->e_phnum; ++i) {
    auto ph = At<Elf64_Phdr>(bytes, eh->e_phoff + uint64_t(i) * eh->e_phentsize);
    if (!ph) return InvalidArgument("truncated program headers");
    if (ph->p_type == PT_LOAD) loads.push_back(*ph);
    if (ph->p_type == PT_DYNAMIC) dynamic = *ph;
    if (ph->p_type == PT_INTERP) info.interpreter = CString(bytes, ph->p_offset);
  }
  if (!dynamic) return info;
  auto file_offset = [&](uint64_t vaddr) -> std::optional<uint64_t> {
    for (const Elf64_Phdr& l : loads) {
      if (vaddr >= l.p_vaddr && vaddr < l.p_vaddr + l.p_filesz) {
        return vaddr - l.p_vaddr + l.p_offset;
      }
    }
    return std::nullopt;
  };
  uint64_t strtab = 0, verneed = 0, verneednum = 0;
  std::vector<uint64_t> needed_offsets;
  for (uint64_t off = dynamic->p_offset;
       off + sizeof(Elf64_Dyn) <= dynamic->p_offset + dynamic->p_filesz; off += sizeof(Elf64_Dyn)) {
    auto d = At<Elf64_Dyn>(bytes, off);
    if (!d) return InvalidArgument("truncated dynamic section");
    if (d->d_tag == DT_NULL) break;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (d->d_tag == DT_NEEDED) needed_offsets.push_back(d->d_un.d_val);
    if (d->d_tag == DT_VERNEED) verneed = d->d_un.d_ptr;
    if (d->d_tag == DT_VERNEEDNUM) verneednum = d->d_un.d_val;
  }
  auto str_base = file_offset(strtab);
  if (!str_base) return InvalidArgument("the dynamic string table is not in a loaded segment");
  for (uint64_t n : needed_offsets) info.needed.push_back(CString(bytes, *str_base + n));
  if (verneed != 0) {
    auto vn_off = file_offset(verneed);
    if (!vn_off) return InvalidArgument("the version needs are not in a loaded segment");
    uint64_t at = *vn_off;
    for (uint64_t i = 0; i < verneednum; ++i) {
      auto vn = At<Elf64_Verneed>(bytes, at);
      if (!vn) return InvalidArgument("truncated version needs");
      const std::string file = CString(bytes, *str_base + vn->vn_file);
      uint64_t aux_at = at + vn->vn_aux;
      for (int j = 0; j < vn->vn_cnt; ++j) {
        auto aux = At<Elf64_Vernaux>(bytes, aux_at);
        if (!aux) return InvalidArgument("truncated version needs");
        info.version_needs[file].insert(CString(bytes, *str_base + aux->vna_name));
        if (aux->vna_next == 0) break;
        aux_at += aux->vna_next;
      }
      if (vn->vn_next == 0) break;
      at += vn->vn_next;
    }
  }
  return info;
}

std::pair<int, int> GlibcVersion(std::string_view name) {
  constexpr std::string_view kPrefix = "GLIBC_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return {0, 0};
  int major = 0, minor = 0;
  if (std::sscanf(std::string(name.substr(kPrefix.size())).c_str(), "%d.%d", &major, &minor) < 1) {
    return {0, 0};
  }
  return {major, minor};
}

}  // namespace mvr::lambda
