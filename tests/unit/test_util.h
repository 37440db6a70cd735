/* Shared test helpers: fixture paths, environment set-up, discovery shortcuts, and running `tb`. */
#ifndef TB_TEST_UTIL_H
#define TB_TEST_UTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>

/* Clear every TB_* variable the library reads, so each test starts from the real-machine defaults. */
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

#endif
