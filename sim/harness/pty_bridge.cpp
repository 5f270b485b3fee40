#include "pty_bridge.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <termios.h>
#include <unistd.h>

namespace {

[[noreturn]] void fail(const char *what) {
    throw std::runtime_error(std::string("pty: ") + what + ": " + std::strerror(errno));
}

}  // namespace

PtyBridge::PtyBridge() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0)
        fail("posix_openpt");
    if (grantpt(master_) != 0 || unlockpt(master_) != 0)
        fail("grantpt/unlockpt");
    const char *name = ptsname(master_);
    if (!name)
        fail("ptsname");
    path_ = name;
    slave_ = open(name, O_RDWR | O_NOCTTY);
    if (slave_ < 0)
        fail("open slave");
    termios settings{};
    if (tcgetattr(slave_, &settings) != 0)
        fail("tcgetattr");
    cfmakeraw(&settings);  // no echo, no line editing, no CR/LF translation
    if (tcsetattr(slave_, TCSANOW, &settings) != 0)
        fail("tcsetattr");
    if (fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK) != 0)
        fail("fcntl O_NONBLOCK");
}

PtyBridge::~PtyBridge() {
    if (slave_ >= 0)
        close(slave_);
    if (master_ >= 0)
        close(master_);
}

void PtyBridge::send(uint8_t byte) {
    if (out_.size() >= max_backlog) {
        bytes_dropped++;
        return;
    }
    out_.push_back(byte);
}

void PtyBridge::flush() {
    uint8_t chunk[4096];
    while (!out_.empty()) {
        const size_t count = std::min(out_.size(), sizeof chunk);
        std::copy(out_.begin(), out_.begin() + long(count), chunk);
        const ssize_t written = write(master_, chunk, count);
        if (written <= 0)
            return;  // EAGAIN: the host is behind; try again at the next service
        out_.erase(out_.begin(), out_.begin() + written);
        bytes_sent += uint64_t(written);
    }
}

size_t PtyBridge::receive(uint8_t *buffer, size_t max) {
    const ssize_t count = read(master_, buffer, max);
    if (count <= 0)
        return 0;  // EAGAIN (nothing written) or EIO (no slave open)
    bytes_received += uint64_t(count);
    return size_t(count);
}
