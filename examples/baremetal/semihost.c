/* Arm semihosting calls (the "Semihosting for AArch32 and AArch64" specification): operation
 * number in r0, a pointer to its argument block in r1, `bkpt 0xab` on M-profile cores, the
 * result back in r0. */
#include "semihost.h"

#include <string.h>

#define SYS_OPEN          0x01u
#define SYS_CLOSE         0x02u
#define SYS_WRITE0        0x04u
#define SYS_WRITE         0x05u
#define SYS_GET_CMDLINE   0x15u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_Stopped_ApplicationExit 0x20026u

static uint32_t sh_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

int sh_open(const char *path, int mode)
{
    uint32_t a[3] = { (uint32_t)(uintptr_t)path, (uint32_t)mode, (uint32_t)strlen(path) };
    return (int)sh_call(SYS_OPEN, a);
}

int sh_write(int handle, const void *p, uint32_t n)
{
    uint32_t a[3] = { (uint32_t)handle, (uint32_t)(uintptr_t)p, n };
    return sh_call(SYS_WRITE, a) == 0 ? 0 : -1;    /* r0: bytes NOT written */
}

int sh_close(int handle)
{
    uint32_t a[1] = { (uint32_t)handle };
    return (int)sh_call(SYS_CLOSE, a);
}

int sh_cmdline(char *buf, uint32_t size)
{
    uint32_t a[2] = { (uint32_t)(uintptr_t)buf, size };
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
    uint32_t a[2] = { ADP_Stopped_ApplicationExit, (uint32_t)status };
    for (;;)
        sh_call(SYS_EXIT_EXTENDED, a);
}

void sh_add(struct sh_line *l, const char *s)
{
    while (*s && l->n < sizeof l->buf - 2)
        l->buf[l->n++] = *s++;
}

void sh_add_u64(struct sh_line *l, uint64_t v)
{
    char t[21];
    int i = 20;
    t[i] = '\0';
    do {
        /* 64-bit division by a constant: libgcc's __aeabi_uldivmod, fine off the hot path */
        t[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sh_add(l, t + i);
}

void sh_add_i(struct sh_line *l, int v)
{
    if (v < 0) {
        sh_add(l, "-");
        sh_add_u64(l, (uint64_t)-(int64_t)v);
    } else {
        sh_add_u64(l, (uint64_t)v);
    }
}

void sh_flush(struct sh_line *l)
{
    l->buf[l->n++] = '\n';
    l->buf[l->n] = '\0';
    sh_puts(l->buf);
    l->n = 0;
}
