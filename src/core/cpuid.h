/* Internal: x86 cpuid leaves, either read from the cpuid instruction or recorded in a text file
 * (TB_CPUID_FILE, see docs/cpu.md), and their decoding into vendor, brand string, family/model/
 * stepping and tb_feature bits. Parsing and decoding are pure functions, so tests run them on
 * recorded dumps of CPUs this machine does not have. */
#ifndef TB_CORE_CPUID_H
#define TB_CORE_CPUID_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TB_CPUID_MAX_LEAVES 256
#define TB_CPUID_FILE_MAX_BYTES (256u * 1024u)

enum { TB_EAX = 0, TB_EBX, TB_ECX, TB_EDX };

typedef struct tb_cpuid_leaf {
  uint32_t leaf, subleaf;
  uint32_t regs[4]; /* eax, ebx, ecx, edx */
} tb_cpuid_leaf;

/* What a recorded dump says about the kernel's answer to the AMX tile-data permission request. */
typedef enum tb_amx_record {
  TB_AMX_RECORD_NONE = 0, /* no "amx_permission" line */
  TB_AMX_RECORD_GRANTED,
  TB_AMX_RECORD_DENIED
} tb_amx_record;

typedef struct tb_cpuid_dump {
  tb_cpuid_leaf leaves[TB_CPUID_MAX_LEAVES];
  size_t count;
  bool has_xcr0;
  uint64_t xcr0;
  tb_amx_record amx;
  char amx_errno[32]; /* errno name after "denied" ("EPERM"); "" when none was recorded */
} tb_cpuid_dump;

/* Why a recorded dump was rejected: the 1-based line (the last line for problems found at the end
 * of the file; 0 when the file could not be read at all) and what was wrong. */
typedef struct tb_cpuid_error {
  int line;
  char message[240];
} tb_cpuid_error;

/* Parse the text of a recorded dump: lines "leaf subleaf eax ebx ecx edx" in hex (an optional 0x
 * prefix), "xcr0 <hex>", "amx_permission granted" or "amx_permission denied [ERRNO_NAME]"; blank
 * lines and text after '#' are ignored. Also checks that the leaves the decoder needs are there
 * (leaf 0, leaf 1, leaf 7 when leaf 0 says it exists, ...). false with *err filled on any problem. */
bool tb_cpuid_parse(const char *text, tb_cpuid_dump *out, tb_cpuid_error *err);
/* Read and parse a dump file (at most TB_CPUID_FILE_MAX_BYTES). */
bool tb_cpuid_load_file(const char *path, tb_cpuid_dump *out, tb_cpuid_error *err);
/* Fill the dump from the cpuid and xgetbv instructions; false on a CPU without them (not x86). */
bool tb_cpuid_read_host(tb_cpuid_dump *out);

/* The registers of (leaf, subleaf); false (and zeros) when the dump does not have it. */
bool tb_cpuid_get(const tb_cpuid_dump *dump, uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

typedef struct tb_cpu_ident {
  char vendor_id[13];      /* "GenuineIntel", "AuthenticAMD" */
  char brand[49];          /* leaves 0x80000002-4, spaces trimmed; "" when absent */
  unsigned family, model, stepping; /* display values (extended fields folded in) */
  bool osxsave;            /* the OS enabled XSAVE, so XCR0 means something */
  bool has_xcr0;
  uint64_t xcr0;
  uint64_t cpuid_features; /* what cpuid says the CPU has */
  uint64_t features;       /* of those, what the OS enabled the register state for (XCR0) */
} tb_cpu_ident;

/* Decode vendor, brand, family/model/stepping and features (pure). */
void tb_cpuid_decode(const tb_cpuid_dump *dump, tb_cpu_ident *out);

/* "GenuineIntel" -> "Intel", "AuthenticAMD" -> "AMD", anything else unchanged. */
const char *tb_cpu_vendor_name(const char *vendor_id);

#endif
