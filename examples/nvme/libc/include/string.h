/* The part of <string.h> the core and the NVMe example use: Debian has no C library for
 * bare-metal AArch64, so examples/nvme/libc/string.c brings these few functions. */
#ifndef SF_A64_STRING_H
#define SF_A64_STRING_H

#include <stddef.h>

void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);

#endif
