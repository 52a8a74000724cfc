/* Inside the MF4 writer (export --format mf4): the state shared by export_mf4.c (the
 * writer: records in, the file's structure out) and export_mf4_blocks.c (block output and
 * the data blocks). The format's layout is mf4_format.h. */
#ifndef SF_CLI_EXPORT_MF4_H
#define SF_CLI_EXPORT_MF4_H

#include "export.h"
#include "mf4_format.h"

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define BLOCK_RAW (1u << 20)       /* target record bytes per DT/DZ block */
#define DL_MAX 32u                 /* data blocks (32 MiB of records) per DL block */
#define NGROUPS 3
#define MD_MAX 16384u              /* an MD/TX block built in memory */

enum { G_DATA = 0, G_REMOTE = 1, G_ERROR = 2 };

struct member {
    const char *name;              /* after "CAN_DataFrame." */
    uint32_t off, bits;
    uint8_t type;
};

/* The members of CAN_DataFrame and CAN_ErrorFrame (export_mf4.c). */
extern const struct member mf4_frame_members[10];

struct group {
    const char *name;              /* the structure channel's name */
    const struct member *members;
    unsigned nmembers;
    uint32_t rec;                  /* record bytes */
    uint8_t *buf;                  /* records not yet written */
    uint32_t cap, fill;
    uint64_t cycles;               /* records */
    uint8_t maxlen;                /* the longest DataLength among the buffered records */
    uint64_t stream;               /* record bytes in blocks already written */
    uint64_t dl_link[DL_MAX], dl_off[DL_MAX];
    unsigned dl_n;
    uint64_t dl_first, dl_last;    /* file offsets of written DL blocks */
};

struct mf4 {
    struct group g[NGROUPS];
    uint8_t *tbuf;                 /* transposed block */
    uint8_t *zbuf;                 /* deflated block */
    uLong zcap;
    z_stream zs;
    int zs_ready;
    uint8_t *blk;                  /* a DL or MD block being built */
    uint64_t pos;                  /* file offset of the next byte written */
    uint64_t start;                /* HD start time, ns */
    int started;                   /* start is the first record's time */
    uint64_t ev_last;              /* the last EV written (its next link is patched) */
    uint64_t ev_first;
    uint8_t chan_used[256];        /* streamfat channels that carried frames */
    int err;                       /* a write failed (errno set) */
};

/* ---- export_mf4_blocks.c: output ---------------------------------------------------- */

/* Append n bytes to the file (nothing once m->err is set; a failed write sets it). */
void mf4_out(struct export_ctx *x, struct mf4 *m, const void *p, size_t n);
/* Zeros up to the next MF4_ALIGN boundary. */
void mf4_align(struct export_ctx *x, struct mf4 *m);
/* Overwrite n bytes at file offset `at` (already written) and go back to the end. */
void mf4_patch(struct export_ctx *x, struct mf4 *m, uint64_t at, const void *p, size_t n);
/* The same for one 8-byte link. */
void mf4_patch_link(struct export_ctx *x, struct mf4 *m, uint64_t at, uint64_t v);
void mf4_block_header(uint8_t *b, const char *id, uint64_t len, uint64_t links);
/* Write a block of `nlinks` links and `ndata` data bytes (b holds all of it, header
 * included); returns its offset. */
uint64_t mf4_put_block(struct export_ctx *x, struct mf4 *m, uint8_t *b, const char *id,
                       unsigned nlinks, size_t ndata);
/* A TX ("##TX") or MD ("##MD") block holding the text s (n bytes); returns its offset. */
uint64_t mf4_put_text(struct export_ctx *x, struct mf4 *m, const char *id, const char *s,
                      size_t n);
/* A TX block of the string s. */
uint64_t mf4_put_tx(struct export_ctx *x, struct mf4 *m, const char *s);
/* XML text: &, <, > and quotes escaped, control characters and invalid UTF-8 kept out
 * (replaced by '?'), at most cap - 1 bytes. Returns the new length. */
size_t mf4_xml_append(char *d, size_t len, size_t cap, const uint8_t *s, size_t n);
/* s appended as it is, cut at cap - 1 bytes. Returns the new length. */
size_t mf4_str_append(char *d, size_t len, size_t cap, const char *s);

/* ---- export_mf4_blocks.c: data blocks ----------------------------------------------- */

/* Write the DL block listing the group's data blocks written since the last one, and
 * link it from the previous DL. */
void mf4_write_dl(struct export_ctx *x, struct mf4 *m, struct group *g);
/* Write the group's buffered records as one DT or DZ block. */
void mf4_flush_group(struct export_ctx *x, struct mf4 *m, struct group *g);
/* Room for one more record of the group (zeroed; a full buffer is flushed first): the
 * record, or NULL when memory or the output failed (m->err). */
uint8_t *mf4_new_record(struct export_ctx *x, struct mf4 *m, struct group *g);

#endif
