/* Shared test helpers: fixture paths and writable copies of them, environment set-up, discovery
 * shortcuts, running `tb`, and running a probe as an unprivileged user. */
#ifndef TB_TEST_UTIL_H
#define TB_TEST_UTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "core/convert_features.h"

/* Clear every TB_* variable the library reads, so each test starts from the real-machine defaults; except
 * TB_CPU_FEATURES when the test process started with it set: then each test starts from that mask. */
void tbt_clear_env(void);
/* Point TB_FSROOT at tests/fixtures/<name>. */
void tbt_use_fixture(const char *name);
/* Full path of a fake driver library, e.g. tbt_fake("fake_cuda") -> ".../fakes/fake_cuda.so". */
const char *tbt_fake(const char *name);
/* Point every vendor library variable at a path that does not exist, so only fakes or nothing load. */
void tbt_no_vendor_libs(void);

/* Discover only the backends in mask (1u << kind); asserts success. */
tb_device_list *tbt_discover(uint32_t mask);
/* The n-th device (0-based) of a backend in the list, or NULL. */
const tb_device_info *tbt_nth(const tb_device_list *list, tb_backend_kind kind, int n);
/* Number of devices of a backend in the list. */
size_t tbt_count(const tb_device_list *list, tb_backend_kind kind);
/* True when any check of the report has `what` containing `what_part` and detail containing `detail_part`. */
int tbt_report_has(const tb_backend_report *report, const char *what_part, const char *detail_part);

/* Run the tb tool with arguments (a shell command line tail); returns its exit code; its stdout in
 * *out (malloc'd, caller frees) when out is not NULL. */
int tbt_run_tool(const char *args, char **out);

/* Capture what this process writes to stderr (fd 2) between begin and end; end returns it (malloc'd). */
void tbt_capture_stderr_begin(void);
char *tbt_capture_stderr_end(void);

/* cmocka setups: tbt_clear_env; the NVIDIA one also unsets the fake libcuda/NVML variables
 * (FAKE_CUDA_*, FAKE_NVML_MODE) and CUDA_VISIBLE_DEVICES. */
int tbt_setup_clean_env(void **state);
int tbt_setup_clean_nvidia(void **state);
/* TB_CUDA_LIB and TB_NVML_LIB at the fake libcuda and NVML. */
void tbt_use_nvidia_fakes(void);

/* The line of `text` that starts with `prefix`, copied into buf (cut to size - 1); NULL when there is none. */
const char *tbt_line(const char *text, const char *prefix, char *buf, size_t size);

/* A writable copy of a fixture tree, to break files in on purpose. tbt_fixture_copy copies
 * tests/fixtures/<fixture> into a new directory under /tmp (mode 0755, so a child that dropped to
 * uid 65534 can read it), points TB_FSROOT at it and returns its path; tbt_tree_remove deletes the
 * tree and frees the path. `rel` is a path inside the tree, e.g. "sys/bus/pci/devices/0000:3b:00.0/class". */
char *tbt_fixture_copy(const char *fixture);
/* Replace (or create) the file root/rel with text. */
void tbt_tree_write(const char *root, const char *rel, const char *text);
/* Put back the fixture's own version of root/rel. */
void tbt_tree_restore(const char *root, const char *fixture, const char *rel);
/* Run a shell command inside the tree (cd root && cmd); fails the test when it fails. */
void tbt_tree_sh(const char *root, const char *cmd);
void tbt_tree_remove(char *root);

/* Run fn in a forked child that dropped to uid/gid 65534 (tests run as root, and root passes every
 * permission check; a child of a non-root run stays the user it is). fn writes its result as text to
 * out and returns 0, or an exit code of its own (from 10 up) when it could not. Returns the text
 * (the caller frees it); fails the test when the child could not drop privileges or fn failed. */
typedef int (*tbt_child_fn)(const void *arg, FILE *out);
char *tbt_run_as_nobody(tbt_child_fn fn, const void *arg);

#define TB_ASSERT_OK(expr)                                                  \
  do {                                                                      \
    tb_status s_ = (expr);                                                  \
    if (s_ != TB_OK) fail_msg("%s -> %s: %s", #expr, tb_status_str(s_), tb_last_error()); \
  } while (0)

#define TB_ASSERT_CONTAINS(haystack, needle)                                              \
  do {                                                                                    \
    const char *h_ = (haystack);                                                          \
    if (!h_ || !strstr(h_, (needle))) fail_msg("expected \"%s\" in \"%s\"", (needle), h_ ? h_ : "(null)"); \
  } while (0)

/* Whether this CPU (after TB_CPU_FEATURES) has the bf16 instructions O3's bf16 kernels need (AVX512-BF16;
 * the AMX ones need it too): not under valgrind, which hides AVX-512. */
static inline bool tbt_cpu_has_bf16(void) { return (tb_convert_features() & TB_FEATURE_BIT(TB_FEATURE_AVX512BF16)) != 0; }
/* Print "skipped: <why>" and end the test as skipped (cmocka's skip()): a test the CPU cannot run. */
#define TBT_SKIP(why)                        \
  do {                                       \
    print_message("skipped: %s\n", (why)); \
    skip();                                  \
  } while (0)
/* Whether the hardware (cpuid and XCR0, before TB_CPU_FEATURES) has every feature of the AVX512-BF16 path
 * (tb_gemm_bf16_path_features), so a test may call that path's kernel entries directly without SIGILL. */
bool tbt_cpu_has_bf16_path(void);

#endif
