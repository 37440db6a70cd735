/* Internal: the Linux permission a process needs before it may use AMX tile data
 * (arch_prctl ARCH_REQ_XCOMP_PERM, Linux Documentation/arch/x86/xstate.rst). */
#ifndef TB_DISCOVER_CPU_AMX_H
#define TB_DISCOVER_CPU_AMX_H

/* Ask the kernel for the XTILEDATA state component (18) for this process, after checking with
 * ARCH_GET_XCOMP_PERM whether it is already granted. Returns 0 when granted, else the errno
 * (ENOSYS on a build that is not x86-64 Linux). Call it only when cpuid reports AMX. */
int tb_amx_request_permission(void);

/* "EPERM", "EINVAL", ...; "errno N" for values without a name here. buf holds the fallback text. */
const char *tb_errno_name(int err, char *buf, unsigned cap);

#endif
