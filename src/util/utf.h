/* UTF-8 <-> UTF-16 conversion for names (exFAT stores UTF-16LE, the API speaks UTF-8). */
#ifndef SF_UTIL_UTF_H
#define SF_UTIL_UTF_H

#include <stddef.h>
#include <stdint.h>

/* Convert `len` bytes of UTF-8 to UTF-16 (surrogate pairs for U+10000 and up).
 * Returns the number of UTF-16 units, SF_EBADNAME for malformed UTF-8 (overlong forms,
 * surrogates encoded in UTF-8, code points > U+10FFFF, truncated sequences), or
 * SF_ENAMETOOLONG when more than `cap` units would be needed. */
int sf_utf8_to_utf16(const char *s, size_t len, uint16_t *out, size_t cap);

/* Convert n UTF-16 units to NUL-terminated UTF-8. An unpaired surrogate becomes U+FFFD.
 * Returns the byte count (without the NUL) or SF_ENAMETOOLONG if cap is too small
 * (cap >= 3 * n + 1 is always enough). */
int sf_utf16_to_utf8(const uint16_t *in, size_t n, char *out, size_t cap);

/* Length of a NUL-terminated string (the core does not use libc's string functions). */
size_t sf_strlen(const char *s);

#endif
