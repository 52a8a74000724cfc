/* `streamfat log`'s control options, executed by the core's control stage
 * (include/streamfat/log.h, sf_log_control): parsing, the configuration built from them,
 * attaching it to the log.
 *
 *   --filter [!]ID[/MASK][@CHANNEL]     keep/reject CAN ids (hex). Today's meaning: a
 *                                       matching reject wins, else a matching accept passes;
 *                                       with no accept rule everything else passes. A rule
 *                                       matches 11- and 29-bit frames alike (as before);
 *                                       @CHANNEL (a number, or the source's name of one
 *                                       channel, e.g. can0) limits it to that channel
 *   --prescale ID[/MASK]:N              keep 1 in N frames of those ids
 *   --prescale ID[/MASK]:T              at most one per duration T (e.g. 100ms; needs a unit)
 *   --prescale ID[/MASK]:change[/BYTEMASK]  only frames whose data changed under BYTEMASK
 *                                       (hex bytes in data order, first byte first; up to
 *                                       8 bytes, missing ones 00; none: all 8 bytes)
 *   --signal NAME=ID:START:LENGTH[:le|be][:u|s][:SCALE[:OFFSET]]   a DBC bit field (ID hex,
 *                                       above 7FF extended; le Intel, be Motorola)
 *   --start 'NAME OP VALUE' | 'can:ID'  start logging (OP: >= > <= < ==); can:ID any frame
 *   --stop  'NAME OP VALUE' | 'can:ID'
 *   --trigger 'signal:NAME OP VALUE'    a flight-recorder trigger on a signal
 *   --trigger-holdoff T                 at most one trigger per T per condition
 *   --rotate-on-start                   a start after a stop begins a new file
 *
 * The parse functions return 0, or -1 after printing one usage line (cli_usage). */
#ifndef SF_CLI_LOG_CONTROL_H
#define SF_CLI_LOG_CONTROL_H

#include <stdint.h>
#include <stdio.h>
#include "streamfat/log.h"

#define LCTL_MAX_FILTERS 128             /* --filter options */

struct lctl_filter {
    uint32_t id, mask;
    int reject;
    int channel;                         /* -1: every channel; -2: by name, below */
    char chan_name[32];                  /* @NAME: resolved by lctl_resolve_channels */
};

struct lctl {
    struct lctl_filter filters[LCTL_MAX_FILTERS];
    unsigned nfilters;
    struct sf_ctl_prescale presc[SF_CTL_MAX_PRESCALERS];
    unsigned npresc;
    struct sf_ctl_signal sig[SF_CTL_MAX_SIGNALS];
    char names[SF_CTL_MAX_SIGNALS][64];
    unsigned nsig;
    char *start_text, *stop_text;        /* resolved once every --signal is known */
    char *trig_text[SF_CTL_MAX_TRIGGERS];
    unsigned ntrig;
    uint64_t holdoff_ns;
    int rotate_on_start;
    /* built by lctl_build */
    struct sf_ctl_cfg cfg;
    struct sf_ctl_filter *cfilters;
    struct sf_ctl_rule *crules;
    struct sf_ctl_cond trig[SF_CTL_MAX_TRIGGERS];
    void *mem;
};

int lctl_parse_filter(struct lctl *c, const char *s);
int lctl_parse_prescale(struct lctl *c, const char *s);
int lctl_parse_signal(struct lctl *c, const char *s);
int lctl_set_start(struct lctl *c, const char *s);
int lctl_set_stop(struct lctl *c, const char *s);
int lctl_parse_trigger(struct lctl *c, const char *s);   /* the part after "signal:" */
int lctl_parse_holdoff(struct lctl *c, const char *s);
/* Anything configured (then the log needs the stage). */
int lctl_active(const struct lctl *c);
/* Resolve names, build the core's configuration for channels 0 .. channels - 1 (counted per
 * channel), check it: 0, or -1 after one usage line naming the problem. */
int lctl_build(struct lctl *c, unsigned channels, int recorder);
/* Some --filter names its channel (then lctl_resolve_channels before lctl_build). */
int lctl_has_channel_names(const struct lctl *c);
/* --filter ...@NAME to the channel the source calls NAME: 0, or -1 after one usage line
 * (no such name, or more than one channel of that name). */
int lctl_resolve_channels(struct lctl *c, const char *const *names, unsigned n);
/* After sf_log_open: attach. 0 or -1 after printing why. */
int lctl_attach(struct lctl *c, struct sf_log *lg);
void lctl_free(struct lctl *c);

#endif
