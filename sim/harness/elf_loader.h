// Loads the PT_LOAD segments of a little-endian ELF32 RISC-V executable into a RAM image.
// No external libraries: the ELF header and program headers are parsed here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct RamImage {
    uint32_t base;               // byte address of words[0]
    std::vector<uint32_t> words; // whole RAM, zero where no segment lands
};

struct LoadedElf {
    uint32_t entry;
    uint32_t bytes_loaded;       // sum of the segments' memory sizes
};

// Copies every PT_LOAD segment (file bytes, then zeros up to p_memsz) to its physical
// address p_paddr inside `ram`. Throws std::runtime_error with a readable message when the
// file is not an ELF32 little-endian RISC-V executable or a segment falls outside the RAM.
LoadedElf load_elf32(const std::string &path, RamImage &ram);
