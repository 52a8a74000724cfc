/* Inside the MF4 reader (import.h has its interface, mf4_format.h the layout): the state
 * shared by import_mf4.c (opening, frames in time order), import_mf4_groups.c (the file's
 * structure: which groups are CAN bus logging, where their members are) and
 * import_mf4_blocks.c (blocks, links, texts and the data streams). */
#ifndef SF_CLI_IMPORT_MF4_H
#define SF_CLI_IMPORT_MF4_H

#include "import.h"
#include "mf4_format.h"
#include "streamfat/rec.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_SRC 16u                /* CAN data groups read side by side */
#define MAX_CG 64u                 /* channel groups in one data group */
#define MAX_CHAIN 65536u           /* blocks in one linked list (DG, CG, CN, DL chain) */
#define DZ_MAX (32u << 20)         /* bytes of one unzipped DZ block */
#define WIN 65536u                 /* window over DT/SD bytes */
#define CHNAME_MAX 64u             /* a bus channel's name from the SI comment */
#define SI_MD_MAX 16384u           /* the SI comment read for the names */
#define REC_MAX 65536u             /* bytes of one record */
#define NAME_MAX_ 128u

enum { F_BUS, F_ID, F_IDE, F_DLC, F_DLEN, F_BYTES, F_EDL, F_BRS, F_ESI, F_DIR, F_N };
enum { K_DATA, K_REMOTE, K_ERROR };

struct field {
    int present;
    uint32_t byte_off, bit_off, bits;
    uint8_t dtype;
    int vlsd;
    uint64_t sd_root;              /* VLSD: the signal data */
};

/* A chain of data blocks read front to back as one byte stream. */
struct stream {
    uint64_t root;
    uint64_t dl;                   /* the DL block being walked (0: root is one block) */
    uint64_t dl_n, dl_i;           /* its data links, the next one */
    unsigned steps;                /* DL blocks visited (loop guard) */
    uint64_t visited;              /* file bytes of the blocks visited: more than the file
                                      holds means a block is listed twice (a loop) */
    int started, done;
    /* the current block */
    uint64_t blk_off;              /* DT/SD: file offset of the bytes; DZ: 0 */
    uint64_t blk_len, blk_pos;
    int zipped;                    /* the current block is a DZ (its bytes are in z) */
    uint8_t *z;                    /* DZ: the unzipped block */
    size_t zcap;
    uint8_t *win;                  /* DT/SD: a window of the bytes */
    uint64_t win_at;               /* block position of win[0] */
    size_t win_len;
    uint64_t pos;                  /* stream position (bytes delivered) */
};

struct cgroup {
    uint64_t rec_id;
    uint32_t size;                 /* data + invalidation bytes */
    int vlsd_cg;                   /* a VLSD channel group: u32 length + bytes */
    int can;                       /* a CAN bus-logging group of kind `kind` */
    int kind;
    struct field t;                /* master */
    double ta, tb;                 /* t = ta + tb * raw (integer masters) */
    struct field f[F_N];
};

struct src {
    uint64_t dg;                   /* offset of the DG (for messages) */
    unsigned rec_id_size;
    struct cgroup cg[MAX_CG];
    unsigned ncg;
    struct stream data, sd;
    uint64_t sd_root;              /* the VLSD stream's root (one per data group) */
    uint8_t *rec;
    uint64_t nrec;                 /* records read */
    int have;                      /* fr holds the next frame */
    struct imp_frame fr;
    int done;
};

struct mf4_reader {
    int fd;
    const uint8_t *mem;            /* the fuzzer's input instead of fd */
    uint64_t size;
    const char *name;
    char err[512];
    int failed;
    uint64_t start_ns;
    struct src *src[MAX_SRC];
    unsigned nsrc;
    uint64_t spent;                /* data bytes produced by all streams (DZ: unzipped) */
    uint8_t *tmp;                  /* zipped bytes / transposition */
    size_t tmpcap;
    int si_read;                   /* the first CAN group's SI comment was looked at */
    char chname[256][CHNAME_MAX];  /* "BusChannel N" names of that comment ("" none) */
};

struct blk {
    uint64_t off, len, links;
    char id[3];                    /* "DT", "CN", ... */
};

/* ---- import_mf4_blocks.c ------------------------------------------------------------- */

/* The reader's error (printf-style, after "NAME: MF4: offset OFF: "); the first one sticks.
 * Returns -1. */
int mf4_bad(struct mf4_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* n bytes at file offset off (within the file's size): 0, or -1 (error set). */
int mf4_rd(struct mf4_reader *r, uint64_t off, void *buf, size_t n);
/* The header of the block at off; `want` lists the acceptable ids ("DT DZ DL HL"). */
int mf4_blk_read(struct mf4_reader *r, uint64_t off, const char *want, struct blk *b);
/* The block's link i (0 past its link count): 0, or -1. */
int mf4_link_at(struct mf4_reader *r, const struct blk *b, uint64_t i, uint64_t *v);
/* The block's data fields (n bytes wanted; missing ones read as zeros). */
int mf4_blk_data(struct mf4_reader *r, const struct blk *b, uint8_t *d, size_t n);
/* A TX block's text (a link of 0: ""). */
int mf4_tx_read(struct mf4_reader *r, uint64_t off, char *s, size_t cap);
/* n bytes of the stream into dst (dst NULL: skip them); 1, 0 at a clean end (no byte
 * read), -1 (an end inside the n bytes is an error naming `what`). */
int mf4_stream_read(struct mf4_reader *r, struct stream *st, uint8_t *dst, uint64_t n,
                    uint64_t at, const char *what);
/* Start the stream (again) at the data block or list `root`. */
void mf4_stream_reset(struct stream *st, uint64_t root);

/* ---- import_mf4_groups.c ------------------------------------------------------------- */

/* A field's raw value in a record (little- or big-endian, any bit offset and width). */
uint64_t mf4_get_bits(const uint8_t *rec, const struct field *f);
/* Read the data group at dg_off: its CAN channel groups become a source of the reader
 * (r->src); other groups are skipped. *budget bounds the blocks visited. 0, or -1. */
int mf4_scan_dg(struct mf4_reader *r, uint64_t dg_off, unsigned *budget);

#endif
