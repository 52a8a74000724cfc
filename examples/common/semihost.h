/* Arm semihosting: the debugger (here QEMU, -semihosting-config enable=on,target=native)
 * services file and console calls the firmware makes with `bkpt 0xab` (M profile) or
 * `hlt #0xf000` (AArch64). The examples use it for the command line, a console, writing
 * the volume image out to a host file and the exit status. On real hardware without a debugger attached, a semihosting call hangs or faults:
 * a product would use a UART and the SD card instead. */
#ifndef EXAMPLES_SEMIHOST_H
#define EXAMPLES_SEMIHOST_H

#include <stdint.h>

/* Open a host file; mode is the semihosting mode number (SH_MODE_WB: "wb").
 * Returns a handle >= 0 or -1. */
#define SH_MODE_WB 5
int sh_open(const char *path, int mode);
/* Write all n bytes; 0 on success, -1 when the host wrote fewer. */
int sh_write(int handle, const void *p, uint32_t n);
int sh_close(int handle);
/* The command line QEMU passes (-append): "KERNEL ARGS..." into buf, NUL-terminated.
 * Returns 0, or -1 when the host has none or it does not fit. */
int sh_cmdline(char *buf, uint32_t size);
/* Text to the host's console. */
void sh_puts(const char *s);
/* Stop the emulator with this exit status (SYS_EXIT_EXTENDED on an M-profile
 * core, SYS_EXIT with its block on AArch64). */
_Noreturn void sh_exit(int status);

#endif
