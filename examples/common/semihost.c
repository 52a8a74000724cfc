/* Arm semihosting calls (the "Semihosting for AArch32 and AArch64" specification): operation
 * number in r0/x0, a pointer to its argument block in r1/x1, the trap instruction, the result
 * back in r0/x0. The argument block's fields are a register wide (uintptr_t): 32 bits on
 * AArch32, 64 on AArch64. */
#include "semihost.h"

#include <string.h>

#define SYS_OPEN          0x01u
#define SYS_CLOSE         0x02u
#define SYS_WRITE0        0x04u
#define SYS_WRITE         0x05u
#define SYS_EXIT          0x18u
#define SYS_GET_CMDLINE   0x15u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_Stopped_ApplicationExit 0x20026u

#if defined(__aarch64__)
static uintptr_t sh_call(uintptr_t op, const void *arg)
{
    register uintptr_t x0 __asm__("x0") = op;
    register const void *x1 __asm__("x1") = arg;
    __asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
    return x0;
}
/* AArch64's SYS_EXIT takes a block (reason, subcode): the exit status goes through it */
#define SH_EXIT SYS_EXIT
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
static uintptr_t sh_call(uintptr_t op, const void *arg)
{
    register uintptr_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
/* AArch32's SYS_EXIT takes the reason alone: the extended call carries the status */
#define SH_EXIT SYS_EXIT_EXTENDED
#else
#error "semihost.c: AArch64 (hlt #0xf000) or an M-profile core (bkpt 0xab) only"
#endif

int sh_open(const char *path, int mode)
{
    uintptr_t a[3] = { (uintptr_t)path, (uintptr_t)mode, (uintptr_t)strlen(path) };
    return (int)sh_call(SYS_OPEN, a);
}

int sh_write(int handle, const void *p, uint32_t n)
{
    uintptr_t a[3] = { (uintptr_t)handle, (uintptr_t)p, n };
    return sh_call(SYS_WRITE, a) == 0 ? 0 : -1;    /* r0: bytes NOT written */
}

int sh_close(int handle)
{
    uintptr_t a[1] = { (uintptr_t)handle };
    return (int)sh_call(SYS_CLOSE, a);
}

int sh_cmdline(char *buf, uint32_t size)
{
    uintptr_t a[2] = { (uintptr_t)buf, size };
    if (size == 0 || sh_call(SYS_GET_CMDLINE, a) != 0)
        return -1;
    buf[a[1] < size ? a[1] : size - 1] = '\0';
    return 0;
}

void sh_puts(const char *s)
{
    sh_call(SYS_WRITE0, s);
}

_Noreturn void sh_exit(int status)
{
    uintptr_t a[2] = { ADP_Stopped_ApplicationExit, (uintptr_t)(uint32_t)status };
    for (;;)
        sh_call(SH_EXIT, a);
}
