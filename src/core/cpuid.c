/* x86 cpuid: reading the instruction, parsing recorded dumps (TB_CPUID_FILE), and decoding the
 * leaves into identity and tb_feature bits. Bit positions are from the Intel SDM vol. 2A (the CPUID
 * instruction's feature-flag tables for leaves 1 and 7) and vol. 1 ch. 13 (XSAVE state components),
 * and the AMD APM vol. 3 appendix E. */
#include "core/cpuid.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tensorbridge/device.h>
#include "core/regular_file.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Leaf 1 ECX. */
#define L1C_FMA (1u << 12)
#define L1C_SSE4_2 (1u << 20)
#define L1C_OSXSAVE (1u << 27)
#define L1C_AVX (1u << 28)
#define L1C_F16C (1u << 29)
/* Leaf 7 subleaf 0. */
#define L7B_AVX2 (1u << 5)
#define L7B_AVX512F (1u << 16)
#define L7B_AVX512BW (1u << 30)
#define L7B_AVX512VL (1u << 31)
#define L7C_AVX512VNNI (1u << 11)
#define L7D_AMX_BF16 (1u << 22)
#define L7D_AVX512FP16 (1u << 23)
#define L7D_AMX_TILE (1u << 24)
#define L7D_AMX_INT8 (1u << 25)
/* Leaf 7 subleaf 1. */
#define L71A_AVX512BF16 (1u << 5)
/* XCR0 state components: SSE (1), AVX (2), opmask (5), ZMM_Hi256 (6), Hi16_ZMM (7), XTILECFG (17),
 * XTILEDATA (18). */
#define XCR0_AVX_STATE 0x6ull
#define XCR0_AVX512_STATE 0xe0ull
#define XCR0_AMX_STATE (3ull << 17)

#define FEATURE(f) TB_FEATURE_BIT(TB_FEATURE_##f)
#define AVX512_FEATURES \
  (FEATURE(AVX512F) | FEATURE(AVX512BW) | FEATURE(AVX512VL) | FEATURE(AVX512VNNI) | FEATURE(AVX512BF16) | FEATURE(AVX512FP16))
#define AMX_FEATURES (FEATURE(AMX_TILE) | FEATURE(AMX_BF16) | FEATURE(AMX_INT8))

bool tb_cpuid_get(const tb_cpuid_dump *dump, uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
  for (size_t i = 0; i < dump->count; i++) {
    const tb_cpuid_leaf *l = &dump->leaves[i];
    if (l->leaf == leaf && l->subleaf == subleaf) {
      memcpy(regs, l->regs, sizeof l->regs);
      return true;
    }
  }
  memset(regs, 0, 4 * sizeof regs[0]);
  return false;
}

static bool has_leaf(const tb_cpuid_dump *dump, uint32_t leaf, uint32_t subleaf) {
  uint32_t regs[4];
  return tb_cpuid_get(dump, leaf, subleaf, regs);
}

static bool set_error(tb_cpuid_error *err, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool set_error(tb_cpuid_error *err, int line, const char *fmt, ...) {
  err->line = line;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return false;
}

/* A token made safe to quote in a message: printable ASCII only, at most 24 characters. */
static const char *quoted(const char *token, char *buf, size_t cap) {
  size_t n = 0;
  for (; *token && n + 4 < cap && n < 24; token++) buf[n++] = isprint((unsigned char)*token) ? *token : '?';
  if (*token && n + 4 < cap) buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
  buf[n] = '\0';
  return buf;
}

/* A hex number of 1..max_digits digits, with an optional 0x prefix, and nothing else. */
static bool parse_hex(const char *s, unsigned max_digits, uint64_t *out) {
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
  size_t n = strlen(s);
  if (n == 0 || n > max_digits) return false;
  uint64_t v = 0;
  for (; *s; s++) {
    int c = tolower((unsigned char)*s);
    if (c >= '0' && c <= '9') v = v * 16 + (uint64_t)(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + (uint64_t)(c - 'a' + 10);
    else return false;
  }
  *out = v;
  return true;
}

#define MAX_TOKENS 8

/* Split a line (already cut at '#') into whitespace-separated tokens, in place. */
static size_t split(char *line, char *tokens[MAX_TOKENS + 1]) {
  size_t n = 0;
  char *save = NULL;
  for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
    if (n == MAX_TOKENS + 1) break;
    tokens[n++] = t;
  }
  return n;
}

static bool parse_amx_line(char **tok, size_t n, int line_no, tb_cpuid_dump *out, tb_cpuid_error *err) {
  char q[32];
  if (out->amx != TB_AMX_RECORD_NONE) return set_error(err, line_no, "a second amx_permission line");
  if (n == 2 && strcmp(tok[1], "granted") == 0) {
    out->amx = TB_AMX_RECORD_GRANTED;
    return true;
  }
  if ((n == 2 || n == 3) && strcmp(tok[1], "denied") == 0) {
    out->amx = TB_AMX_RECORD_DENIED;
    if (n == 3) {
      const char *e = tok[2];
      bool name_ok = e[0] == 'E' && strlen(e) < sizeof out->amx_errno;
      for (const char *c = e; name_ok && *c; c++) name_ok = isupper((unsigned char)*c) || isdigit((unsigned char)*c);
      if (!name_ok) return set_error(err, line_no, "'%s' is not an errno name such as EPERM", quoted(e, q, sizeof q));
      strcpy(out->amx_errno, e);
    }
    return true;
  }
  return set_error(err, line_no, "amx_permission must be followed by 'granted' or 'denied [ERRNO_NAME]'");
}

static bool parse_line(char *line, int line_no, tb_cpuid_dump *out, tb_cpuid_error *err) {
  char *hash = strchr(line, '#');
  if (hash) *hash = '\0';
  char *tok[MAX_TOKENS + 1];
  size_t n = split(line, tok);
  char q[32];
  if (n == 0) return true;
  if (strcmp(tok[0], "xcr0") == 0) {
    if (out->has_xcr0) return set_error(err, line_no, "a second xcr0 line");
    if (n != 2) return set_error(err, line_no, "xcr0 takes one hex value, found %zu", n - 1);
    if (!parse_hex(tok[1], 16, &out->xcr0))
      return set_error(err, line_no, "xcr0 value '%s' is not a hex number of at most 16 digits", quoted(tok[1], q, sizeof q));
    out->has_xcr0 = true;
    return true;
  }
  if (strcmp(tok[0], "amx_permission") == 0) return parse_amx_line(tok, n, line_no, out, err);
  uint64_t v[6];
  if (!parse_hex(tok[0], 8, &v[0]))
    return set_error(err, line_no, "'%s' is neither a leaf number nor xcr0 or amx_permission", quoted(tok[0], q, sizeof q));
  if (n != 6)
    return set_error(err, line_no, "expected 6 hex fields (leaf subleaf eax ebx ecx edx), found %zu%s", n,
                     n > MAX_TOKENS ? " or more" : "");
  static const char *const field[6] = {"leaf", "subleaf", "eax", "ebx", "ecx", "edx"};
  for (size_t i = 0; i < 6; i++)
    if (!parse_hex(tok[i], 8, &v[i]))
      return set_error(err, line_no, "%s '%s' is not a hex number of at most 8 digits", field[i], quoted(tok[i], q, sizeof q));
  if (has_leaf(out, (uint32_t)v[0], (uint32_t)v[1]))
    return set_error(err, line_no, "leaf 0x%08x subleaf %u appears twice", (unsigned)v[0], (unsigned)v[1]);
  if (out->count == TB_CPUID_MAX_LEAVES)
    return set_error(err, line_no, "more than %d leaves", TB_CPUID_MAX_LEAVES);
  tb_cpuid_leaf *l = &out->leaves[out->count++];
  l->leaf = (uint32_t)v[0];
  l->subleaf = (uint32_t)v[1];
  for (int r = 0; r < 4; r++) l->regs[r] = (uint32_t)v[2 + r];
  return true;
}

/* After the last line: the leaves the decoder relies on must be there. */
static bool check_complete(const tb_cpuid_dump *d, int last_line, tb_cpuid_error *err) {
  uint32_t l0[4], l1[4], l7[4], ext[4];
  if (!tb_cpuid_get(d, 0, 0, l0))
    return set_error(err, last_line, "end of file: leaf 0 (vendor and highest leaf) is missing");
  if (!tb_cpuid_get(d, 1, 0, l1))
    return set_error(err, last_line, "end of file: leaf 1 (family, model and feature flags) is missing");
  if (l0[TB_EAX] >= 7 && !tb_cpuid_get(d, 7, 0, l7))
    return set_error(err, last_line, "end of file: leaf 7 subleaf 0 is missing, but leaf 0 says the highest leaf is 0x%x (truncated file?)",
                     l0[TB_EAX]);
  if (l0[TB_EAX] >= 7 && l7[TB_EAX] >= 1 && !has_leaf(d, 7, 1))
    return set_error(err, last_line, "end of file: leaf 7 subleaf 1 is missing, but leaf 7 says subleaves up to %u exist (truncated file?)",
                     l7[TB_EAX]);
  if (tb_cpuid_get(d, 0x80000000u, 0, ext) && ext[TB_EAX] >= 0x80000004u && ext[TB_EAX] < 0x80000100u)
    for (uint32_t leaf = 0x80000002u; leaf <= 0x80000004u; leaf++)
      if (!has_leaf(d, leaf, 0))
        return set_error(err, last_line, "end of file: brand-string leaf 0x%08x is missing, but leaf 0x80000000 says leaves up to 0x%08x exist",
                         leaf, ext[TB_EAX]);
  if ((l1[TB_ECX] & L1C_OSXSAVE) && !d->has_xcr0)
    return set_error(err, last_line, "end of file: no 'xcr0' line, but leaf 1 says the OS enabled XSAVE (OSXSAVE)");
  return true;
}

bool tb_cpuid_parse(const char *text, tb_cpuid_dump *out, tb_cpuid_error *err) {
  memset(out, 0, sizeof *out);
  err->line = 0;
  err->message[0] = '\0';
  int line_no = 0;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[512];
    line_no++;
    if (len >= sizeof line) return set_error(err, line_no, "line longer than %zu characters", sizeof line - 1);
    memcpy(line, p, len);
    line[len] = '\0';
    if (!parse_line(line, line_no, out, err)) return false;
    p = eol ? eol + 1 : p + len;
  }
  return check_complete(out, line_no, err);
}

bool tb_cpuid_load_file(const char *path, tb_cpuid_dump *out, tb_cpuid_error *err) {
  memset(out, 0, sizeof *out);
  int fd;
  if (tb_fs_open_regular(path, "cpuid dump", &fd, NULL) != TB_OK)
    return errno ? set_error(err, 0, "cannot open it: %s", strerror(errno)) : set_error(err, 0, "%s", tb_last_error());
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return set_error(err, 0, "cannot read it: %s", strerror(errno));
  }
  char *text = malloc(TB_CPUID_FILE_MAX_BYTES + 1);
  if (!text) {
    fclose(f);
    return set_error(err, 0, "out of memory reading it");
  }
  size_t len = fread(text, 1, TB_CPUID_FILE_MAX_BYTES + 1, f);
  bool read_error = ferror(f) != 0;
  fclose(f);
  bool ok;
  if (read_error) {
    ok = set_error(err, 0, "read error");
  } else if (len > TB_CPUID_FILE_MAX_BYTES) {
    ok = set_error(err, 0, "larger than %u bytes; a cpuid dump is a few kilobytes", TB_CPUID_FILE_MAX_BYTES);
  } else if (memchr(text, '\0', len)) {
    ok = set_error(err, 0, "contains NUL bytes; it is not a text dump");
  } else {
    text[len] = '\0';
    ok = tb_cpuid_parse(text, out, err);
  }
  free(text);
  return ok;
}

#if defined(__x86_64__) || defined(__i386__)
static void host_leaf(tb_cpuid_dump *d, uint32_t leaf, uint32_t subleaf) {
  if (d->count == TB_CPUID_MAX_LEAVES) return;
  tb_cpuid_leaf *l = &d->leaves[d->count++];
  l->leaf = leaf;
  l->subleaf = subleaf;
  __cpuid_count(leaf, subleaf, l->regs[0], l->regs[1], l->regs[2], l->regs[3]);
}

bool tb_cpuid_read_host(tb_cpuid_dump *d) {
  memset(d, 0, sizeof *d);
  if (__get_cpuid_max(0, NULL) == 0) return false;
  host_leaf(d, 0, 0);
  uint32_t max = d->leaves[0].regs[TB_EAX];
  if (max >= 1) host_leaf(d, 1, 0);
  if (max >= 7) {
    host_leaf(d, 7, 0);
    if (d->leaves[d->count - 1].regs[TB_EAX] >= 1) host_leaf(d, 7, 1);
  }
  host_leaf(d, 0x80000000u, 0);
  uint32_t ext = d->leaves[d->count - 1].regs[TB_EAX];
  for (uint32_t leaf = 0x80000001u; leaf <= 0x80000004u && leaf <= ext && ext < 0x80000100u; leaf++) host_leaf(d, leaf, 0);
  uint32_t l1[4];
  if (tb_cpuid_get(d, 1, 0, l1) && (l1[TB_ECX] & L1C_OSXSAVE)) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    d->xcr0 = ((uint64_t)hi << 32) | lo;
    d->has_xcr0 = true;
  }
  return true;
}
#else
bool tb_cpuid_read_host(tb_cpuid_dump *d) {
  memset(d, 0, sizeof *d);
  return false;
}
#endif

static void copy_regs_text(char *out, const uint32_t *regs, size_t count) {
  for (size_t i = 0; i < count; i++)
    for (int b = 0; b < 4; b++) out[i * 4 + (size_t)b] = (char)((regs[i] >> (8 * b)) & 0xff);
  out[count * 4] = '\0';
}

/* Printable ASCII only, runs of spaces collapsed, no spaces at either end. */
static void tidy_brand(char *s) {
  size_t w = 0;
  for (size_t r = 0; s[r]; r++) {
    char c = isprint((unsigned char)s[r]) ? s[r] : ' ';
    if (c == ' ' && (w == 0 || s[w - 1] == ' ')) continue;
    s[w++] = c;
  }
  while (w > 0 && s[w - 1] == ' ') w--;
  s[w] = '\0';
}

static void decode_brand(const tb_cpuid_dump *d, tb_cpu_ident *out) {
  uint32_t ext[4], regs[12];
  out->brand[0] = '\0';
  if (!tb_cpuid_get(d, 0x80000000u, 0, ext) || ext[TB_EAX] < 0x80000004u || ext[TB_EAX] >= 0x80000100u) return;
  for (uint32_t i = 0; i < 3; i++) tb_cpuid_get(d, 0x80000002u + i, 0, &regs[i * 4]);
  copy_regs_text(out->brand, regs, 12);
  tidy_brand(out->brand);
}

static uint64_t decode_features(const tb_cpuid_dump *d, uint32_t max_leaf, const uint32_t l1[4]) {
  uint64_t f = 0;
  if (l1[TB_ECX] & L1C_SSE4_2) f |= FEATURE(SSE4_2);
  if (l1[TB_ECX] & L1C_FMA) f |= FEATURE(FMA);
  if (l1[TB_ECX] & L1C_F16C) f |= FEATURE(F16C);
  if (max_leaf < 7) return f;
  uint32_t l7[4], l71[4];
  tb_cpuid_get(d, 7, 0, l7);
  if (l7[TB_EBX] & L7B_AVX2) f |= FEATURE(AVX2);
  if (l7[TB_EBX] & L7B_AVX512F) f |= FEATURE(AVX512F);
  if (l7[TB_EBX] & L7B_AVX512BW) f |= FEATURE(AVX512BW);
  if (l7[TB_EBX] & L7B_AVX512VL) f |= FEATURE(AVX512VL);
  if (l7[TB_ECX] & L7C_AVX512VNNI) f |= FEATURE(AVX512VNNI);
  if (l7[TB_EDX] & L7D_AVX512FP16) f |= FEATURE(AVX512FP16);
  if (l7[TB_EDX] & L7D_AMX_TILE) f |= FEATURE(AMX_TILE);
  if (l7[TB_EDX] & L7D_AMX_BF16) f |= FEATURE(AMX_BF16);
  if (l7[TB_EDX] & L7D_AMX_INT8) f |= FEATURE(AMX_INT8);
  if (l7[TB_EAX] >= 1 && tb_cpuid_get(d, 7, 1, l71) && (l71[TB_EAX] & L71A_AVX512BF16)) f |= FEATURE(AVX512BF16);
  return f;
}

/* Drop features whose register state the OS has not enabled in XCR0. */
static uint64_t os_enabled(uint64_t f, bool osxsave, bool has_xcr0, uint64_t xcr0) {
  bool xsave = osxsave && has_xcr0;
  bool avx_state = xsave && (xcr0 & XCR0_AVX_STATE) == XCR0_AVX_STATE;
  bool avx512_state = avx_state && (xcr0 & XCR0_AVX512_STATE) == XCR0_AVX512_STATE;
  bool amx_state = xsave && (xcr0 & XCR0_AMX_STATE) == XCR0_AMX_STATE;
  if (!avx_state) f &= ~(FEATURE(AVX2) | FEATURE(FMA) | FEATURE(F16C));
  if (!avx512_state) f &= ~AVX512_FEATURES;
  if (!amx_state) f &= ~AMX_FEATURES;
  return f;
}

void tb_cpuid_decode(const tb_cpuid_dump *d, tb_cpu_ident *out) {
  memset(out, 0, sizeof *out);
  uint32_t l0[4], l1[4];
  tb_cpuid_get(d, 0, 0, l0);
  uint32_t vendor_regs[3] = {l0[TB_EBX], l0[TB_EDX], l0[TB_ECX]};
  copy_regs_text(out->vendor_id, vendor_regs, 3);
  tidy_brand(out->vendor_id);
  decode_brand(d, out);
  uint32_t max_leaf = l0[TB_EAX];
  if (max_leaf >= 1) tb_cpuid_get(d, 1, 0, l1);
  else memset(l1, 0, sizeof l1);
  unsigned base_family = (l1[TB_EAX] >> 8) & 0xf;
  unsigned base_model = (l1[TB_EAX] >> 4) & 0xf;
  out->family = base_family == 0xf ? base_family + ((l1[TB_EAX] >> 20) & 0xff) : base_family;
  out->model = (base_family == 6 || base_family == 0xf) ? base_model | (((l1[TB_EAX] >> 16) & 0xf) << 4) : base_model;
  out->stepping = l1[TB_EAX] & 0xf;
  out->osxsave = (l1[TB_ECX] & L1C_OSXSAVE) != 0;
  out->has_xcr0 = d->has_xcr0;
  out->xcr0 = d->xcr0;
  out->cpuid_features = decode_features(d, max_leaf, l1);
  out->features = os_enabled(out->cpuid_features, out->osxsave, d->has_xcr0, d->xcr0);
}

const char *tb_cpu_vendor_name(const char *vendor_id) {
  if (strcmp(vendor_id, "GenuineIntel") == 0) return "Intel";
  if (strcmp(vendor_id, "AuthenticAMD") == 0) return "AMD";
  return vendor_id;
}
