/* The report line builder of the firmware examples (examples/baremetal, sd-spi, nvme): no
 * printf on these boards, so a line is built from strings and numbers and printed whole.
 * On a 32-bit core the decimal conversion divides 32-bit words only, so it does not pull in
 * libgcc's 64-bit division (__aeabi_uldivmod / __udivmoddi4) by itself. */
#ifndef EXAMPLES_REPORT_H
#define EXAMPLES_REPORT_H

#include <stdint.h>

/* The example's console: prints a NUL-terminated string (each example defines it). */
void report_puts(const char *s);

/* v in decimal, NUL-terminated, at the end of t (RP_U64_CHARS bytes); returns where the
 * digits start in t. */
#define RP_U64_CHARS 21
char *rp_u64(char *t, uint64_t v);
/* v as "0x" and lowercase hex digits, no leading zeros, at the end of t (RP_HEX_CHARS
 * bytes); returns where it starts in t. */
#define RP_HEX_CHARS 19
char *rp_hex(char *t, uint64_t v);

/* One line; longer text is cut at the end. Start with { .n = 0 }. */
struct rp_line {
    char buf[160];
    uint32_t n;
};
void rp_add(struct rp_line *l, const char *s);
void rp_add_u64(struct rp_line *l, uint64_t v);
void rp_add_i(struct rp_line *l, int v);
void rp_add_hex(struct rp_line *l, uint64_t v);
/* Append "\n", print the line with report_puts and empty it. */
void rp_flush(struct rp_line *l);

#endif
