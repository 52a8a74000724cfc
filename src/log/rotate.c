/* Log files: names, the next file prepared ahead, the header block, rotation, and cyclic
 * deletion of the oldest files.
 *
 * Preparing ahead: when a file starts, the one after it is created right away (directory
 * entry, first allocation step of lg->step bytes) in the other stream slot, while only the
 * new file's header request is in flight. A rotation then closes the old file (drain, size,
 * trim) and switches slots: no directory search or allocation stands between the last block
 * of one file and the first of the next. At close the prepared file, still empty, is removed.
 *
 * Names: LOG00001.SFL (raw: .BIN), numbered after the highest LOGnnnnn.SFL / .BIN already in
 * the directory, or cfg.name's. A name from cfg.name is made when the file is prepared; its
 * start_ts is the expected start (the current file's start plus split_ns when rotating by
 * time, else the time of preparing).
 *
 * Cyclic mode: when the volume is full (a request fails with SF_ENOSPC), delete the oldest
 * file: the lowest LOGnnnnn below the current number (default names), or this session's
 * oldest file (cfg.name: its name made again from the index and start_ts it had; the last
 * SF_LOG_NAME_HIST are remembered). Failing that (and in every mode), give up the prepared
 * file's allocation. */
#include "log_impl.h"
#include "streamfat/block_pack.h"

/* ---- names ---- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint32_t slen(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return n;
}

static const char *ext(const struct sf_log *lg)
{
    return (lg->flags & SF_LOG_RAW) ? "BIN" : "SFL";
}

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* LOGnnnnn.EXT (5 to 9 digits, any case) -> its number, else 0. */
static uint32_t default_number(const struct sf_log *lg, const char *name)
{
    const char *e = ext(lg);
    uint32_t n = slen(name), v = 0, i;
    if (n < 3 + 5 + 4 || n > 3 + 9 + 4 || name[n - 4] != '.')
        return 0;
    for (i = 0; i < 3; i++)
        if (upper(name[i]) != "LOG"[i] || upper(name[n - 3 + i]) != e[i])
            return 0;
    for (i = 3; i < n - 4; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        v = v * 10 + (uint32_t)(name[i] - '0');
    }
    return v;
}

/* dir/name of file `index` into out; its length or < 0. */
static int make_path(struct sf_log *lg, uint32_t index, uint64_t start_ts, char *out)
{
    uint32_t n = 0, cap = SF_LOG_PATH_MAX;
    const char *dir = lg->cfg.dir ? lg->cfg.dir : "";
    for (; dir[n]; n++) {
        if (n + 2 >= cap)
            return SF_ENAMETOOLONG;
        out[n] = dir[n];
    }
    if (n && out[n - 1] != '/')
        out[n++] = '/';
    if (lg->cfg.name) {
        int k = lg->cfg.name(lg->cfg.name_ctx, index, start_ts, out + n, cap - n);
        if (k < 0)
            return k;
        if (k == 0 || (uint32_t)k >= cap - n)
            return SF_ENAMETOOLONG;
        n += (uint32_t)k;
    } else {
        char digits[10];
        uint32_t d = 0;
        for (uint32_t v = index; v || d < 5; v /= 10)
            digits[d++] = (char)('0' + v % 10);
        if (n + 3 + d + 4 + 1 > cap)
            return SF_ENAMETOOLONG;
        out[n++] = 'L';
        out[n++] = 'O';
        out[n++] = 'G';
        while (d)
            out[n++] = digits[--d];
        out[n++] = '.';
        for (const char *e = ext(lg); *e; e++)
            out[n++] = *e;
    }
    out[n] = 0;
    return (int)n;
}

static const char *dir_path(const struct sf_log *lg)
{
    return lg->cfg.dir && lg->cfg.dir[0] ? lg->cfg.dir : "/";
}

/* Default names in the directory: the highest number (*hi) and the lowest below the
 * current file's (*lo); 0 for none. */
static int scan_numbers(struct sf_log *lg, uint32_t *lo, uint32_t *hi)
{
    struct sf_dir d;
    struct sf_stat st;
    int err;
    if ((err = sf_opendir(lg->v, &d, dir_path(lg))))
        return err;
    while ((err = sf_readdir(&d, &st)) == 1) {
        uint32_t k = (st.attr & SF_ATTR_DIR) ? 0 : default_number(lg, st.name);
        if (k > *hi)
            *hi = k;
        if (k && k < lg->file_index && (!*lo || k < *lo))
            *lo = k;
    }
    sf_closedir(&d);
    return err < 0 ? err : 0;
}

/* Default names: the highest number already in the directory (0: none). */
int sfl_first_index(struct sf_log *lg, uint32_t *index)
{
    uint32_t lo = 0;
    *index = 0;
    return lg->cfg.name ? 0 : scan_numbers(lg, &lo, index);
}

/* ---- cyclic deletion ---- */

static int delete_oldest(struct sf_log *lg)
{
    char path[SF_LOG_PATH_MAX];
    int err;
    for (;;) {
        uint32_t index = 0, highest = 0;
        uint64_t start_ts = 0;
        if (lg->cfg.name) {
            if (lg->oldest_index >= lg->file_index)
                return SF_ENOSPC;
            index = lg->oldest_index++;
            if (lg->file_index - index > SF_LOG_NAME_HIST)
                continue;                      /* its start time is forgotten */
            start_ts = lg->name_ts[index % SF_LOG_NAME_HIST];
        } else {
            if ((err = scan_numbers(lg, &index, &highest)))
                return err;
            if (!index)
                return SF_ENOSPC;
        }
        if ((err = make_path(lg, index, start_ts, path)) < 0)
            return err;
        err = sf_unlink(lg->v, path);
        if (!err) {
            lg->stats.files_deleted++;
            return 0;
        }
        if (err != SF_ENOENT || !lg->cfg.name)
            return err;                        /* a named file may be gone already: next */
    }
}

/* Volume full: make room (0) or say there is none (SF_ENOSPC). Cyclic mode deletes the
 * oldest file first; then, in any mode, the prepared file gives its allocation back: it
 * takes whatever is free when it is prepared, so on a nearly full volume it can hold the
 * space the current file needs (a flight recorder's second trigger file failed that way). */
int sfl_make_room(struct sf_log *lg)
{
    int err = (lg->flags & SF_LOG_CYCLIC) ? delete_oldest(lg) : SF_ENOSPC;
    if (err != SF_ENOSPC)
        return err;
    if (lg->next_open)
        return sfl_discard_next(lg);           /* its allocation step comes back */
    return SF_ENOSPC;
}

/* ---- files ---- */

int sfl_prepare_next(struct sf_log *lg)
{
    if (lg->next_open)
        return 0;
    uint64_t ts = log_now(lg);
    if (lg->cur_open && lg->cfg.split_ns)
        ts = lg->file_start + lg->cfg.split_ns;
    int err = make_path(lg, lg->file_index + 1, ts, lg->next_path);
    if (err < 0)
        return err;
    struct sf_stream_cfg sc = {
        .expected_size = lg->step, .prealloc_step = lg->step,
        .queue_depth = lg->cfg.queue_depth,
    };
    uint32_t buf_size = lg->cfg.work_size;
    for (;;) {
        /* The stream's own buffer is only used for a partial sector: never by framed files
         * (whole blocks), only at the very end of a raw one; the slots can share it. */
        err = sf_stream_open(lg->v, &lg->st[lg->cur ^ 1], lg->next_path, &sc, lg->cfg.work,
                             buf_size);
        if (err == SF_ENOSPC && (lg->flags & SF_LOG_CYCLIC) && delete_oldest(lg) == 0)
            continue;
        break;
    }
    if (err)
        return err;
    lg->next_open = 1;
    lg->next_start = ts;
    return 0;
}

int sfl_discard_next(struct sf_log *lg)
{
    if (!lg->next_open)
        return 0;
    lg->next_open = 0;
    int err = sf_stream_close(&lg->st[lg->cur ^ 1]);
    int e = sf_unlink(lg->v, lg->next_path);
    return err ? err : e;
}

/* The start of the current file (docs/FORMAT.md): the header block with every channel name
 * known now and cfg.meta, and, when they do not all fit, record blocks seq 1, 2 ... holding
 * the rest, before any block of the ring. Built in cfg.work (free: the previous file's
 * requests completed before it was closed), work_size / bsize blocks at a time; a full work
 * buffer is written and waited for before the next is built, the last one is not waited
 * for. Names and META strings are at most bsize - 96 bytes (sf_log_open,
 * sf_log_name_channel; 40 less in sealed files), so each record fits an empty block.
 *
 * Sealed files (cfg.cipher_port): a new random file key, sealed to the recipient in a
 * CIPHER record right after the header's 32 bytes, and feature bit 33; the header block
 * itself stays readable, the name blocks after it are sealed like every record block. */
static int finish_head_block(struct sf_log *lg, uint8_t *b, struct sf_block_info *bi)
{
    int err;
    if (lg->cfg.cipher_port && bi->kind == SF_BLOCK_RECORDS &&
        (err = lg->cfg.cipher_stage->seal_block(&lg->cipher, b, bi)))
        return err;
    sf_block_seal(b, bi);
    return 0;
}

static int put_header(struct sf_log *lg, uint64_t now)
{
    uint8_t *w = lg->cfg.work, *b = w;
    uint32_t per = lg->cfg.work_size >> lg->bshift, k = 0;   /* blocks in w: <= per */
    uint32_t off = SF_FILE_HDR, count = 0;
    uint64_t seq = 0;
    int err;
    memset(b, 0, lg->bsize);
    struct sf_file_header fh = {
        .start_ts = now, .clock = lg->cfg.clock_kind, .file_index = lg->file_index,
        .session_id = lg->cfg.session_id,
        .features = lg->pk ? SF_FEATURE_PACKED : 0,   /* kind-3 blocks follow */
    };
    if (lg->cfg.cipher_port) {
        uint8_t body[SF_CIPHER_REC_BODY];
        if ((err = lg->cfg.cipher_stage->file_start(&lg->cipher, lg->cfg.cipher_port,
                                                    lg->cfg.cipher_aead, lg->cfg.cipher_pub,
                                                    body)))
            return err;
        fh.features |= SF_FEATURE_ENCRYPTED;
        sf_rec_put(b + SF_BLOCK_HDR + off, SF_REC_CIPHER, 0, 0, now, body, sizeof body);
        off += sf_rec_size(sizeof body);
        count++;
    }
    sf_file_header_put(b + SF_BLOCK_HDR, &fh);
    for (uint32_t i = 0;; i++) {
        int chan = i < SF_LOG_CHANNELS;
        const char *text;
        if (chan)
            text = atomic_load_explicit(&lg->chan_name[i], memory_order_acquire);
        else if (i - SF_LOG_CHANNELS < lg->cfg.meta_count)
            text = lg->cfg.meta[i - SF_LOG_CHANNELS];
        else
            break;
        if (!text)
            continue;
        uint32_t len = slen(text), size = sf_rec_size(len);
        if (off + size > lg->payload) {
            /* This block is full: seal it, start the next (write the buffer when full). */
            struct sf_block_info bi = {
                .kind = seq ? SF_BLOCK_RECORDS : SF_BLOCK_FILE_HEADER, .file_id = lg->file_id,
                .seq = seq, .first_ts = now, .used = off, .count = count,
                .block_size = lg->bsize,
            };
            if ((err = finish_head_block(lg, b, &bi)))
                return err;
            seq++;
            if (++k == per) {
                if ((err = sfl_submit_buf(lg, w, k << lg->bshift, 0, REQ_HEADER, now)) ||
                    (err = sfl_drain(lg)))
                    return err;
                k = 0;
            }
            b = w + ((size_t)k << lg->bshift);
            memset(b, 0, lg->bsize);
            off = count = 0;
        }
        sf_rec_put(b + SF_BLOCK_HDR + off, chan ? SF_REC_CHANNEL : SF_REC_META,
                   chan ? (uint8_t)i : 0, 0, now, text, (uint16_t)len);
        off += size;
        count++;
    }
    struct sf_block_info bi = {
        .kind = seq ? SF_BLOCK_RECORDS : SF_BLOCK_FILE_HEADER, .file_id = lg->file_id,
        .seq = seq, .first_ts = now, .used = off, .count = count, .block_size = lg->bsize,
    };
    if ((err = finish_head_block(lg, b, &bi)))
        return err;
    lg->head_blocks = lg->file_seq = seq + 1;
    err = sfl_submit_buf(lg, w, (k + 1) << lg->bshift, 0, REQ_HEADER, now);
    /* The header is on the device before anything else is written: FAT: a later
     * allocation step of the stream lends cfg.work past its first sector to its FAT
     * sectors (stream.c), or its bytes past the first sector would be FAT entries (found
     * by the reader's dirty-tail check, issue 15; with more than 464 bytes of names the
     * header's CRC would fail). Then a checkpoint of the header (docs/DESIGN.md, "Finding
     * a file after a cut"): its FLUSH makes the header and the allocation durable, then the
     * entry names the file's first cluster and its size covers the header, before any
     * record block of the file is submitted. A cut before the next regular checkpoint then leaves a file that repair
     * extends over every block written, not an empty entry over leaked clusters; the
     * header is this file's, so the blocks repair attaches are too. It waits (the ring
     * takes the records meanwhile), once per file, as the previous file's close does: a
     * checkpoint behind the data would let record blocks reach the device before the
     * entry names the file. */
    if (!err && !(err = sfl_drain(lg)))
        err = sf_stream_checkpoint(&lg->st[lg->cur]);
    return err;
}

/* A start that failed leaves nothing behind (a service retrying on a full volume would
 * fill the directory with empty files): the new current file, with nothing in flight yet,
 * is closed and removed; its name is made again as cyclic deletion does. */
static SF_NOINLINE int start_failed(struct sf_log *lg, int err)
{
    char path[SF_LOG_PATH_MAX];
    sf_stream_close(&lg->st[lg->cur]);
    lg->cur_open = 0;
    if (lg->cfg.cipher_stage)
        lg->cfg.cipher_stage->erase(&lg->cipher);
    if (make_path(lg, lg->file_index, lg->name_ts[lg->file_index % SF_LOG_NAME_HIST], path) >= 0)
        sf_unlink(lg->v, path);
    return sfl_fail(lg, err);
}

/* Make the prepared file current and prepare the one after it. */
int sfl_start_file(struct sf_log *lg, uint64_t now)
{
    int err;
    if (!lg->next_open && (err = sfl_prepare_next(lg)))
        return sfl_fail(lg, err);
    lg->cur ^= 1;
    lg->cur_open = 1;
    lg->next_open = 0;
    lg->file_index++;
    lg->name_ts[lg->file_index % SF_LOG_NAME_HIST] = lg->next_start;
    lg->file_id = splitmix64(lg->cfg.session_id + lg->file_index);
    lg->file_seq = lg->head_blocks = 0;
    lg->file_bytes = 0;
    lg->file_start = now;
    lg->req_head = lg->req_count = 0;
    /* The first file of a session writes its header before the next file is prepared: a
     * start that fails there (a full volume) has then created one file only, so a cut
     * leaves at most that one empty. Rotations prepare first, as the cyclic workloads of
     * the power-cut harness were measured with. */
    int first = lg->stats.files++ == 0;
    if (first && !(lg->flags & SF_LOG_RAW)) {
        if ((err = put_header(lg, now)))
            return start_failed(lg, err);
    }
    err = sfl_prepare_next(lg);
    if (err && err != SF_ENOSPC)
        return start_failed(lg, err);          /* ENOSPC: try again at the rotation */
    if (first || (lg->flags & SF_LOG_RAW))
        return 0;
    if ((err = put_header(lg, now)))
        return start_failed(lg, err);
    return 0;
}

/* Everything submitted to the current file reaches it; size, trim, close. */
int sfl_end_file(struct sf_log *lg)
{
    if (!lg->cur_open)
        return 0;
    int err = sfl_drain(lg);
    int e = sf_stream_close(&lg->st[lg->cur]);
    lg->cur_open = 0;
    if (lg->cfg.cipher_stage)                  /* the logger cannot read this file again */
        lg->cfg.cipher_stage->erase(&lg->cipher);
    if (!err)
        err = e;
    if (err)
        return sfl_fail(lg, err);
    lg->durable_base += lg->file_bytes;
    lg->stats.bytes_durable = lg->durable_base;
    sfl_durable_samples(lg, log_now(lg), lg->dur_n);
    return 0;
}

int sfl_rotate(struct sf_log *lg, uint64_t now)
{
    int err = sfl_end_file(lg);
    if (err)
        return err;
    return sfl_start_file(lg, now);
}
