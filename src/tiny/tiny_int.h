/* Internals of the tiny logger (include/streamfat/tiny.h): the FAT pieces one log file needs,
 * shared by tiny_fat.c, tiny_dir.c and tiny_log.c. */
#ifndef SF_TINY_INT_H
#define SF_TINY_INT_H

#include "streamfat/tiny.h"
#include "streamfat/sf.h"
#include "util/le.h"

#include <string.h>

#define TINY_EOC 0x0FFFFFFFu          /* end of chain as written (FAT16: 0xFFFF) */

/* Sector I/O through the one sector buffer; LBAs relative to the volume. */
int tiny_read(struct sf_tiny_vol *v, uint32_t lba);
int tiny_write(struct sf_tiny_vol *v, uint32_t lba);
/* First sector of cluster c. */
uint32_t tiny_clus_lba(const struct sf_tiny_vol *v, uint32_t c);
/* The FAT entry of cluster c into *next (masked; >= 0x0FFFFFF8 end of chain on both types). */
int tiny_fat_get(struct sf_tiny_vol *v, uint32_t c, uint32_t *next);
/* Entries c .. c + n - 1 (all in one FAT sector or not): chain = 1 links them c -> c + 1 and
 * the last to `last`; chain = 0 frees them. Every FAT copy, a sector at a time. */
int tiny_fat_set(struct sf_tiny_vol *v, uint32_t c, uint32_t n, uint32_t last, int chain);
/* Allocate up to `want` free clusters that are contiguous and lie in one FAT sector, chained
 * and ended (every copy), and link `prev` (0: none) to the first in the same step when its
 * entry shares the sector, else right after. *first and *n say what was taken. */
int tiny_alloc(struct sf_tiny_vol *v, uint32_t prev, uint32_t want, uint32_t *first,
               uint32_t *n);

/* tiny_dir.c: the log directory, the highest LOGnnnnn.SFL in it; create LOG<index>.SFL
 * (empty); rewrite its entry's first cluster and size. */
int tiny_dir_open(struct sf_tiny_log *lg, const char *dir, uint32_t *highest);
int tiny_dir_create(struct sf_tiny_log *lg, uint32_t index);
int tiny_dir_update(struct sf_tiny_log *lg, uint32_t first, uint32_t size);

/* tiny_ring.c, for the writer: the block the producer fills is closed now (it goes out with
 * the next ones) unless empty. */
void tiny_ring_cut(struct sf_tiny_log *lg);
/* Producers stopped: append a DROP record for drops not yet reported. */
void tiny_ring_flush_drops(struct sf_tiny_log *lg);

#endif
