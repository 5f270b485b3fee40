/*
 * LD_PRELOAD shim that lets libserialport 0.1.1 (Debian's, under sigrok-cli and PulseView)
 * open a pseudo-terminal, such as the one the simulated appliance bridges its UART to.
 *
 * libserialport refuses a pty for two reasons (sigrok bug 1642):
 *   1. sp_get_port_by_name() looks the port up in sysfs: lstat() and readlink() of
 *      /sys/class/tty/<name>. A pty /dev/pts/N has no entry there.
 *   2. sp_open() reads the modem lines with ioctl(TIOCMGET), and setting the port up sets
 *      them (TIOCMSET / TIOCMBIS / TIOCMBIC); a pty has no modem lines and fails these.
 * The shim answers the sysfs lookups of /sys/class/tty/pts/N as if the port were a plain
 * on-board serial port, and makes the modem-line ioctls succeed on a pty (reading "DSR, CTS
 * and carrier present"). It also starts every open of a pty with its input empty, as a real
 * serial port does (the tty layer drops its buffers at the last close; a USB adapter's driver
 * resets the chip at open): the simulation's harness keeps the pty open, so what the appliance
 * sent after the last program stopped reading would otherwise greet the next one (see
 * docs/protocol.md, "Where an RLE readback ends"). Everything else goes to the C library
 * unchanged.
 *
 * Build: make pty-shim (build/pty_shim.so), or gcc -shared -fPIC -O2 -o pty_shim.so pty_shim.c -ldl
 * Use:   LD_PRELOAD=$PWD/build/pty_shim.so sigrok-cli -d ols:conn=/dev/pts/N --scan
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#define PTY_SYSFS "/sys/class/tty/pts/"
/* Where the sysfs entry of a pty would point: "virtual" (neither "usb" nor "bluetooth")
 * makes libserialport treat it as a native port and look no further. */
#define PTY_TARGET "../../devices/virtual/tty/pts"

/* "/sys/class/tty/pts/N" exactly (not a file below it). */
static int is_pty_entry(const char *path)
{
    const char *rest;

    if (strncmp(path, PTY_SYSFS, strlen(PTY_SYSFS)) != 0)
        return 0;
    rest = path + strlen(PTY_SYSFS);
    return *rest != '\0' && strspn(rest, "0123456789") == strlen(rest);
}

/* libserialport 0.1.1 was built against a glibc that had lstat() as __lxstat(). */
int __lxstat(int version, const char *path, struct stat *buf)
{
    (void)version;
    if (is_pty_entry(path)) {
        memset(buf, 0, sizeof(*buf));
        buf->st_mode = S_IFLNK | 0777;
        return 0;
    }
    return lstat(path, buf);
}

ssize_t readlink(const char *path, char *buf, size_t size)
{
    static ssize_t (*real_readlink)(const char *, char *, size_t);

    if (is_pty_entry(path)) {
        size_t length = strlen(PTY_TARGET);
        if (length > size)
            length = size;
        memcpy(buf, PTY_TARGET, length);
        return (ssize_t)length;
    }
    if (!real_readlink)
        real_readlink = (ssize_t (*)(const char *, char *, size_t))dlsym(RTLD_NEXT, "readlink");
    return real_readlink(path, buf, size);
}

/* A pty's slave side: major numbers 136..143 (Unix98 ptys). */
static int is_pty(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)
           && major(st.st_rdev) >= 136 && major(st.st_rdev) <= 143;
}

int ioctl(int fd, unsigned long request, ...)
{
    static int (*real_ioctl)(int, unsigned long, ...);
    va_list args;
    void *arg;
    int result, saved;

    va_start(args, request);
    arg = va_arg(args, void *);
    va_end(args);
    if (!real_ioctl)
        real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    result = real_ioctl(fd, request, arg);
    if (result == -1 && is_pty(fd)) {
        saved = errno;
        switch (request) {
        case TIOCMGET:
            *(int *)arg = TIOCM_DSR | TIOCM_CTS | TIOCM_CD;
            return 0;
        case TIOCMSET:
        case TIOCMBIS:
        case TIOCMBIC:
            return 0;
        }
        errno = saved;
    }
    return result;
}

/* The port starts empty: what came in while no program had it open is gone. */
static int opened(int fd)
{
    if (fd >= 0 && is_pty(fd))
        tcflush(fd, TCIFLUSH);
    return fd;
}

int open(const char *path, int flags, ...)
{
    static int (*real_open)(const char *, int, ...);
    va_list args;
    mode_t mode = 0;

    if (flags & (O_CREAT | O_TMPFILE)) {
        va_start(args, flags);
        mode = va_arg(args, mode_t);
        va_end(args);
    }
    if (!real_open)
        real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    return opened(real_open(path, flags, mode));
}

/* open() with a constant flags argument, as _FORTIFY_SOURCE builds call it. */
int __open_2(const char *path, int flags)
{
    static int (*real_open_2)(const char *, int);

    if (!real_open_2)
        real_open_2 = (int (*)(const char *, int))dlsym(RTLD_NEXT, "__open_2");
    return opened(real_open_2(path, flags));
}
