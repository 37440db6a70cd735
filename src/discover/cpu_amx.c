/* AMX tile-data permission through arch_prctl (Linux 5.16+, Documentation/arch/x86/xstate.rst):
 * ARCH_GET_XCOMP_PERM (0x1022) reads the permitted state components, ARCH_REQ_XCOMP_PERM (0x1023)
 * asks for one, here XFEATURE_XTILEDATA (18). */
#include "discover/cpu_amx.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define TB_ARCH_GET_XCOMP_PERM 0x1022
#define TB_ARCH_REQ_XCOMP_PERM 0x1023
#define TB_XFEATURE_XTILEDATA 18

int tb_amx_request_permission(void) {
#if defined(__linux__) && defined(__x86_64__)
  uint64_t permitted = 0;
  if (syscall(SYS_arch_prctl, TB_ARCH_GET_XCOMP_PERM, &permitted) == 0 && (permitted & (1ull << TB_XFEATURE_XTILEDATA)))
    return 0;
  if (syscall(SYS_arch_prctl, TB_ARCH_REQ_XCOMP_PERM, (unsigned long)TB_XFEATURE_XTILEDATA) == 0) return 0;
  return errno ? errno : EPERM;
#else
  return ENOSYS;
#endif
}

const char *tb_errno_name(int err, char *buf, unsigned cap) {
  static const struct { int value; const char *name; } names[] = {
      {EPERM, "EPERM"},   {EINVAL, "EINVAL"}, {ENOSYS, "ENOSYS"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOMEM, "ENOMEM"},
      {EACCES, "EACCES"}, {EFAULT, "EFAULT"}, {EBUSY, "EBUSY"},   {ENODEV, "ENODEV"},
  };
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].value == err) return names[i].name;
  snprintf(buf, cap, "errno %d", err);
  return buf;
}
