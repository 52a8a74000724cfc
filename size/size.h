/* Shared by the reference programs of `make size` (scripts/size.sh, docs/BENCHMARKS.md).
 *
 * Each program calls the entry points a firmware of one kind would call, linked with
 * --gc-sections against the core built with -ffunction-sections -fdata-sections, so what is
 * measured is what such a firmware really carries. Arguments come from opaque volatile
 * inputs (start.c): the compiler can neither see through them nor drop a call, and the
 * caller's buffers are pointers, not arrays, so the program itself adds no .bss.
 * The library part of a set = (set program) - (empty program). */
#ifndef SF_SIZE_H
#define SF_SIZE_H

#include <stdint.h>

extern volatile uintptr_t sf_size_in;   /* opaque input */
extern volatile int sf_size_out;        /* results land here, so calls are not dropped */

/* The k-th caller-provided object: an address the compiler cannot know. */
#define SIZE_PTR(type, k) ((type)(sf_size_in + (k)))
#define SIZE_U32(k) ((uint32_t)(sf_size_in >> (k)))
#define SIZE_SINK(x) (sf_size_out += (int)(x))

int sf_size_main(void);

#endif
