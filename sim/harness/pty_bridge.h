// A pseudo-terminal whose slave side the host opens like a USB serial port (pyserial).
//
// The simulation never waits for the host: the master side is non-blocking, bytes the
// host has not read yet wait in a queue here (up to `max_backlog`, beyond which they are
// dropped and counted), and the harness keeps a slave descriptor of its own open in raw
// mode, so that bytes written before the host opens the port are neither echoed back nor
// lost, and reads see "no data" instead of an error while no host is connected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

class PtyBridge {
public:
    PtyBridge();  // throws std::runtime_error
    ~PtyBridge();
    PtyBridge(const PtyBridge &) = delete;
    PtyBridge &operator=(const PtyBridge &) = delete;

    const std::string &path() const { return path_; }

    // Queues one byte for the host; call flush() to move queued bytes to the pty.
    void send(uint8_t byte);
    // Writes as much of the queue as the pty takes now, without blocking.
    void flush();
    // Reads at most `max` bytes the host wrote, without blocking; returns how many.
    size_t receive(uint8_t *buffer, size_t max);

    size_t backlog() const { return out_.size(); }
    uint64_t bytes_sent = 0, bytes_received = 0, bytes_dropped = 0;
    size_t max_backlog = size_t(64) << 20;

private:
    int master_ = -1, slave_ = -1;
    std::string path_;
    std::deque<uint8_t> out_;
};
