// The ground-truth log: what the DUT did, cycle by cycle, recorded by the harness from the
// simulated wires, independently of any gateware. Format: sim/README.md ("Ground-truth
// log"). One text line per event, "<cycle> <event> <fields>", cycles in decimal, values in
// 0x-prefixed hex, lines in non-decreasing cycle order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

class TruthLog {
public:
    TruthLog() = default;
    explicit TruthLog(const std::string &path) {
        file_ = std::fopen(path.c_str(), "w");
        if (!file_)
            throw std::runtime_error("cannot write ground-truth log " + path);
        std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
        std::fputs("# latscope ground truth v1: <cycle> <event> <fields>; "
                   "cycle 0 = first cycle after reset release\n", file_);
    }
    ~TruthLog() { close(); }
    TruthLog(const TruthLog &) = delete;
    TruthLog &operator=(const TruthLog &) = delete;

    bool enabled() const { return file_ != nullptr; }

    void line(uint64_t cycle, const char *event, unsigned level) {
        if (file_)
            std::fprintf(file_, "%llu %s %u\n", (unsigned long long)cycle, event, level);
    }
    void value(uint64_t cycle, const char *event, uint32_t value) {
        if (file_)
            std::fprintf(file_, "%llu %s 0x%08x\n", (unsigned long long)cycle, event, value);
    }
    void trace(uint64_t cycle, uint32_t address, uint32_t value, unsigned sel) {
        if (file_)
            std::fprintf(file_, "%llu trace 0x%08x 0x%08x 0x%x\n", (unsigned long long)cycle,
                         address, value, sel);
    }
    // The CPU took an interrupt: mcause and mepc (the address it returns to) as written.
    void interrupt(uint64_t cycle, uint32_t mcause, uint32_t mepc) {
        if (file_)
            std::fprintf(file_, "%llu interrupt 0x%08x 0x%08x\n", (unsigned long long)cycle,
                         mcause, mepc);
    }
    // The external interrupt became masked (1) or takeable (0); pc: the instruction that
    // did it (sim/README.md, "Ground-truth log").
    void masked(uint64_t cycle, unsigned level, uint32_t pc) {
        if (file_)
            std::fprintf(file_, "%llu masked %u 0x%08x\n", (unsigned long long)cycle, level,
                         pc);
    }
    // At the end of the run (cycle: the last): per instruction address, how often it reached
    // execute as an instruction an interrupt could have met (sim/README.md), in address order.
    void takeable(uint64_t cycle, const std::unordered_map<uint32_t, uint64_t> &cycles) {
        if (!file_)
            return;
        std::vector<std::pair<uint32_t, uint64_t>> sorted(cycles.begin(), cycles.end());
        std::sort(sorted.begin(), sorted.end());
        for (const auto &[pc, count] : sorted)
            std::fprintf(file_, "%llu takeable 0x%08x %llu\n", (unsigned long long)cycle, pc,
                         (unsigned long long)count);
    }
    void event(uint64_t cycle, const char *event) {
        if (file_)
            std::fprintf(file_, "%llu %s\n", (unsigned long long)cycle, event);
    }
    void close() {
        if (file_)
            std::fclose(file_);
        file_ = nullptr;
    }

private:
    std::FILE *file_ = nullptr;
};
