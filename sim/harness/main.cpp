// latscope full-system simulation harness (Verilator): runs firmware on the simulated SoC,
// optionally with the appliance gateware, and records the ground truth.
//
// Cycle numbering: cycle 0 is the first clock cycle after the system reset is released
// (mtime reads 0 in it); cycle N follows N rising edges later. Every cycle the harness
//   1. sets the inputs for cycle N (the bring-up IRQ line, uart_rx, the CPU hold),
//   2. evaluates the falling edge, which also settles the combinational logic, and samples
//      every output of cycle N (the ground-truth log, console, exit, uart_tx),
//   3. evaluates the rising edge that starts cycle N+1.
// So an output that a flip-flop drives changes in the cycle that follows the rising edge
// that loaded it, and a bus transfer is seen in the cycle whose ACK is high.
//
// Run with --help for the options; sim/README.md has the details.

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <sys/prctl.h>

#include "Vlatscope_sim_top.h"
#include "Vlatscope_sim_top__Dpi.h"
#include "svdpi.h"
#include "verilated.h"
#if LATSCOPE_TRACE == 1
#include "verilated_vcd_c.h"
using TraceFile = VerilatedVcdC;
#elif LATSCOPE_TRACE == 2
#include "verilated_fst_c.h"
using TraceFile = VerilatedFstC;
#endif

#include "elf_loader.h"
#include "irq_driver.h"
#include "marker_wiring.h"
#include "pty_bridge.h"
#include "soc_map.h"
#include "truth_log.h"
#include "uart.h"

namespace {

#ifdef LATSCOPE_WITH_APPLIANCE
constexpr bool WITH_APPLIANCE = true;
#else
constexpr bool WITH_APPLIANCE = false;
#endif
// The appliance's UART divisor, compiled in by sim/Makefile (UART_DIVISOR) from the same
// setting the gateware was exported with; bring-up builds default to 4.
#ifndef LATSCOPE_UART_DIVISOR
#define LATSCOPE_UART_DIVISOR 4
#endif
#define LATSCOPE_STR2(x) #x
#define LATSCOPE_STR(x) LATSCOPE_STR2(x)

// The fixed memory map (sim/README.md), as byte addresses, from sim/soc_map.toml.
constexpr uint32_t RAM_BASE = SOC_RAM_BASE, RAM_BYTES = SOC_RAM_BYTES;
constexpr uint32_t GPIO_OUT = SOC_GPIO_OUT;
constexpr uint32_t MTIMECMP_LO = SOC_MTIMECMP_LO, MTIMECMP_HI = SOC_MTIMECMP_HI;
constexpr uint32_t SIM_EXIT = SOC_SIM_EXIT, SIM_PUTC = SOC_SIM_PUTC;
constexpr uint32_t IRQ_PENDING = SOC_IRQ_PENDING;
constexpr uint32_t LOAD_IRQ_PERIOD = SOC_LOAD_IRQ_PERIOD, LOAD_IRQ_PENDING = SOC_LOAD_IRQ_PENDING;
constexpr uint32_t BUS_LOAD_CYCLES = SOC_BUS_LOAD_CYCLES, BUS_LOAD_SEED = SOC_BUS_LOAD_SEED,
                   BUS_LOAD_SRC = SOC_BUS_LOAD_SRC, BUS_LOAD_DST = SOC_BUS_LOAD_DST,
                   BUS_LOAD_WORDS = SOC_BUS_LOAD_WORDS;
constexpr uint32_t TRACE_BASE = SOC_TRACE_BASE, TRACE_BYTES = SOC_TRACE_BYTES;
constexpr const char *RAM_SCOPE = "TOP.latscope_sim_top.soc.ram";

constexpr unsigned RESET_CYCLES = 8;  // plus one: see reset()
// --release-on-start: the link is taken to be idle (the appliance has answered) after this
// many cycles without a UART bit either way; command to reply takes a few tens of cycles.
constexpr uint64_t LINK_QUIET_CYCLES = 1024;
constexpr int STATUS_TIMEOUT = 124, STATUS_ERROR = 125;

volatile std::sig_atomic_t stop_signal = 0;
volatile std::sig_atomic_t release_cpu = 0;

void on_stop(int signal) { stop_signal = signal; }

// The process's CPU time: on a shared machine, cycles per CPU second measure the simulator,
// cycles per wall second also the other processes (and, with --pty, the host's pace).
double cpu_seconds() {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}
void on_release(int) { release_cpu = 1; }

const char USAGE[] =
    "usage: latscope-sim [options] FIRMWARE.elf\n"
    "  --max-cycles N     stop after N cycles without SIM_EXIT (0 = never; default 0)\n"
    "  --truth FILE       write the ground-truth log to FILE\n"
    "  --console FILE     firmware console (SIM_PUTC) to FILE instead of stderr\n"
    "  --linger N         keep simulating N cycles after SIM_EXIT (default 0)\n"
    "  --hold-cpu         keep the CPU in reset until SIGUSR1; everything else runs\n"
    "  --release-on-start N  keep the CPU in reset until N (>= 1) cycles after the appliance's\n"
    "                     capture starts (its `capturing` output rises); SIGUSR1 releases\n"
    "                     it at once only while no capture has started; until then the\n"
    "                     clock runs only while the link is busy (host commands enter at\n"
    "                     fixed cycles, see waiting_for_host)\n"
    "  --pause-after-exit N  N cycles after SIM_EXIT, stop the clock until the host sends a\n"
    "                     byte (it then enters uart_rx at that fixed cycle)\n"
    "  --pty              bridge uart_tx/uart_rx to a new pseudo-terminal, print 'PTY <path>'\n"
    "  --uart-divisor N   cycles per UART bit (>= 2; default " LATSCOPE_STR(LATSCOPE_UART_DIVISOR)
    ", the appliance's)\n"
    "  --pty-poll N       cycles between pty services and signal checks (default 1024)\n"
    "  appliance builds, the wires from the SoC's marker pins to the appliance:\n"
    "  --jumper           with --hold-cpu: the self-test's loopback jumper, the appliance's\n"
    "                     IRQ output on EDGE0 and the strobe, until the CPU is released\n"
    "  --miswire SPEC     a wiring fault (repeatable); pins 0..16, D0..D15 or STROBE:\n"
    "                     swap:A,B  stuck-low:A  stuck-high:A  short-and:A,B[,..]\n"
    "                     short-or:A,B[,..]\n"
    "  bring-up mode only (built without the appliance; the harness drives irq):\n"
    "  --irq-period N     cycles between rising edges (0 = line stays low; default 0)\n"
    "  --irq-start N      cycle of the first rising edge (default = period)\n"
    "  --irq-width N      high cycles per pulse (default 16)\n"
    "  --irq-jitter N     add a reproducible pseudo-random 0..N-1 cycles to each edge\n"
    "  --irq-count N      stop after N pulses (0 = forever; default 0)\n"
    "  trace builds only (make TRACE=vcd or TRACE=fst):\n"
    "  --trace FILE       dump all signals to FILE; --trace-start N: from cycle N on\n"
    "Prints 'EXIT code=<c> cycle=<n>' on stdout when the firmware writes SIM_EXIT, and\n"
    "'SIM end=<exit|timeout|signal> code=<c> cycles=<n> seconds=<s> cycles_per_s=<r>' at the end.\n"
    "Exit status: the firmware's exit code, 124 on --max-cycles, 128+signal, 125 on errors.\n";

struct Options {
    std::string firmware, truth, console, trace;
    uint64_t max_cycles = 0, linger = 0, trace_start = 0;
    uint64_t release_on_start = 0, pause_after_exit = UINT64_MAX;
    bool hold_cpu = false, pty = false, jumper = false;
    MarkerWiring wiring;
    unsigned uart_divisor = LATSCOPE_UART_DIVISOR, pty_poll = 1024;
    uint64_t irq_period = 0, irq_start = UINT64_MAX, irq_width = 16, irq_jitter = 0,
             irq_count = 0;
};

uint64_t parse_number(const char *option, const char *text) {
    char *end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 0);
    if (!text[0] || *end || errno || text[0] == '-')
        throw std::runtime_error(std::string(option) + ": not a number: " + text);
    return value;
}

Options parse_options(int argc, char **argv) {
    Options options;
    for (int n = 1; n < argc; n++) {
        const std::string arg = argv[n];
        auto value = [&]() -> const char * {
            if (n + 1 >= argc)
                throw std::runtime_error(arg + " needs a value");
            return argv[++n];
        };
        auto number = [&]() { return parse_number(arg.c_str(), value()); };
        if (arg == "-h" || arg == "--help") {
            std::fputs(USAGE, stdout);
            std::exit(0);
        } else if (arg == "--max-cycles") options.max_cycles = number();
        else if (arg == "--truth") options.truth = value();
        else if (arg == "--console") options.console = value();
        else if (arg == "--linger") options.linger = number();
        else if (arg == "--hold-cpu") options.hold_cpu = true;
        else if (arg == "--release-on-start") options.release_on_start = number();
        else if (arg == "--pause-after-exit") options.pause_after_exit = number();
        else if (arg == "--pty") options.pty = true;
        else if (arg == "--uart-divisor") options.uart_divisor = unsigned(number());
        else if (arg == "--pty-poll") options.pty_poll = unsigned(number());
        else if (arg == "--jumper") options.jumper = true;
        else if (arg == "--miswire") options.wiring.add(value());
        else if (arg == "--irq-period") options.irq_period = number();
        else if (arg == "--irq-start") options.irq_start = number();
        else if (arg == "--irq-width") options.irq_width = number();
        else if (arg == "--irq-jitter") options.irq_jitter = number();
        else if (arg == "--irq-count") options.irq_count = number();
        else if (arg == "--trace") options.trace = value();
        else if (arg == "--trace-start") options.trace_start = number();
        else if (!arg.empty() && arg[0] == '-')
            throw std::runtime_error("unknown option " + arg + " (see --help)");
        else if (options.firmware.empty()) options.firmware = arg;
        else throw std::runtime_error("more than one firmware file given");
    }
    if (options.firmware.empty())
        throw std::runtime_error("no firmware file given (see --help)");
    if (options.uart_divisor < 2)
        throw std::runtime_error("--uart-divisor must be at least 2");
    if (options.pty_poll == 0)
        throw std::runtime_error("--pty-poll must be at least 1");
    if (options.release_on_start) {
        if (!WITH_APPLIANCE)
            throw std::runtime_error("--release-on-start: this build has no appliance");
        options.hold_cpu = true;
    }
    if (options.jumper && !options.hold_cpu)
        throw std::runtime_error("--jumper needs --hold-cpu (or --release-on-start): the "
                                 "jumper comes off when the CPU is released");
    if ((options.jumper || !options.wiring.straight()) && !WITH_APPLIANCE)
        throw std::runtime_error("--jumper, --miswire: this build has no appliance");
    if (options.pause_after_exit != UINT64_MAX && !options.pty)
        throw std::runtime_error("--pause-after-exit needs --pty (it waits for the host)");
    if (options.irq_start == UINT64_MAX)
        options.irq_start = options.irq_period;
    if (options.irq_period) {
        if (WITH_APPLIANCE)
            throw std::runtime_error("--irq-*: this build has the appliance, which drives irq");
        const uint64_t jitter = options.irq_jitter > 1 ? options.irq_jitter - 1 : 0;
        if (options.irq_width == 0 || options.irq_width + jitter >= options.irq_period)
            throw std::runtime_error("--irq-width: need 1 <= width + jitter - 1 < period");
    }
#if !LATSCOPE_TRACE
    if (!options.trace.empty())
        throw std::runtime_error("--trace: not a trace build (make -C sim TRACE=vcd or fst)");
#endif
    return options;
}

// The firmware's console: SIM_PUTC characters, written out a line at a time.
class Console {
public:
    explicit Console(const std::string &path) {
        if (!path.empty()) {
            file_ = std::fopen(path.c_str(), "w");
            if (!file_)
                throw std::runtime_error("cannot write console file " + path);
        }
    }
    ~Console() {
        flush();
        if (file_ != stderr)
            std::fclose(file_);
    }
    void put(char c) {
        line_.push_back(c);
        if (c == '\n' || line_.size() >= 4096)
            flush();
    }
    void flush() {
        std::fwrite(line_.data(), 1, line_.size(), file_);
        std::fflush(file_);
        line_.clear();
    }

private:
    std::FILE *file_ = stderr;
    std::string line_;
};

uint32_t merge_bytes(uint32_t current, uint32_t written, unsigned sel) {
    uint32_t mask = 0;
    for (unsigned lane = 0; lane < 4; lane++)
        if (sel & (1u << lane))
            mask |= 0xFFu << (8 * lane);
    return (current & ~mask) | (written & mask);
}

void load_firmware(const std::string &path) {
    RamImage ram{RAM_BASE, std::vector<uint32_t>(RAM_BYTES / 4, 0)};
    const LoadedElf elf = load_elf32(path, ram);
    if (elf.entry != RAM_BASE) {
        char message[160];
        std::snprintf(message, sizeof message,
                      "%s: entry point 0x%08x, but the CPU starts at the reset vector "
                      "0x%08x: link _start there", path.c_str(), elf.entry, RAM_BASE);
        throw std::runtime_error(message);
    }
    const svScope scope = svGetScopeFromName(RAM_SCOPE);
    if (!scope)
        throw std::runtime_error(std::string("no DPI scope ") + RAM_SCOPE);
    svSetScope(scope);
    for (size_t index = 0; index < ram.words.size(); index++)
        soc_ram_write_word(int(index), int(ram.words[index]));
}

class Simulation {
public:
    explicit Simulation(const Options &options)
        : options_(options), console_(options.console),
          irq_(options.irq_start, options.irq_period, options.irq_width, options.irq_jitter,
               options.irq_count),
          decoder_(options.uart_divisor), encoder_(options.uart_divisor) {
        if (!options.truth.empty())
            truth_ = std::make_unique<TruthLog>(options.truth);
        else
            truth_ = std::make_unique<TruthLog>();
        log_cpu_ = truth_->enabled();
        context_->debug(0);
        context_->randReset(0);  // every register starts at 0 before reset: reproducible
        top_ = std::make_unique<Vlatscope_sim_top>(context_.get());
        if (options.pty) {
            pty_ = std::make_unique<PtyBridge>();
            std::printf("PTY %s\n", pty_->path().c_str());
            std::fflush(stdout);
        }
#if LATSCOPE_TRACE
        if (!options.trace.empty()) {
            context_->traceEverOn(true);
            trace_ = std::make_unique<TraceFile>();
            top_->trace(trace_.get(), 99);
            trace_->open(options.trace.c_str());
        }
#endif
    }

    ~Simulation() {
#if LATSCOPE_TRACE
        if (trace_)
            trace_->close();
#endif
        top_->final();
    }

    int run();

private:
    void reset();
    void service();                  // every pty_poll cycles: pty, signals
    void sample();                   // the outputs of cycle `cycle_`
    void sample_cpu();               // its interrupt entry and enable state (--truth only)
    void on_store(uint32_t address, uint32_t data, unsigned sel);
    void release(uint64_t cycle);    // the CPU leaves reset in `cycle` (> cycle_)
    bool paused();                   // waiting for the host after SIM_EXIT
    bool waiting_for_host();         // before START with --release-on-start
    void receive();                  // host bytes from the pty into the UART encoder
    void dump(uint64_t half_cycles);

    const Options &options_;
    std::unique_ptr<VerilatedContext> context_ = std::make_unique<VerilatedContext>();
    std::unique_ptr<Vlatscope_sim_top> top_;
    std::unique_ptr<TruthLog> truth_;
    std::unique_ptr<PtyBridge> pty_;
#if LATSCOPE_TRACE
    std::unique_ptr<TraceFile> trace_;
#endif
    Console console_;
    IrqDriver irq_;
    UartDecoder decoder_;
    UartEncoder encoder_;

    uint64_t cycle_ = 0;
    unsigned lines_ = 0;             // irq, pending, meip, mtip, busload, loadpending
    uint32_t gpio_ = 0;              // GPIO_OUT as the stores so far made it
    bool exited_ = false;
    uint32_t exit_code_ = 0;
    uint64_t exit_cycle_ = 0;
    bool cpu_held_ = false;
    bool capturing_ = false;         // the appliance's capture runs (as sampled last cycle)
    bool log_cpu_ = false;           // --truth: probe and log the CPU's interrupt state
    int irq_enabled_ = -1;           // the CPU's cpu_irq_enabled last cycle (-1: cycle 0 next)
    std::unordered_map<uint32_t, uint64_t> takeable_;  // --truth: times each pc was takeable
    uint64_t release_at_ = UINT64_MAX;   // --release-on-start: the CPU's first cycle
    bool pause_done_ = false;
    uint64_t link_quiet_ = 0;        // cycles since the UART link (either way) was busy
    uint64_t unmapped_stores_ = 0, pin_mismatches_ = 0;
};

void Simulation::dump(uint64_t half_cycles) {
#if LATSCOPE_TRACE
    if (trace_ && cycle_ >= options_.trace_start)
        trace_->dump(half_cycles * 5);  // 10 time units per cycle
#else
    (void)half_cycles;
#endif
}

void Simulation::reset() {
    top_->rst = 1;
    top_->cpu_hold = 0;
    top_->cpu_probe = log_cpu_;     // set through reset: the probe is valid from cycle 0
    top_->irq_drive = 0;
    top_->uart_rx = 1;
    options_.wiring.route_words(&top_->wire_route[0]);
    top_->wire_short_and = options_.wiring.short_and;
    top_->wire_short_or = options_.wiring.short_or;
    top_->wire_stuck_low = options_.wiring.stuck_low;
    top_->wire_stuck_high = options_.wiring.stuck_high;
    top_->jumper = options_.jumper;
    top_->clk = 0;
    top_->eval();
    for (unsigned n = 0; n < RESET_CYCLES; n++) {
        top_->clk = 1;
        top_->eval();
        top_->clk = 0;
        top_->eval();
    }
    top_->rst = 0;
    cpu_held_ = options_.hold_cpu;
    top_->cpu_hold = cpu_held_;
    // rtl/top.v registers rst and cpu_hold: one more edge makes the release reach the SoC,
    // so that cycle 0 is the first cycle out of reset, as before.
    top_->clk = 1;
    top_->eval();
    top_->clk = 0;
    top_->eval();
}

void Simulation::release(uint64_t cycle) {
    cpu_held_ = false;
    top_->cpu_hold = 0;
    top_->jumper = 0;   // taken off, as before starting the DUT's program on a board
    // Registered in rtl/top.v at the rising edge that ends cycle c - 1 (set before it).
    truth_->event(cycle, "cpu_run");
}

// --pause-after-exit: from SIM_EXIT + N on, the clock stands still until the host's next
// byte is in the UART encoder; the harness keeps serving the pty (and signals) meanwhile.
// The byte then enters uart_rx in this same cycle, however long the host took.
bool Simulation::paused() {
    if (pause_done_ || !exited_ || cycle_ - exit_cycle_ < options_.pause_after_exit)
        return false;
    if (!encoder_.queued() && !stop_signal) {
        struct timespec nap = {0, 200000};   // 0.2 ms
        nanosleep(&nap, nullptr);
        service();
        if (!encoder_.queued() && !stop_signal)
            return true;
    }
    pause_done_ = true;
    return false;
}

// --release-on-start, until the capture starts (or SIGUSR1 lets the CPU run): the clock
// runs only while the link is busy. Once neither a host byte nor a reply byte has moved for
// LINK_QUIET_CYCLES (the appliance has answered), it stands still until the host's next
// command, and host bytes are taken only then: each command before START, START included,
// enters uart_rx at a fixed cycle however long the host took. So the IRQ generator's state
// at START (a pulse of the settings loaded before it may be under way) is the same in
// every run, and with it the whole capture.
bool Simulation::waiting_for_host() {
    if (!options_.release_on_start || !pty_ || !cpu_held_ || capturing_ ||
        release_at_ != UINT64_MAX)
        return false;
    if (encoder_.queued() || link_quiet_ < LINK_QUIET_CYCLES)
        return false;
    struct timespec nap = {0, 200000};   // 0.2 ms
    nanosleep(&nap, nullptr);
    service();
    receive();
    return !encoder_.queued() && !stop_signal && cpu_held_;
}

void Simulation::receive() {
    if (encoder_.queued() < 64) {
        uint8_t buffer[256];
        const size_t count = pty_->receive(buffer, sizeof buffer);
        for (size_t n = 0; n < count; n++)
            encoder_.push(buffer[n]);
    }
}

void Simulation::service() {
    // With --release-on-start a started capture has fixed the release: the signal, which a
    // host sends after START's reply, must not move it.
    if (cpu_held_ && release_cpu && release_at_ == UINT64_MAX)
        release(cycle_ + 1);
    if (!pty_)
        return;
    pty_->flush();
    // Before the capture starts, waiting_for_host() alone takes host bytes.
    const bool before_start = options_.release_on_start && cpu_held_ && !capturing_ &&
                              release_at_ == UINT64_MAX;
    if (!before_start)
        receive();
}

void Simulation::on_store(uint32_t address, uint32_t data, unsigned sel) {
    if (address - RAM_BASE < RAM_BYTES)
        return;
    if (address - TRACE_BASE < TRACE_BYTES) {
        truth_->trace(cycle_, address, data, sel);
        return;
    }
    switch (address) {
    case GPIO_OUT:
        gpio_ = merge_bytes(gpio_, data, sel);
        if (top_->gpio_out != gpio_ && pin_mismatches_++ == 0)
            std::fprintf(stderr, "latscope-sim: cycle %llu: GPIO_OUT pins 0x%08x, store "
                         "made 0x%08x\n", (unsigned long long)cycle_, top_->gpio_out, gpio_);
        truth_->value(cycle_, "gpio", gpio_);
        return;
    case IRQ_PENDING:
        truth_->value(cycle_, "irqack", data);
        return;
    case SIM_PUTC:
        console_.put(char(data & 0xFF));
        return;
    case SIM_EXIT:
        truth_->value(cycle_, "exit", data);
        if (!exited_) {
            exited_ = true;
            exit_code_ = data;
            exit_cycle_ = cycle_;
            // At once, not at the end: with --linger a host that captures through the pty
            // learns here that the firmware is done and can drain the appliance.
            std::printf("EXIT code=%u cycle=%llu\n", data, (unsigned long long)cycle_);
            std::fflush(stdout);
        }
        return;
    case LOAD_IRQ_PENDING:
        truth_->value(cycle_, "loadack", data);
        return;
    case LOAD_IRQ_PERIOD:
        truth_->value(cycle_, "loadperiod", data);
        return;
    case BUS_LOAD_CYCLES:     // restarts the bus load engine
        truth_->value(cycle_, "busloadset", data);
        return;
    case MTIMECMP_LO:
    case MTIMECMP_HI:
    case BUS_LOAD_SEED:
    case BUS_LOAD_SRC:
    case BUS_LOAD_DST:
    case BUS_LOAD_WORDS:
        return;
    default:
        if (unmapped_stores_++ < 8)
            std::fprintf(stderr, "latscope-sim: cycle %llu: store of 0x%08x to unmapped "
                         "address 0x%08x (dropped)\n", (unsigned long long)cycle_, data,
                         address);
    }
}

void Simulation::sample() {
    const unsigned lines = unsigned(top_->irq) | unsigned(top_->irq_pending) << 1 |
                           unsigned(top_->cpu_meip) << 2 | unsigned(top_->timer_irq) << 3 |
                           unsigned(top_->bus_load_hold) << 4 |
                           unsigned(top_->load_irq_pending) << 5;
    if (lines != lines_) {
        static const char *const NAMES[] = {"irq", "pending", "meip", "mtip", "busload",
                                            "loadpending"};
        const unsigned changed = lines ^ lines_;
        for (unsigned bit = 0; bit < 6; bit++)
            if (changed & (1u << bit))
                truth_->line(cycle_, NAMES[bit], (lines >> bit) & 1);
        lines_ = lines;
    }
    if (bool(top_->capturing) != capturing_) {
        capturing_ = top_->capturing;
        truth_->line(cycle_, "capture", capturing_);
        if (capturing_ && cpu_held_ && options_.release_on_start && release_at_ == UINT64_MAX)
            release_at_ = cycle_ + options_.release_on_start;
    }
    if (log_cpu_)
        sample_cpu();
    if (top_->dbus_ack && top_->dbus_we && top_->dbus_cyc && top_->dbus_stb)
        on_store(uint32_t(top_->dbus_adr) << 2, top_->dbus_dat_w, top_->dbus_sel);
    if (pty_) {
        uint8_t byte;
        if (decoder_.step(top_->uart_tx, byte))
            pty_->send(byte);
        const bool busy = !top_->uart_tx || decoder_.busy() || encoder_.queued();
        link_quiet_ = busy ? 0 : link_quiet_ + 1;
    }
}

// Only with --truth: without it the probe (rtl/soc.v) is off and these outputs are not read.
void Simulation::sample_cpu() {
    if (top_->cpu_irq_taken)
        truth_->interrupt(cycle_, top_->cpu_mcause, top_->cpu_mepc);
    const int enabled = top_->cpu_irq_enabled;
    if (enabled != irq_enabled_) {
        truth_->masked(cycle_, !enabled, top_->cpu_enable_pc);
        irq_enabled_ = enabled;
    }
    if (top_->cpu_takeable)
        takeable_[top_->cpu_takeable_pc]++;
}

int Simulation::run() {
    load_firmware(options_.firmware);
    reset();
    std::signal(SIGINT, on_stop);
    std::signal(SIGTERM, on_stop);
    std::signal(SIGUSR1, on_release);

    const auto started = std::chrono::steady_clock::now();
    const double cpu_started = cpu_seconds();
    const bool uart = bool(pty_);
    const uint64_t max_cycles = options_.max_cycles;
    unsigned until_service = 0;
    const char *end = "timeout";
    int status = STATUS_TIMEOUT;
    for (;;) {
        if (paused() || waiting_for_host())
            continue;
        if (until_service-- == 0) {
            until_service = options_.pty_poll - 1;
            service();
            if (stop_signal) {
                end = "signal";
                status = 128 + stop_signal;
                break;
            }
        }
        if (options_.irq_period)
            top_->irq_drive = irq_.level(cycle_);
        if (uart)
            top_->uart_rx = encoder_.step();
        top_->clk = 0;
        top_->eval();
        dump(2 * (cycle_ + RESET_CYCLES) + 1);
        sample();
        if (cpu_held_ && cycle_ + 1 == release_at_)
            release(release_at_);    // before the rising edge that registers cpu_hold
        if (exited_ && cycle_ - exit_cycle_ >= options_.linger) {
            end = "exit";
            status = int(exit_code_ & 0xFF);
            cycle_++;
            break;
        }
        top_->clk = 1;
        top_->eval();
        cycle_++;
        dump(2 * (cycle_ + RESET_CYCLES));
        if (max_cycles && cycle_ >= max_cycles)
            break;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double cpu = cpu_seconds() - cpu_started;
    if (pty_) {
        // Last chance for the host to get what the appliance sent (non-blocking as ever).
        pty_->flush();
    }
    truth_->takeable(cycle_, takeable_);
    truth_->close();
    console_.flush();
    std::printf("SIM end=%s code=%d cycles=%llu seconds=%.3f cycles_per_s=%.0f cpu_seconds=%.3f "
                "cycles_per_cpu_s=%.0f\n", end,
                std::strcmp(end, "exit") == 0 ? int(exit_code_) : status,
                (unsigned long long)cycle_, seconds, seconds > 0 ? double(cycle_) / seconds : 0.0,
                cpu, cpu > 0 ? double(cycle_) / cpu : 0.0);
    if (pty_)
        std::printf("UART tx_bytes=%llu rx_bytes=%llu framing_errors=%llu dropped=%llu "
                    "backlog=%zu\n", (unsigned long long)pty_->bytes_sent,
                    (unsigned long long)pty_->bytes_received,
                    (unsigned long long)decoder_.framing_errors,
                    (unsigned long long)pty_->bytes_dropped, pty_->backlog());
    if (unmapped_stores_ || pin_mismatches_)
        std::printf("WARN unmapped_stores=%llu pin_mismatches=%llu\n",
                    (unsigned long long)unmapped_stores_, (unsigned long long)pin_mismatches_);
    std::fflush(stdout);
    return pin_mismatches_ ? STATUS_ERROR : status;
}

}  // namespace

int main(int argc, char **argv) {
    // A simulation serves the process that started it (a host behind the pty, a test): it
    // ends with it, even when that process is killed, instead of lingering forever.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    try {
        const Options options = parse_options(argc, argv);
        Simulation simulation(options);
        return simulation.run();
    } catch (const std::exception &error) {
        std::fprintf(stderr, "latscope-sim: %s\n", error.what());
        return STATUS_ERROR;
    }
}
