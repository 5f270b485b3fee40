// UART line codec, one call per simulated cycle: 8 data bits, LSB first, no parity, one
// stop bit, `divisor` (>= 2) cycles per bit (the appliance's uart_divisor).
#pragma once

#include <cstdint>
#include <deque>

// Turns the appliance's uart_tx line into bytes. A frame starts in the first cycle the
// idle-high line is low (cycle s); bit k (0 = start, 1..8 = data, 9 = stop) is sampled in
// cycle s + divisor/2 + k*divisor, i.e. in the middle of the bit. A start bit that is high
// again at its middle is a glitch and ignored; a low stop bit counts a framing error and
// drops the byte. The line is watched for the next start from the stop bit's sample on.
class UartDecoder {
public:
    explicit UartDecoder(unsigned divisor) : divisor_(divisor) {}

    // Feeds the line level of one cycle; returns true and sets `byte` when a frame ends.
    bool step(bool line, uint8_t &byte) {
        if (bit_ < 0) {
            if (!line) {
                bit_ = 0;
                countdown_ = divisor_ / 2 - 1;  // divisor >= 2
            }
            return false;
        }
        if (countdown_-- != 0)
            return false;
        countdown_ = divisor_ - 1;
        if (bit_ == 0) {
            if (line)
                bit_ = -1;  // glitch, not a start bit
            else
                bit_ = 1;
            return false;
        }
        if (bit_ <= 8) {
            shift_ = uint8_t(shift_ >> 1 | (line ? 0x80 : 0));
            bit_++;
            return false;
        }
        bit_ = -1;
        if (!line) {
            framing_errors++;
            return false;
        }
        byte = shift_;
        return true;
    }

    // A frame is being received (from its start bit to its stop bit's sample).
    bool busy() const { return bit_ >= 0; }

    uint64_t framing_errors = 0;

private:
    unsigned divisor_;
    int bit_ = -1;            // -1: idle, 0: start bit, 1..8: data bits, 9: stop bit
    unsigned countdown_ = 0;  // cycles until the next sample
    uint8_t shift_ = 0;
};

// Serialises queued bytes onto uart_rx: each byte is a start bit, 8 data bits and a stop
// bit of `divisor` cycles each, back to back; the line idles high when the queue is empty.
class UartEncoder {
public:
    explicit UartEncoder(unsigned divisor) : divisor_(divisor) {}

    void push(uint8_t byte) { queue_.push_back(byte); }
    size_t queued() const { return queue_.size() + (bit_ >= 0 ? 1 : 0); }

    // The line level for the next cycle.
    bool step() {
        if (bit_ < 0) {
            if (queue_.empty())
                return true;
            frame_ = uint16_t(1u << 9 | unsigned(queue_.front()) << 1);  // stop, data, start
            queue_.pop_front();
            bit_ = 0;
            countdown_ = divisor_;
        }
        const bool level = (frame_ >> bit_) & 1;
        if (--countdown_ == 0) {
            countdown_ = divisor_;
            if (++bit_ == 10)
                bit_ = -1;
        }
        return level;
    }

private:
    unsigned divisor_;
    std::deque<uint8_t> queue_;
    int bit_ = -1;
    unsigned countdown_ = 0;
    uint16_t frame_ = 0;
};
