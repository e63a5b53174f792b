// Xtensa lx106 (the ESP8266's core: call0 ABI, no register windows, 16 interrupts, CCOUNT and
// one CCOMPARE timer), as QEMU's `-M sim -cpu lx106` models it: no peripherals, the host's
// console through semihosting (the simcall instruction: QEMU's -semihosting, its console the
// board's -serial), the memory of the lx106's configuration (linker.ld).
//
// The console as this board's UART: QEMU's own standard input and output (run with `-serial
// none`: semihosting then reads and writes the host's file descriptors 0 and 1 directly; with a
// serial chardev as its console QEMU 7.2 keeps a 16-byte buffer that its I/O thread fills while
// the CPU's thread empties it, unlocked: under load bytes came twice, "ping" as "pinng"). Writes
// go to the host at once (simcall write on fd 1); nothing interrupts when bytes arrive, so the
// timer interrupt polls (simcall select_one on fd 0 without waiting, then read what the ring
// holds of what is there). It fires every
// millisecond while nothing comes, and every kPollUs microseconds for kFlowMs after a byte came,
// so a request of a few hundred bytes arrives in a fraction of a millisecond instead of one
// 16-byte piece a tick. Between interrupts the loop sleeps in waiti (emcp::board::idle()): QEMU sleeps,
// the host's processor is free. When the ring has no room the poll leaves the bytes with QEMU,
// which then takes no more from the host (nothing lost: board/rx.h), and rx_release() asks for a
// poll at once through the software interrupt.
//
// The clock: CCOUNT counts EMCP_LX106_CCOUNT_HZ (QEMU: 40 MHz, from its virtual clock, which
// follows the host's without -icount; an ESP8266 runs at 80 or 160 MHz), the millisecond count
// (common/startup.cpp's g_board_ms) advanced from it by every interrupt, none lost.
#include <stdint.h>

#include "board/arch.h"
#include "board/board.h"
#include "board/rx.h"

extern "C" volatile uint64_t g_board_ms;  // boards/common/startup.cpp

#ifndef EMCP_LX106_CCOUNT_HZ
#error "EMCP_LX106_CCOUNT_HZ: CCOUNT's rate (board.cmake)"
#endif

namespace {

constexpr uint32_t kCyclesPerMs = EMCP_LX106_CCOUNT_HZ / 1000;
static_assert(kCyclesPerMs >= 1000, "CCOUNT runs at 1 MHz or faster");
constexpr uint32_t kPollUs = 20, kFlowMs = 2;
constexpr uint32_t kPollCycles = kCyclesPerMs / 1000 * kPollUs;
constexpr uint32_t kTimer0 = 1u << 6;  // CCOMPARE0's interrupt (level 1)
constexpr uint32_t kSoft = 1u << 7;    // the software interrupt (level 1): a poll now

// QEMU's semihosting (the Tensilica ISS's simcall interface): a2 the call, a3 to a5 its
// arguments; a2 the result, a3 errno.
enum : int32_t { kSysExit = 1, kSysRead = 3, kSysWrite = 4, kSysSelectOne = 29 };
constexpr uintptr_t kSelectRead = 1;
int32_t simcall(int32_t call, int32_t fd, uintptr_t arg, uintptr_t arg2) {
  register int32_t a2 __asm__("a2") = call;
  register int32_t a3 __asm__("a3") = fd;
  register uintptr_t a4 __asm__("a4") = arg;
  register uintptr_t a5 __asm__("a5") = arg2;
  __asm__ volatile("simcall" : "+a"(a2), "+a"(a3) : "a"(a4), "a"(a5) : "memory");
  return a2;
}

uint32_t ccount() {
  uint32_t c;
  __asm__ volatile("rsr %0, ccount" : "=a"(c));
  return c;
}

uint32_t g_ms_base = 0;   // CCOUNT at the start of the millisecond g_board_ms counts
uint32_t g_last_rx = 0;   // CCOUNT when the last byte came
bool g_flowing = false;   // bytes came within kFlowMs
bool g_holding = false;   // the ring was full: the bytes wait in QEMU until rx_release()

// Interrupts masked (the handler; init()).
void advance_clock() {
  const uint32_t d = ccount() - g_ms_base;
  if (d >= kCyclesPerMs) {
    const uint32_t n = d / kCyclesPerMs;
    g_ms_base += n * kCyclesPerMs;
    g_board_ms = g_board_ms + n;
  }
}

// The console's bytes into the ring while it has room (board/rx.h). True when any came. At the
// end of the host's input (read gives 0) nothing more comes: the poll goes on, finding none.
bool poll_console() {
  if (g_holding) return false;
  bool got = false;
  for (;;) {
    size_t space = emcp::board::rx_space();
    if (space == 0) {
      g_holding = true;  // the rest waits in the host's pipe, which holds the host back
      emcp::board::rx_hold();
      return got;
    }
    const uint32_t no_wait[2] = {0, 0};  // struct timeval: 0 s, 0 us
    if (simcall(kSysSelectOne, 0, kSelectRead, reinterpret_cast<uintptr_t>(no_wait)) != 1) return got;
    uint8_t buf[64];
    if (space > sizeof buf) space = sizeof buf;
    const int32_t n = simcall(kSysRead, 0, reinterpret_cast<uintptr_t>(buf), space);
    if (n <= 0) return got;
    for (int32_t i = 0; i < n; ++i) emcp::board::rx_byte(buf[i]);
    got = true;
  }
}

// The next timer interrupt: the next millisecond, or kPollCycles on while bytes flow. A compare
// CCOUNT has passed before it was written would fire only when CCOUNT comes round again (107 s
// at 40 MHz): when the millisecond is already over (the handler ran late, its host thread
// preempted) or CCOUNT passed the compare while it was written, the software interrupt runs the
// handler again at once instead.
void schedule() {
  const uint32_t now = ccount();
  const uint32_t into = now - g_ms_base;
  uint32_t step = into < kCyclesPerMs ? kCyclesPerMs - into : 0;
  if (g_flowing && step > kPollCycles) step = kPollCycles;
  if (step != 0) {
    __asm__ volatile("wsr %0, ccompare0\n\tesync" ::"a"(now + step));
    if (ccount() - now < step) return;
  }
  __asm__ volatile("wsr %0, intset" ::"a"(kSoft));
}

}  // namespace

// Every level-1 interrupt (common/arch/xtensa.cpp), interrupts masked: the timer's and the
// software one (rx_release(), a compare written too late) do the same: the clock, the console,
// the next compare (which also clears the timer's request).
extern "C" __attribute__((used)) void Level1_Handler() {
  __asm__ volatile("wsr %0, intclear" ::"a"(kSoft));
  advance_clock();
  if (poll_console()) g_last_rx = ccount();
  g_flowing = ccount() - g_last_rx < kFlowMs * kCyclesPerMs;
  schedule();
}

// A fault (common/arch/xtensa.cpp: any exception but a level-1 interrupt) on the host's standard
// error, then QEMU's exit with status 70 (EX_SOFTWARE): a test sees the cause and the
// instruction at once (EXCCAUSE 0x09: an unaligned load or store, EXCVADDR its address; 0x03,
// 0x1c or 0x1d: a load or store the memory map refuses) instead of a board that stopped answering.
extern "C" __attribute__((noreturn, used)) void Fault_Handler(uint32_t cause) {
  uint32_t epc, vaddr;
  __asm__ volatile("rsr %0, epc1\n\trsr %1, excvaddr" : "=a"(epc), "=a"(vaddr));
  char line[] = "lx106-sim: fault: EXCCAUSE 0x00 at EPC1 0x00000000, EXCVADDR 0x00000000\n";
  const auto put_hex = [&line](size_t at, uint32_t v, int digits) {
    for (int i = digits - 1; i >= 0; --i, v >>= 4) line[at + static_cast<size_t>(i)] = "0123456789abcdef"[v & 0xF];
  };
  put_hex(29, cause, 2);
  put_hex(42, epc, 8);
  put_hex(63, vaddr, 8);
  (void)simcall(kSysWrite, 2, reinterpret_cast<uintptr_t>(line), sizeof line - 1);
  (void)simcall(kSysExit, 70, 0, 0);
  for (;;) __asm__ volatile("waiti 15");
}

namespace emcp {
namespace board {

const char* name() { return "lx106-sim"; }

void init() {
  g_ms_base = ccount();
  g_last_rx = g_ms_base - kFlowMs * kCyclesPerMs;
  schedule();
  __asm__ volatile("wsr %0, intenable\n\trsync" ::"a"(kTimer0 | kSoft));
}

// From the loop: the ring has room again; the handler polls at once.
void rx_release() {
  const uint32_t was = arch::interrupts_save_off();
  g_holding = false;
  __asm__ volatile("wsr %0, intset" ::"a"(kSoft));
  arch::interrupts_restore(was);
}

void uart_write(const char* data, size_t n) {
  while (n != 0) {
    const int32_t done = simcall(kSysWrite, 1, reinterpret_cast<uintptr_t>(data), n);
    if (done <= 0) continue;  // QEMU's console takes everything; nothing else can be done
    data += done;
    n -= static_cast<size_t>(done);
  }
}

}  // namespace board
}  // namespace emcp
