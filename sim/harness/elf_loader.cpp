#include "elf_loader.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the RAM image is filled bytewise");

namespace {

// Field offsets of the ELF32 file header and program header (System V ABI).
constexpr unsigned EI_CLASS = 4, EI_DATA = 5;
constexpr uint8_t ELFCLASS32 = 1, ELFDATA2LSB = 1;
constexpr uint16_t ET_EXEC = 2, EM_RISCV = 243;
constexpr uint32_t PT_LOAD = 1;
constexpr size_t EHDR_SIZE = 52, PHDR_SIZE = 32;

uint16_t read16(const std::vector<uint8_t> &bytes, size_t offset) {
    return uint16_t(bytes[offset] | bytes[offset + 1] << 8);
}

uint32_t read32(const std::vector<uint8_t> &bytes, size_t offset) {
    return uint32_t(bytes[offset]) | uint32_t(bytes[offset + 1]) << 8 |
           uint32_t(bytes[offset + 2]) << 16 | uint32_t(bytes[offset + 3]) << 24;
}

[[noreturn]] void fail(const std::string &path, const std::string &why) {
    throw std::runtime_error(path + ": " + why);
}

}  // namespace

LoadedElf load_elf32(const std::string &path, RamImage &ram) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        fail(path, "cannot open");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    if (bytes.size() < EHDR_SIZE || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0)
        fail(path, "not an ELF file");
    if (bytes[EI_CLASS] != ELFCLASS32 || bytes[EI_DATA] != ELFDATA2LSB)
        fail(path, "not a little-endian ELF32 file");
    if (read16(bytes, 16) != ET_EXEC || read16(bytes, 18) != EM_RISCV)
        fail(path, "not a RISC-V executable");

    LoadedElf loaded{read32(bytes, 24), 0};
    const uint32_t phoff = read32(bytes, 28);
    const uint16_t phentsize = read16(bytes, 42), phnum = read16(bytes, 44);
    if (phentsize < PHDR_SIZE || size_t(phoff) + size_t(phnum) * phentsize > bytes.size())
        fail(path, "truncated program header table");

    const uint64_t ram_bytes = uint64_t(ram.words.size()) * 4;
    for (unsigned n = 0; n < phnum; n++) {
        const size_t ph = phoff + size_t(n) * phentsize;
        if (read32(bytes, ph) != PT_LOAD)
            continue;
        const uint32_t offset = read32(bytes, ph + 4), paddr = read32(bytes, ph + 12);
        const uint32_t filesz = read32(bytes, ph + 16), memsz = read32(bytes, ph + 20);
        if (memsz == 0)
            continue;
        if (filesz > memsz || uint64_t(offset) + filesz > bytes.size())
            fail(path, "segment " + std::to_string(n) + " exceeds the file");
        if (paddr < ram.base || uint64_t(paddr - ram.base) + memsz > ram_bytes)
            fail(path, "segment " + std::to_string(n) + " lies outside the RAM");
        auto *image = reinterpret_cast<uint8_t *>(ram.words.data());  // little-endian host
        std::memcpy(image + (paddr - ram.base), bytes.data() + offset, filesz);
        std::memset(image + (paddr - ram.base) + filesz, 0, memsz - filesz);
        loaded.bytes_loaded += memsz;
    }
    if (loaded.bytes_loaded == 0)
        fail(path, "no loadable segment");
    return loaded;
}
