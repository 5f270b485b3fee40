// The simulated wires from the SoC's marker pins to the appliance (rtl/marker_wiring.v) and
// the faults `--miswire SPEC` puts into them, for the self-test's wiring check.
//
// SPEC (pins: 0..16, D0..D15 or STROBE):
//   swap:A,B          wires A and B exchanged (A's pin arrives on B and B's on A)
//   stuck-low:A       wire A held low;  stuck-high:A: held high
//   short-and:A,B,..  these wires touch and carry the AND of their pins (wired-AND)
//   short-or:A,B,..   the same with OR
#pragma once

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

struct MarkerWiring {
    static constexpr unsigned PINS = 17;   // D0..D15, STROBE
    uint8_t route[PINS];                   // wire k carries pin route[k]
    uint32_t short_and = 0, short_or = 0, stuck_low = 0, stuck_high = 0;

    MarkerWiring() {
        for (unsigned k = 0; k < PINS; k++)
            route[k] = uint8_t(k);
    }

    bool straight() const {
        for (unsigned k = 0; k < PINS; k++)
            if (route[k] != k)
                return false;
        return !(short_and | short_or | stuck_low | stuck_high);
    }

    // The rtl's 85-bit route input: 5 bits per wire, wire 0 lowest.
    void route_words(uint32_t words[3]) const {
        words[0] = words[1] = words[2] = 0;
        for (unsigned k = 0; k < PINS; k++)
            for (unsigned bit = 0; bit < 5; bit++)
                if (route[k] >> bit & 1)
                    words[(5 * k + bit) / 32] |= 1u << ((5 * k + bit) % 32);
    }

    void add(const std::string &spec) {
        const size_t colon = spec.find(':');
        if (colon == std::string::npos)
            throw std::runtime_error("--miswire " + spec + ": expected KIND:PINS (see --help)");
        const std::string kind = spec.substr(0, colon);
        std::vector<unsigned> pins;
        size_t start = colon + 1;
        for (;;) {
            const size_t comma = spec.find(',', start);
            pins.push_back(pin(spec, spec.substr(start, comma - start)));
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        uint32_t mask = 0;
        for (unsigned p : pins)
            mask |= 1u << p;
        const bool one = pins.size() == 1, pair = pins.size() == 2;
        if (kind == "swap" && pair && pins[0] != pins[1]) {
            const uint8_t a = route[pins[0]];
            route[pins[0]] = route[pins[1]];
            route[pins[1]] = a;
        } else if (kind == "stuck-low" && one) stuck_low |= mask;
        else if (kind == "stuck-high" && one) stuck_high |= mask;
        else if (kind == "short-and" && pins.size() >= 2) short_and |= mask;
        else if (kind == "short-or" && pins.size() >= 2) short_or |= mask;
        else
            throw std::runtime_error("--miswire " + spec + ": expected swap:A,B, stuck-low:A, "
                                     "stuck-high:A, short-and:A,B[,..] or short-or:A,B[,..]");
        if (short_and & short_or)
            throw std::runtime_error("--miswire " + spec + ": a wire in both a wired-AND and a "
                                     "wired-OR short");
    }

private:
    static unsigned pin(const std::string &spec, std::string name) {
        for (char &c : name)
            c = char(std::toupper(static_cast<unsigned char>(c)));
        if (name == "STROBE")
            return 16;
        if (!name.empty() && name[0] == 'D')
            name.erase(0, 1);
        if (name.empty() || name.size() > 2 ||
            name.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(name) >= PINS)
            throw std::runtime_error("--miswire " + spec + ": pins are 0..16, D0..D15 or STROBE");
        return unsigned(std::stoul(name));
    }
};
