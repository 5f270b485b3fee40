// Bring-up mode only (no appliance): the harness's own IRQ line.
//
// Rising edges at cycles start + k*period + jitter_k (k = 0, 1, ... count-1, or forever
// when count is 0), each followed by `width` high cycles. jitter_k is drawn uniformly from
// [0, jitter) by a fixed-seed xorshift32, so runs are reproducible; jitter 0 or 1 means none.
// Requires width + jitter <= period - 1, so that the line is low for at least one cycle
// between pulses and the edges keep their order.
#pragma once

#include <cstdint>

class IrqDriver {
public:
    IrqDriver(uint64_t start, uint64_t period, uint64_t width, uint64_t jitter, uint64_t count)
        : start_(start), period_(period), width_(width), jitter_(jitter), count_(count) {
        next_rise_ = start_ + draw_jitter();
    }

    // The line level in `cycle`; call once per cycle with increasing cycles.
    bool level(uint64_t cycle) {
        if (period_ == 0)
            return false;
        if (high_ && cycle == fall_)
            high_ = false;
        if (!high_ && cycle == next_rise_ && (count_ == 0 || issued_ < count_)) {
            high_ = true;
            fall_ = cycle + width_;
            issued_++;
            next_rise_ = start_ + issued_ * period_ + draw_jitter();
        }
        return high_;
    }

private:
    uint64_t draw_jitter() {
        if (jitter_ <= 1)
            return 0;
        state_ ^= state_ << 13;
        state_ ^= state_ >> 17;
        state_ ^= state_ << 5;
        return state_ % jitter_;
    }

    uint64_t start_, period_, width_, jitter_, count_;
    uint64_t next_rise_ = 0, fall_ = 0, issued_ = 0;
    bool high_ = false;
    uint32_t state_ = 0x2545F491u;
};
