/* bench/target/insn_plugin.c - a QEMU TCG plugin that counts the guest instructions executed
 * between two marker functions of a bench firmware (bench/target/calls.cpp): each time the
 * first instruction at `begin` runs, a window opens; each time the first instruction at `end`
 * runs, the instructions since the window opened (the marker calls themselves included, the
 * same few every time) are written as one line `insns N` to the file `out`, flushed at once.
 *
 *   qemu-system-arm ... -plugin libemcp_insn_plugin.so,begin=0x1234,end=0x1240,out=FILE
 *                                   [,profile=FILE,skip=K,last=L]
 *
 * With profile=FILE it also counts, per translated block, the instructions of the block that
 * ran inside windows (the first K windows left out: a session's opening requests; with last=L,
 * the windows from the L-th on too: one case of a firmware that runs several), and writes at
 * QEMU's end one line `tb ADDRESS INSTRUCTIONS` per block that has any (guest_calls.py --profile
 * adds them up by function). Exact as the total is: an inline add per instruction into its
 * block's counter, the windows' share taken as differences at each window's start and end (a
 * block counted whole as it starts would count its tail twice when -icount ends it early at a
 * device register and runs the rest as another block).
 *
 * Addresses are hexadecimal, as `nm` prints them (a Thumb function's low bit is ignored). The
 * count is exact: an inline add on every instruction (not per block: a block left early, by an
 * exception, would count instructions that did not run). The firmware masks interrupts inside
 * the window, so what is counted is the request's own work, the same on every run.
 *
 * Debian ships QEMU's plugins API without its header (qemu-plugin.h): the declarations below
 * are the few functions and types of API version 1 (QEMU 7.2's) this plugin uses, written
 * from the API's documentation; qemu_plugin_install() refuses a QEMU whose API range does not
 * include version 1. Host code: the C library is fine here. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- QEMU's plugin API, version 1 (the parts used) -------------------------------------- */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
  const char* target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb*));
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn, void (*cb)(unsigned int, void*),
                                            enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn* insn, enum qemu_plugin_op op, void* ptr,
                                                uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void*), void* userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);

enum { kApiVersion = 1 };
EXPORT int qemu_plugin_version = kApiVersion;

/* ---- The count ---------------------------------------------------------------------------- */
static uint64_t g_insns;      /* every guest instruction executed (one vCPU: the boards have one) */
static uint64_t g_opened;     /* g_insns when the window opened */
static bool g_open;
static uint64_t g_begin, g_end;
static FILE* g_out;
static uint64_t g_windows, g_unmatched;

/* The profile: one record per translation of a block (a block translated again gets another;
 * the script adds them up by address), chained for the end. */
struct block {
  uint64_t vaddr;
  uint64_t all;      /* its instructions executed, ever (inline adds) */
  uint64_t at_open;  /* `all` when the current window opened */
  uint64_t counted;  /* its instructions inside the counted windows */
  struct block* next;
};
static struct block* g_blocks;
static FILE* g_profile;
static uint64_t g_skip;
static uint64_t g_last = UINT64_MAX;

/* At a window's start and end (a counted one): every block's share of it. */
static void profile_open(void) {
  for (struct block* b = g_blocks; b != NULL; b = b->next) b->at_open = b->all;
}
static void profile_close(void) {
  for (struct block* b = g_blocks; b != NULL; b = b->next) b->counted += b->all - b->at_open;
}

static void on_begin(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  (void)userdata;
  if (g_open) ++g_unmatched; /* a begin without its end: the window starts again */
  g_open = true;
  g_opened = g_insns;
  if (g_profile != NULL && g_windows >= g_skip && g_windows < g_last) profile_open();
}

static void on_end(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  (void)userdata;
  if (!g_open) {
    ++g_unmatched;
    return;
  }
  g_open = false;
  if (g_profile != NULL && g_windows >= g_skip && g_windows < g_last) profile_close();
  ++g_windows;
  fprintf(g_out, "insns %" PRIu64 "\n", g_insns - g_opened);
  fflush(g_out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  struct block* b = NULL;
  if (g_profile != NULL && n > 0 && (b = calloc(1, sizeof *b)) != NULL) {
    b->vaddr = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
    b->next = g_blocks;
    g_blocks = b;
  }
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &g_insns, 1);
    if (b != NULL) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &b->all, 1);
    const uint64_t at = qemu_plugin_insn_vaddr(insn);
    if (at == g_begin) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (at == g_end) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
  }
}

static void on_exit_(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  fprintf(g_out, "total %" PRIu64 " windows %" PRIu64 " unmatched %" PRIu64 "\n", g_insns, g_windows, g_unmatched);
  fclose(g_out);
  if (g_profile != NULL) {
    for (const struct block* b = g_blocks; b != NULL; b = b->next)
      if (b->counted != 0) fprintf(g_profile, "tb %" PRIx64 " %" PRIu64 "\n", b->vaddr, b->counted);
    fclose(g_profile);
  }
}

static bool parse_address(const char* text, uint64_t* out) {
  char* end = NULL;
  const unsigned long long v = strtoull(text, &end, 16);
  if (end == text || *end != '\0') return false;
  *out = (uint64_t)v & ~(uint64_t)1; /* Thumb: the function's first instruction is at the even address */
  return true;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc, char** argv) {
  if (info->version.min > kApiVersion || info->version.cur < kApiVersion) {
    fprintf(stderr, "emcp insn plugin: QEMU's plugin API is versions %d..%d, this plugin speaks %d\n",
            info->version.min, info->version.cur, kApiVersion);
    return 1;
  }
  const char* out = NULL;
  const char* profile = NULL;
  bool have_begin = false, have_end = false;
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "begin=", 6) == 0) have_begin = parse_address(a + 6, &g_begin);
    else if (strncmp(a, "end=", 4) == 0) have_end = parse_address(a + 4, &g_end);
    else if (strncmp(a, "out=", 4) == 0) out = a + 4;
    else if (strncmp(a, "profile=", 8) == 0) profile = a + 8;
    else if (strncmp(a, "skip=", 5) == 0) g_skip = strtoull(a + 5, NULL, 10);
    else if (strncmp(a, "last=", 5) == 0) g_last = strtoull(a + 5, NULL, 10);
    else {
      fprintf(stderr, "emcp insn plugin: unknown argument %s (begin=HEX,end=HEX,out=FILE[,profile=FILE,skip=K,last=L])\n", a);
      return 1;
    }
  }
  if (!have_begin || !have_end || out == NULL) {
    fprintf(stderr, "emcp insn plugin: needs begin=HEX, end=HEX and out=FILE\n");
    return 1;
  }
  g_out = fopen(out, "w");
  if (g_out == NULL) {
    fprintf(stderr, "emcp insn plugin: cannot write %s\n", out);
    return 1;
  }
  if (profile != NULL && (g_profile = fopen(profile, "w")) == NULL) {
    fprintf(stderr, "emcp insn plugin: cannot write %s\n", profile);
    return 1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
  return 0;
}
