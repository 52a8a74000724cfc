/* proto_feed: frames in, the reassembly's messages out (src/proto/, include/streamfat/
 * proto.h), for the tests that compare it with implementations we did not write
 * (t_proto_isotp_ref).
 *
 *   proto_feed [--pair A,B,EFF,MODE]... [--fast PGN]... [--no-auto] < FRAMES
 *
 * FRAMES: one frame a line, "TS_NS ID FLAGS HEX" (ids and flags in hex, flags SF_CAN_*,
 * HEX the data bytes, "-" for none). MODE: 0 normal, 1 extended, 2 mixed. Prints one line a
 * message or event, "msg PROTO STATUS ID ADDR LENGTH DECLARED HEX PGN SA DA" (hex; "-"
 * for an empty payload), after sf_proto_finish, then "stats NAME=VALUE ...". Exit 0, or 2 on
 * bad input (one line on stderr). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/proto.h"

static struct sf_proto_session sess[64];
static uint8_t arena[1u << 22];
static struct sf_isotp_pair pairs[16];
static uint32_t pgns[16];

static void print(const struct sf_proto_msg *m)
{
    printf("%s %s %s %" PRIx32 " %02x %" PRIu32 " %" PRIu32 " ",
           m->event == SF_PROTO_EV_FF ? "ff" : "msg", sf_proto_kind_name(m->proto),
           sf_proto_status_name(m->status), m->id, m->addr, m->length, m->declared);
    if (!m->length)
        putchar('-');
    for (uint32_t i = 0; i < m->length; i++)
        printf("%02x", m->payload[i]);
    printf(" %" PRIx32 " %02x %02x\n", m->pgn, m->sa, m->da);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int main(int argc, char **argv)
{
    struct sf_proto_config cfg = {0};
    for (int i = 1; i < argc; i++) {
        unsigned a, b, eff, mode;
        if (!strcmp(argv[i], "--pair") && i + 1 < argc && cfg.n_isotp_pairs < 16 &&
            sscanf(argv[i + 1], "%x,%x,%u,%u", &a, &b, &eff, &mode) == 4) {
            pairs[cfg.n_isotp_pairs++] = (struct sf_isotp_pair){a, b, (uint8_t)eff,
                                                                (uint8_t)mode,
                                                                SF_PROTO_ANY_CHANNEL};
            i++;
        } else if (!strcmp(argv[i], "--fast") && i + 1 < argc && cfg.n_fast_pgns < 16) {
            pgns[cfg.n_fast_pgns++] = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--no-auto")) {
            cfg.off |= SF_PROTO_NO_ISOTP_AUTO;
        } else {
            fprintf(stderr, "proto_feed: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    cfg.sessions = sess;
    cfg.nsessions = 64;
    cfg.arena = arena;
    cfg.arena_size = sizeof arena;
    cfg.isotp_pairs = pairs;
    cfg.fast_pgns = pgns;
    struct sf_proto p;
    if (sf_proto_init(&p, &cfg)) {
        fprintf(stderr, "proto_feed: sf_proto_init failed\n");
        return 2;
    }
    char line[512], hex[200];
    uint64_t ts;
    uint32_t id, flags;
    struct sf_proto_msg m;
    for (unsigned n = 1; fgets(line, sizeof line, stdin); n++) {
        uint8_t d[64];
        unsigned len = 0;
        if (sscanf(line, "%" SCNu64 " %" SCNx32 " %" SCNx32 " %199s", &ts, &id, &flags,
                   hex) != 4) {
            fprintf(stderr, "proto_feed: line %u: not TS ID FLAGS HEX\n", n);
            return 2;
        }
        for (const char *h = strcmp(hex, "-") ? hex : ""; *h; h += 2) {
            if (len == 64 || hexval(h[0]) < 0 || hexval(h[1]) < 0) {
                fprintf(stderr, "proto_feed: line %u: bad data\n", n);
                return 2;
            }
            d[len++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
        }
        struct sf_proto_frame f = {ts, id, flags, 0, (uint8_t)len, d};
        if (sf_proto_feed(&p, &f) < 0) {
            fprintf(stderr, "proto_feed: line %u: frame refused\n", n);
            return 2;
        }
        while (sf_proto_next(&p, &m))
            print(&m);
    }
    sf_proto_finish(&p);
    while (sf_proto_next(&p, &m))
        print(&m);
    const struct sf_proto_stats *st = sf_proto_stats(&p);
    printf("stats frames=%" PRIu64 " ok=%" PRIu64 " broken=%" PRIu64 " sf=%" PRIu64
           " ff=%" PRIu64 " cf=%" PRIu64 " fc=%" PRIu64 " bad_pci=%" PRIu64
           " orphan_cf=%" PRIu64 " wrong_sn=%" PRIu64 " dup_cf=%" PRIu64 " short_cf=%" PRIu64
           " timeouts=%" PRIu64 " replaced=%" PRIu64 " ended=%" PRIu64 "\n",
           st->frames, st->messages_ok, st->messages_broken, st->isotp_sf, st->isotp_ff,
           st->isotp_cf, st->isotp_fc, st->isotp_bad_pci, st->isotp_orphan_cf,
           st->isotp_wrong_sn, st->isotp_dup_cf, st->isotp_short_cf, st->timeouts,
           st->replaced, st->ended);
    return 0;
}
