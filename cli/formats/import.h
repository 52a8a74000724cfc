/* Importers of foreign CAN logs for the file: source of `streamfat log` (sources/file.c):
 * Vector BLF (import_blf.c) and Vector ASC (import_asc.c); candump -L stays in
 * sources/candump.c. import.c tells the formats apart by content and hands out one reader.
 *
 * Each format has a pure parser, bytes or one line in and at most one frame out, with no
 * I/O and no allocation, so a fuzzer can call it directly; around it a streaming reader
 * whose memory is fixed when it is opened (it never grows with the file).
 *
 * What a frame keeps: the absolute time in ns since the Unix epoch (the file's start time
 * plus the object's or line's offset, the start read as local time, as python-can and
 * Vector's tools do), the id, the flags (SF_CAN_EFF, RTR, FD, BRS, ESI, ERR) and the data.
 * Error frames (BLF CAN_ERROR_EXT, ASC ErrorFrame) become SocketCAN-style error frames of
 * class CAN_ERR_BUSERROR with 8 zero data bytes: the id and data of the damaged frame that
 * Vector's formats carry have no place in SocketCAN's error frame. Channels are the
 * file's numbers, counted from 1 (BLF, ASC). */
#ifndef SF_CLI_IMPORT_H
#define SF_CLI_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "sources/log_sources.h"

enum imp_format { IMP_CANDUMP = 0, IMP_ASC = 1, IMP_BLF = 2, IMP_MF4 = 3 };

#define IMP_ERR_CLASS 0x00000080u   /* CAN_ERR_BUSERROR: the class of imported error frames */

struct imp_frame {
    struct src_can_frame f;
    unsigned channel;               /* as in the file: BLF and ASC count from 1 */
};

/* The format of a log from its first bytes (at most the first 4 KiB are looked at):
 * "LOGG" is BLF, "MDF     " or "UnFinMF " MF4; a first line (after blank and // comment lines) starting with "date",
 * "base" or "Begin Triggerblock" is ASC; anything else is taken for candump -L. */
enum imp_format imp_detect(const uint8_t *buf, size_t n);

/* ---- BLF (pure) ------------------------------------------------------------------------ */

/* The file header: its size (objects start there) and the start time in ns since the
 * epoch (0 when the SYSTEMTIME is zero or not a date, as python-can reads it). 0, or -1
 * with *why set. */
int blf_parse_file_header(const uint8_t *p, size_t n, uint32_t *header_size,
                          uint64_t *start_ns, const char **why);

enum { BLF_OBJ_FRAME = 1, BLF_OBJ_SKIP = 0, BLF_OBJ_NEED = 2, BLF_OBJ_BAD = -1 };

/* One inner object (at p, "LOBJ" first; n bytes available). Returns BLF_OBJ_FRAME with
 * *fr set, BLF_OBJ_SKIP for an object that is not a frame, BLF_OBJ_NEED when fewer than
 * the object's bytes are available (*size is the object's size once its base header is
 * there, else 16), or BLF_OBJ_BAD with *why set. *size is object_size: the padding that
 * follows is the caller's. */
int blf_parse_object(const uint8_t *p, size_t n, uint64_t start_ns, struct imp_frame *fr,
                     uint32_t *size, const char **why);

/* ---- ASC (pure) ------------------------------------------------------------------------ */

struct asc_state {
    unsigned base;                  /* 16 or 10: ids and data ("base hex|dec") */
    int delta;                      /* "timestamps relative": each time counts from the last */
    uint64_t start_ns;              /* "date" / "Begin Triggerblock", ns since the epoch */
    uint64_t last_ns;               /* offset of the last event (delta mode) */
    int date_bad;                   /* the "date" line did not parse and no Begin Triggerblock
                                     * date has replaced it yet: a frame is then an error */
};

void asc_init(struct asc_state *st);
/* One line (n bytes, a trailing newline allowed). Returns 1 with *fr set for a frame, 0 for
 * a line that is not one (header, comment, an event streamfat does not import), -1 with
 * *why set for a line that is not ASC or a frame line that does not parse. A "date" line
 * that does not parse only sets st->date_bad (python-can's writer mangles its own date line
 * now and then, and the Begin Triggerblock date it always writes replaces it); a frame while
 * st->date_bad is set is the error "cannot read the date". */
int asc_parse_line(struct asc_state *st, const char *line, size_t n, struct imp_frame *fr,
                   const char **why);

/* ---- streaming readers ----------------------------------------------------------------- */

struct imp_reader;

/* Open PATH and tell its format. For BLF and ASC *r is a reader; for candump *r is NULL
 * (sources/candump.c reads the lines itself). 0, or -1 with a message in err. */
int imp_open(const char *path, enum imp_format *fmt, struct imp_reader **r, char *err,
             size_t errlen);
/* The next frame: 1, 0 at the end of the file, -1 on an error (imp_error says which,
 * naming the file and the offset or line). */
int imp_next(struct imp_reader *r, struct imp_frame *fr);
const char *imp_error(const struct imp_reader *r);
/* The file's own name of a channel (MF4: the SI comment), or NULL (then can<N-1>). */
const char *imp_channel_name(const struct imp_reader *r, unsigned channel);
void imp_close(struct imp_reader *r);

/* The per-format readers behind imp_open (fd is theirs to close). */
struct blf_reader;
struct blf_reader *blf_reader_open(int fd, const char *name, char *err, size_t errlen);
int blf_reader_next(struct blf_reader *r, struct imp_frame *fr);
const char *blf_reader_error(const struct blf_reader *r);
void blf_reader_close(struct blf_reader *r);

struct asc_reader;
struct asc_reader *asc_reader_open(int fd, const char *name, char *err, size_t errlen);
int asc_reader_next(struct asc_reader *r, struct imp_frame *fr);
const char *asc_reader_error(const struct asc_reader *r);
void asc_reader_close(struct asc_reader *r);

/* ASAM MDF 4 (import_mf4.c): the CAN bus-logging groups, merged in time order. The reader
 * follows links, so it needs a regular file; _open_mem reads a buffer (the fuzzer). */
struct mf4_reader;
struct mf4_reader *mf4_reader_open(int fd, const char *name, char *err, size_t errlen);
struct mf4_reader *mf4_reader_open_mem(const uint8_t *p, size_t n, char *err, size_t errlen);
int mf4_reader_next(struct mf4_reader *r, struct imp_frame *fr);
const char *mf4_reader_error(const struct mf4_reader *r);
/* The name of bus channel CHANNEL (as in imp_frame.channel) from the file's source
 * information (streamfat's export writes the interface names there), or NULL. */
const char *mf4_reader_channel_name(const struct mf4_reader *r, unsigned channel);
void mf4_reader_close(struct mf4_reader *r);

/* Local civil time to ns since the epoch, as python's naive datetime.timestamp() does
 * (mktime, the host's TZ). -1 for fields that are not a date; ms < 1000. */
int imp_local_time(int year, int month, int day, int hour, int min, int sec, uint32_t ns,
                   uint64_t *out);

#endif
