/* confine: see confine.h. */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_RET_ERRNO
#error "linux/seccomp.h without SECCOMP_RET_ERRNO"
#endif

void confine_become_user(uid_t uid, gid_t gid)
{
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        jail_fail("cannot become %u:%u", (unsigned)uid, (unsigned)gid);
    /* setuid away from root cleared every capability; make sure it did. */
    if (setuid(0) == 0) {
        errno = 0;
        jail_fail("could not leave root for good");
    }
}

/* Empties the bounding and ambient sets, turns off what makes root special
 * at exec (and locks that), then clears the permitted, effective and
 * inheritable sets: nothing the process or a program it runs can regain. */
void confine_drop_capabilities(void)
{
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            jail_fail("cannot drop capability %d from the bounding set", cap);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        jail_fail("cannot clear the ambient capabilities");
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                         SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0)
        jail_fail("cannot lock root's capabilities off");
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &hdr, none) != 0)
        jail_fail("cannot drop the capabilities");
    /* Check rather than trust: CapEff and CapPrm must both read 0. */
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    int zero = 0;
    while (f && fgets(line, sizeof line, f))
        if ((strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0) &&
            strspn(line + 7, "\t 0") == strcspn(line + 7, "\n"))
            zero++;
    if (f)
        fclose(f);
    if (zero != 2) {
        errno = 0;
        jail_fail("capabilities remain after dropping them");
    }
}

void confine_limit_tasks(long nproc)
{
    struct rlimit rl = {(rlim_t)nproc, (rlim_t)nproc};
    if (setrlimit(RLIMIT_NPROC, &rl) != 0)
        jail_fail("cannot limit the submission's tasks");
}

/* BPF building blocks. */
#define LD_W(off)     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, t, f)  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define JGE(k, t, f)  BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (t), (f))
#define JSET(k, t, f) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (k), (t), (f))
#define RET(v)        BPF_STMT(BPF_RET | BPF_K, (v))

#if defined(__x86_64__)
#define JAIL_AUDIT_ARCH AUDIT_ARCH_X86_64
/* x32 system calls carry this bit: refused whole, so none of them can
 * reach unshare by another number. */
#define JAIL_X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define JAIL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* clone's flags that make a namespace; CLONE_NEWTIME (0x80) shares its bit
 * with the exit signal in clone's flags, and clone cannot make one. */
#define CLONE_NEW_ANY                                                                                                  \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

void confine_syscalls(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        jail_fail("cannot set no_new_privs");
#ifdef JAIL_AUDIT_ARCH
    const unsigned eperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    const unsigned enosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
    struct sock_filter prog[] = {
        /* 0 */ LD_W(offsetof(struct seccomp_data, arch)),
        /* 1 */ JEQ(JAIL_AUDIT_ARCH, 1, 0),
        /* 2 */ RET(eperm), /* another ABI (i386 through int 0x80): none of its calls */
        /* 3 */ LD_W(offsetof(struct seccomp_data, nr)),
#ifdef JAIL_X32_BIT
        /* 4 */ JGE(JAIL_X32_BIT, 0, 1),
        /* 5 */ RET(eperm),
#else
        JEQ(0xffffffffu, 0, 0), /* no x32 here: two no-ops keep the offsets */
        JEQ(0xffffffffu, 0, 0),
#endif
        /* 6 */ JEQ(__NR_unshare, 6, 0),
        /* 7 */ JEQ(__NR_setns, 5, 0),
        /* 8 */ JEQ(__NR_clone3, 5, 0),
        /* 9 */ JEQ(__NR_clone, 1, 0),
        /* 10 */ RET(SECCOMP_RET_ALLOW),
        /* 11 */ LD_W(offsetof(struct seccomp_data, args[0])), /* clone's flags: the low word (little endian) */
        /* 12 */ JSET(CLONE_NEW_ANY, 0, 2),
        /* 13 */ RET(eperm),
        /* 14 */ RET(enosys), /* clone3: glibc then falls back to clone */
        /* 15 */ RET(SECCOMP_RET_ALLOW),
    };
    struct sock_fprog fprog = {.len = (unsigned short)(sizeof prog / sizeof *prog), .filter = prog};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
        jail_fail("cannot install the system call filter");
#else
    errno = 0;
    jail_fail("no system call filter for this architecture: the sandbox runs on x86-64 and arm64");
#endif
}
