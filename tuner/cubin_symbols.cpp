#include "cubin_symbols.hpp"

#include <elf.h>

#include <cstring>

namespace cutune {

std::vector<std::string> cubin_function_names(const std::vector<char>& cubin) {
  std::vector<std::string> names;
  const auto fits = [&](std::uint64_t offset, std::uint64_t bytes) {
    return offset <= cubin.size() && bytes <= cubin.size() - offset;
  };
  Elf64_Ehdr header;
  if (!fits(0, sizeof header)) return names;
  std::memcpy(&header, cubin.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return names;
  if (header.e_shentsize != sizeof(Elf64_Shdr) ||
      !fits(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr)))
    return names;
  const auto section = [&](std::size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, cubin.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    return s;
  };
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symbols = section(i);
    if (symbols.sh_type != SHT_SYMTAB || symbols.sh_entsize != sizeof(Elf64_Sym) || symbols.sh_link >= header.e_shnum)
      continue;
    const Elf64_Shdr strings = section(symbols.sh_link);
    if (!fits(symbols.sh_offset, symbols.sh_size) || !fits(strings.sh_offset, strings.sh_size)) continue;
    for (std::uint64_t at = 0; at + sizeof(Elf64_Sym) <= symbols.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, cubin.data() + symbols.sh_offset + at, sizeof symbol);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_name >= strings.sh_size) continue;
      const char* name = cubin.data() + strings.sh_offset + symbol.st_name;
      names.emplace_back(name, strnlen(name, strings.sh_size - symbol.st_name));
    }
  }
  return names;
}

}  // namespace cutune
