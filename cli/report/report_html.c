/* The page of streamfat report: one self-contained HTML file. Everything a reader needs to
 * read is written here as HTML (the summary, the channels, the busiest ids, the latency
 * histogram and worst events, the files, the damage and the events), so the text is there
 * without a script; the charts are canvases drawn by the embedded script (report.js) from
 * one JSON block (id "sf-data"): the series as per-column [min, max] levels
 * (report_series.c), the events, the channels. Nothing is fetched: no URL is written,
 * every text from the log is escaped (HTML, or JSON with '<', '>' and '&' as \u escapes so
 * that no "</script>" can end the block).
 *
 * Sections: escaping, the summary, the tables, the JSON data, the page. */
#include "cli.h"
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_IDS 500               /* rows of the busiest-ids table */
#define LIST_EVENTS 500           /* rows of the events list */
#define BUDGET_VALUES 800000.0    /* numbers in the JSON series: at most about 6.5 MiB (up to
                                     8 characters each on average: counts, ns) */

/* ---- escaping ------------------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t k = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 :
               (p[0] & 0xF8) == 0xF0 ? 4 : 0;

    if (!k || k > n || (k == 2 && p[0] < 0xC2))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return k;
}

static void html(FILE *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);

    while (n) {
        size_t k = utf8_len(p, n);
        if (!k) {
            fputs("\xEF\xBF\xBD", o);      /* U+FFFD for a byte that is no UTF-8 */
            k = 1;
        } else if (*p == '&') {
            fputs("&amp;", o);
        } else if (*p == '<') {
            fputs("&lt;", o);
        } else if (*p == '>') {
            fputs("&gt;", o);
        } else if (*p == '"') {
            fputs("&quot;", o);
        } else if (*p < 0x20 || *p == 0x7F) {
            fputc(' ', o);
        } else {
            fwrite(p, 1, k, o);
        }
        p += k;
        n -= k;
    }
}

static void json_str(FILE *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);

    fputc('"', o);
    while (n) {
        size_t k = utf8_len(p, n);
        if (!k) {
            fputs("\\ufffd", o);
            k = 1;
        } else if (*p == '"' || *p == '\\') {
            fprintf(o, "\\%c", *p);
        } else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7F) {
            fprintf(o, "\\u%04x", *p);
        } else {
            fwrite(p, 1, k, o);
        }
        p += k;
        n -= k;
    }
    fputc('"', o);
}

/* ---- times and numbers ---------------------------------------------------------------- */

static void fmt_utc(uint64_t ns, char *buf, size_t n)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    char d[32];

    if (!gmtime_r(&t, &tm) || !strftime(d, sizeof d, "%Y-%m-%d %H:%M:%S", &tm)) {
        snprintf(buf, n, "%" PRIu64 " ns", ns);
        return;
    }
    snprintf(buf, n, "%s.%03u UTC", d, (unsigned)(ns % 1000000000u / 1000000u));
}

static void fmt_dur(uint64_t ns, char *buf, size_t n)
{
    double s = (double)ns / 1e9;

    if (s >= 3600)
        snprintf(buf, n, "%uh %02um %06.3fs", (unsigned)(s / 3600), (unsigned)fmod(s / 60, 60),
                 fmod(s, 60));
    else if (s >= 60)
        snprintf(buf, n, "%um %06.3fs", (unsigned)(s / 60), fmod(s, 60));
    else if (s >= 1)
        snprintf(buf, n, "%.3f s", s);
    else if (ns >= 1000000)
        snprintf(buf, n, "%.3f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.3f us", (double)ns / 1e3);
}

static void fmt_rate(uint64_t bps, char *buf, size_t n)
{
    if (bps % 1000000 == 0)
        snprintf(buf, n, "%" PRIu64 " Mbit/s", bps / 1000000);
    else if (bps % 1000 == 0)
        snprintf(buf, n, "%" PRIu64 " kbit/s", bps / 1000);
    else
        snprintf(buf, n, "%" PRIu64 " bit/s", bps);
}

static void row(FILE *o, const char *k, const char *v)
{
    fputs("<tr><th scope=\"row\">", o);
    html(o, k);
    fputs("</th><td>", o);
    html(o, v);
    fputs("</td></tr>\n", o);
}

static void row_u(FILE *o, const char *k, uint64_t v)
{
    char b[32];

    snprintf(b, sizeof b, "%" PRIu64, v);
    row(o, k, b);
}

/* ---- the summary --------------------------------------------------------------------- */

static void summary(FILE *o, const struct rpt *r)
{
    char a[64], b[512];
    uint64_t ckp = r->ev[EV_CHECKPOINT].total;
    unsigned sessions = 0, nch = 0;

    fputs("<section id=\"summary\"><h2>The recording at a glance</h2>\n"
          "<table class=\"kv\">\n", o);
    snprintf(b, sizeof b, "%u (%u read as logs)", r->nfiles, r->logs_read);
    row(o, "Files", b);
    if (r->records) {
        fmt_utc(r->first_ts, a, sizeof a);
        row(o, "Start", a);
        fmt_utc(r->last_ts, a, sizeof a);
        row(o, "End", a);
        fmt_dur(r->last_ts - r->first_ts, a, sizeof a);
        row(o, "Duration", a);
    }
    {
        int dev = 0;
        for (unsigned i = 0; i < r->nmeta; i++)
            if (strncmp(r->meta[i], "device=", 7) == 0) {
                row(o, "Device id", r->meta[i] + 7);
                dev = 1;
            }
        if (!dev)
            row(o, "Device id", "not set (streamfat log --device-id NAME sets it)");
    }
    for (unsigned i = 0; i < r->nmeta; i++)
        if (strncmp(r->meta[i], "source=", 7) == 0)
            row(o, "Source", r->meta[i] + 7);
    for (unsigned c = 0; c < 256; c++)
        nch += r->chan[c].used != 0;
    b[0] = '\0';
    for (unsigned c = 0, n = 0; c < 256; c++)
        if (r->chan[c].used && n < sizeof b - 160)
            n += (size_t)snprintf(b + n, sizeof b - n, "%s%s (%u)", n ? ", " : "",
                                  r->chan[c].name, c);
    snprintf(a, sizeof a, "Channels (%u)", nch);
    row(o, a, nch ? b : "none");
    row_u(o, "Records", r->records);
    row_u(o, "CAN frames", r->frames);
    snprintf(b, sizeof b, "%" PRIu64 " record%s lost (%" PRIu64 " DROP record%s)", r->dropped,
             r->dropped == 1 ? "" : "s", r->drop_records, r->drop_records == 1 ? "" : "s");
    fputs("<tr class=\"", o);
    fputs(r->dropped ? "bad" : "good", o);
    fputs("\"><th scope=\"row\">Lost (DROP)</th><td id=\"drop-total\">", o);
    html(o, b);
    fputs("</td></tr>\n", o);
    snprintf(b, sizeof b, "%" PRIu64 " block%s in %" PRIu64 " place%s", r->damaged_blocks,
             r->damaged_blocks == 1 ? "" : "s", r->damage_events, r->damage_events == 1 ? "" : "s");
    fputs(r->damage_events ? "<tr class=\"bad\">" : "<tr class=\"good\">", o);
    fputs("<th scope=\"row\">Damaged</th><td id=\"damage-total\">", o);
    html(o, b);
    fputs("</td></tr>\n", o);
    for (unsigned i = 0; i < r->nfiles; i++)
        if (i == 0 || (r->files[i].have_hdr && r->files[i - 1].have_hdr &&
                       r->files[i].hdr.session_id != r->files[i - 1].hdr.session_id))
            sessions++;
    snprintf(b, sizeof b, "%u file%s in %u session%s (%u rotation%s)", r->nfiles,
             r->nfiles == 1 ? "" : "s", sessions,
             sessions == 1 ? "" : "s", r->nfiles - sessions, r->nfiles - sessions == 1 ? "" : "s");
    row(o, "Rotations", b);
    snprintf(b, sizeof b, "%" PRIu64 " block%s sealed before full%s", ckp, ckp == 1 ? "" : "s",
             ckp > RPT_MAX_EVENTS ? " (the first ones on the timeline)" : "");
    row(o, "Checkpoints", b);
    row_u(o, "Triggers", r->ev[EV_TRIGGER].total);
    row_u(o, "Annotations", r->ev[EV_ANNOT].total);
    if (r->bad_time)
        row_u(o, "Records with a time past 2262 (skipped)", r->bad_time);
    if (r->ids.untracked)
        row_u(o, "Frames of ids beyond the id table", r->ids.untracked);
    fputs("</table>\n", o);
    fputs("<h3>Timeline</h3>\n<div class=\"chart\" data-chart=\"timeline\"></div>\n"
          "<p class=\"note\">Files (rotations), checkpoints, triggers, annotations, DROP "
          "intervals (red) and damaged blocks (grey) on one time axis. Wheel: zoom; drag: "
          "pan; double-click: everything.</p>\n</section>\n", o);
}

/* ---- the tables ------------------------------------------------------------------------ */

static void channels(FILE *o, const struct rpt *r)
{
    char a[64], b[64], c1[64];
    int assumed = 0;

    fputs("<section id=\"channels\"><h2>Channels</h2>\n<table class=\"sortable\">\n"
          "<thead><tr><th>#</th><th>name</th><th>CAN frames</th><th>CAN FD</th>"
          "<th>error frames</th><th>sent (TX)</th><th>other records</th><th>frames/s</th>"
          "<th>bitrate for bus load</th><th>first</th><th>last</th></tr></thead><tbody>\n", o);
    for (unsigned c = 0; c < 256; c++) {
        const struct rpt_chan *k = &r->chan[c];
        double secs;
        if (!k->used)
            continue;
        secs = k->last_ts > k->first_ts ? (double)(k->last_ts - k->first_ts) / 1e9 : 0;
        fmt_rate(k->nominal, a, sizeof a);
        fmt_rate(k->data, b, sizeof b);
        fprintf(o, "<tr><td>%u</td><td class=\"chname\">", c);
        html(o, k->name);
        fprintf(o, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%"
                PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td><td>%s%s%s%s</td>", k->can,
                k->fd, k->err, k->tx, k->samples + k->texts + k->latency + k->other,
                secs > 0 ? (double)k->can / secs : 0.0, k->can ? a : "", k->can ? " / " : "",
                k->can ? b : "", k->can && k->assumed ? " (assumed)" : "");
        assumed |= k->can && k->assumed;
        fmt_utc(k->first_ts, c1, sizeof c1);
        fprintf(o, "<td>%s</td>", k->first_ts != UINT64_MAX ? c1 : "");
        fmt_utc(k->last_ts, c1, sizeof c1);
        fprintf(o, "<td>%s</td></tr>\n", k->last_ts ? c1 : "");
    }
    if (!r->chan_used)
        fputs("<tr><td colspan=\"11\">none</td></tr>\n", o);
    fputs("</tbody></table>\n", o);
    if (assumed)
        fprintf(o, "<p class=\"note\">Bus load: a channel no <code>--bitrate</code> names is "
                "taken at %u kbit/s nominal and %u Mbit/s for the data phase of CAN FD frames "
                "with BRS (assumed).", RPT_DEFAULT_NOMINAL / 1000, RPT_DEFAULT_DATA / 1000000);
    else
        fputs("<p class=\"note\">", o);
    fputs(" Bits per frame are the ISO 11898-1 field lengths without stuff bits, so the "
          "load shown is a lower bound (stuffing adds up to about a fifth).</p>\n", o);
    fputs("<div id=\"chan-charts\"></div>\n</section>\n", o);
}

static void ids(FILE *o, const struct rpt *r)
{
    unsigned n = TOP_IDS;
    struct rid **v = rid_top(&r->ids, &n);
    char a[64], b[64];

    fputs("<section id=\"ids\"><h2>Busiest ids</h2>\n", o);
    if (!v) {
        fputs("<p>out of memory</p></section>\n", o);
        return;
    }
    fprintf(o, "<p class=\"note\">%u ids%s; click a column to sort. Period: the mean time "
            "between frames; jitter: its standard deviation.</p>\n", r->ids.n,
            r->ids.n > n ? " (the busiest shown)" : "");
    fputs("<table class=\"sortable\" id=\"ids-table\">\n<thead><tr><th>channel</th><th>id</th>"
          "<th>frames</th><th>frames/s</th><th>period ms</th><th>jitter ms</th>"
          "<th>min ms</th><th>max ms</th><th>bytes</th><th>first</th><th>last</th></tr>"
          "</thead><tbody>\n", o);
    for (unsigned i = 0; i < n; i++) {
        const struct rid *e = v[i];
        uint8_t ch = (uint8_t)((e->key - 1) >> 32);
        uint32_t id = (uint32_t)(e->key - 1) & 0x1FFFFFFFu;
        int eff = (int)((e->key - 1) >> 31 & 1);
        double span = (double)(e->last - e->first) / 1e9, mean = 0, jit = 0;
        if (e->count > 1) {
            mean = span * 1e3 / (double)(e->count - 1);
            jit = e->dt_sq / 1e12 / (double)(e->count - 1) - mean * mean;
            jit = jit > 0 ? sqrt(jit) : 0;
        }
        fputs("<tr><td>", o);
        html(o, r->chan[ch].name);
        fprintf(o, "</td><td class=\"id\">%0*" PRIX32 "</td><td>%" PRIu64 "</td><td>%.2f</td>",
                eff ? 8 : 3, id, e->count, span > 0 ? (double)(e->count - 1) / span : 0.0);
        if (e->count > 1)
            fprintf(o, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", mean, jit,
                    (double)e->dt_min / 1e6, (double)e->dt_max / 1e6);
        else
            fputs("<td></td><td></td><td></td><td></td>", o);
        fmt_utc(e->first, a, sizeof a);
        fmt_utc(e->last, b, sizeof b);
        fprintf(o, "<td>%u%s</td><td>%s</td><td>%s</td></tr>\n", e->len_max,
                e->fd ? " FD" : "", a, b);
    }
    if (!n)
        fputs("<tr><td colspan=\"11\">no CAN frames</td></tr>\n", o);
    fputs("</tbody></table>\n</section>\n", o);
    free(v);
}

static void latency(FILE *o, const struct rpt *r)
{
    char a[64], b[96];

    for (unsigned c = 0; c < 256; c++) {
        const struct rpt_chan *k = &r->chan[c];
        if (!k->latency)
            continue;
        fputs("<section class=\"latency\"><h2>Latency: ", o);
        html(o, k->name);
        fputs("</h2>\n<table class=\"kv\">\n", o);
        row_u(o, "samples", k->hist.count);
        const double ps[] = { 0.5, 0.99, 0.999 };
        const char *pn[] = { "p50", "p99", "p99.9" };
        for (unsigned i = 0; i < 3; i++) {
            fmt_dur(sf_hist_percentile(&k->hist, ps[i]), a, sizeof a);
            snprintf(b, sizeof b, "at most %s", a);
            row(o, pn[i], b);
        }
        fmt_dur(k->lat_max > 0 ? (uint64_t)k->lat_max : 0, a, sizeof a);
        row(o, "max", a);
        row_u(o, "on time or early", k->lat_neg);
        fputs("</table>\n<h3>Histogram</h3>\n<table class=\"hist\"><thead><tr><th>latency"
              "</th><th>samples</th><th></th></tr></thead><tbody>\n", o);
        uint64_t most = k->lat_neg;
        for (unsigned i = 0; i < SF_HIST_BUCKETS; i++)
            if (k->hist.bucket[i] > most)
                most = k->hist.bucket[i];
        if (k->lat_neg)
            fprintf(o, "<tr><td>&le; 0</td><td>%" PRIu64 "</td><td><div class=\"bar\" "
                    "style=\"width:%.1f%%\"></div></td></tr>\n", k->lat_neg,
                    100.0 * (double)k->lat_neg / (double)(most ? most : 1));
        for (unsigned i = 0; i < SF_HIST_BUCKETS; i++) {
            if (!k->hist.bucket[i])
                continue;
            fmt_dur(1ull << i, a, sizeof a);
            fmt_dur(2ull << i, b, sizeof b);
            fprintf(o, "<tr><td>%s &ndash; %s</td><td>%" PRIu64 "</td><td><div class=\"bar\""
                    " style=\"width:%.1f%%\"></div></td></tr>\n", a, b, k->hist.bucket[i],
                    100.0 * (double)k->hist.bucket[i] / (double)most);
        }
        if (!most)
            fputs("<tr><td colspan=\"3\">none</td></tr>\n", o);
        fputs("</tbody></table>\n", o);
        fprintf(o, "<div class=\"chart\" data-chart=\"latency\" data-ch=\"%u\"></div>\n", c);
        fputs("</section>\n", o);
    }
    if (!r->nworst)
        return;
    fputs("<section id=\"worst\"><h2>Worst latency events</h2>\n<table class=\"sortable\">"
          "<thead><tr><th>time</th><th>channel</th><th>latency us</th><th>period us</th>"
          "</tr></thead><tbody>\n", o);
    for (unsigned i = 0; i < r->nworst; i++) {
        fmt_utc(r->worst[i].ts, a, sizeof a);
        fprintf(o, "<tr><td>%s</td><td>", a);
        html(o, r->chan[r->worst[i].channel].name);
        fprintf(o, "</td><td>%.3f</td><td>%.3f</td></tr>\n", (double)r->worst[i].latency / 1e3,
                (double)r->worst[i].period / 1e3);
    }
    fputs("</tbody></table>\n</section>\n", o);
}

static void signals(FILE *o, const struct rpt *r)
{
    if (!r->dbc_done)
        return;
    fputs("<section id=\"signals\"><h2>Signals</h2>\n", o);
    fprintf(o, "<p class=\"note\">Decoded with the DBC by the Python package (streamfat.dbc):"
            " %" PRIu64 " frames of its messages decoded, %" PRIu64 " frames of no message "
            "followed. Each panel shares the time axis with the charts above; the band is "
            "the lowest and highest value in each column.</p>\n", r->dbc_frames,
            r->dbc_undecoded);
    fputs("<table class=\"sortable\"><thead><tr><th>signal</th><th>message</th><th>unit</th>"
          "<th>values</th><th>lowest</th><th>highest</th></tr></thead><tbody>\n", o);
    for (unsigned i = 0; i < r->nsignals; i++) {
        const struct rpt_signal *g = &r->signals[i];
        double lo = NAN, hi = NAN;
        for (unsigned b = 0; b < RS_BUCKETS; b++) {
            if (!isnan(g->lo[b]) && (isnan(lo) || g->lo[b] < lo))
                lo = g->lo[b];
            if (!isnan(g->hi[b]) && (isnan(hi) || g->hi[b] > hi))
                hi = g->hi[b];
        }
        fputs("<tr><td class=\"signame\">", o);
        html(o, g->name);
        fputs("</td><td>", o);
        html(o, g->message);
        fputs("</td><td>", o);
        html(o, g->unit);
        fprintf(o, "</td><td>%" PRIu64 "</td><td>%.9g</td><td>%.9g</td></tr>\n", g->count, lo,
                hi);
    }
    if (!r->nsignals)
        fputs("<tr><td colspan=\"6\">no signal of the DBC in these logs</td></tr>\n", o);
    fputs("</tbody></table>\n", o);
    for (unsigned i = 0; i < r->nsignals; i++)
        fprintf(o, "<div class=\"chart\" data-chart=\"signal\" data-i=\"%u\"></div>\n", i);
    fputs("</section>\n", o);
}

static void files(FILE *o, const struct rpt *r)
{
    char a[64], b[64];

    fputs("<section id=\"files\"><h2>Files</h2>\n<table class=\"sortable\"><thead><tr>"
          "<th>file</th><th>bytes</th><th>session</th><th>index</th><th>start</th>"
          "<th>end</th><th>records</th><th>blocks</th><th>damage</th></tr></thead><tbody>\n",
          o);
    for (unsigned i = 0; i < r->nfiles; i++) {
        const struct rpt_file *f = &r->files[i];
        fputs(f->damage[0] || !f->is_log || f->error[0] ? "<tr class=\"bad\"><td>" :
              "<tr><td>", o);
        html(o, f->name);
        fprintf(o, "</td><td>%" PRIu64 "</td>", f->bytes);
        if (f->have_hdr)
            fprintf(o, "<td>%016" PRIx64 "</td><td>%" PRIu32 "</td>", f->hdr.session_id,
                    f->hdr.file_index);
        else
            fputs("<td></td><td></td>", o);
        fmt_utc(f->first_ts, a, sizeof a);
        fmt_utc(f->last_ts, b, sizeof b);
        fprintf(o, "<td>%s</td><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64 " ok",
                f->records ? a : "", f->records ? b : "", f->records, f->blocks_ok);
        if (f->blocks_damaged + f->blocks_foreign)
            fprintf(o, ", %" PRIu64 " damaged", f->blocks_damaged + f->blocks_foreign);
        fputs("</td><td>", o);
        if (f->refused)
            html(o, "not read: it requires a feature this reader does not know");
        else if (!f->is_log)
            html(o, "not a streamfat log");
        else
            html(o, f->damage[0] ? f->damage : "none");
        if (f->error[0]) {
            fputs("; ", o);
            html(o, f->error);
        }
        fputs("</td></tr>\n", o);
    }
    fputs("</tbody></table>\n</section>\n", o);
}

static const char *const ev_name[EV_N] = {
    "file", "annotation", "trigger", "drop", "damage", "checkpoint",
};

static void events(FILE *o, const struct rpt *r)
{
    char a[64];
    unsigned shown = 0;

    fputs("<section id=\"events\"><h2>Events</h2>\n<table class=\"sortable\"><thead><tr>"
          "<th>time</th><th>kind</th><th>channel</th><th>count</th><th>what</th></tr>"
          "</thead><tbody>\n", o);
    for (unsigned k = 0; k < EV_N; k++) {
        if (k == EV_CHECKPOINT)
            continue;              /* many, and on the timeline */
        for (unsigned i = 0; i < r->ev[k].n && shown < LIST_EVENTS; i++, shown++) {
            const struct rpt_event *e = &r->ev[k].v[i];
            fmt_utc(e->ts, a, sizeof a);
            fprintf(o, "<tr class=\"ev-%s\"><td>%s</td><td>%s</td><td>", ev_name[k], a,
                    ev_name[k]);
            if (e->channel >= 0)
                html(o, r->chan[e->channel].used ? r->chan[e->channel].name : "");
            fputs("</td><td>", o);
            if (k == EV_DROP || k == EV_DAMAGE)
                fprintf(o, "%" PRIu64, e->count);
            fputs("</td><td>", o);
            html(o, e->text);
            fputs("</td></tr>\n", o);
        }
    }
    if (!shown)
        fputs("<tr><td colspan=\"5\">none</td></tr>\n", o);
    fputs("</tbody></table>\n", o);
    if (shown == LIST_EVENTS)
        fprintf(o, "<p class=\"note\">The first %u events are listed.</p>\n", LIST_EVENTS);
    fputs("</section>\n", o);
}

/* ---- the JSON data ---------------------------------------------------------------------- */

static int64_t rel(const struct rpt *r, uint64_t ts)
{
    return (int64_t)(ts - r->rs.t0);
}

static void data(FILE *o, const struct rpt *r)
{
    unsigned used = 1, nser = 2 + 2 * r->nsignals, first, nlev = 0;
    int f = 1;

    if (r->rs.started && r->last_ts > r->rs.t0)
        used = (unsigned)((r->last_ts - r->rs.t0) >> r->rs.shift) + 1;
    if (used > RS_BUCKETS)
        used = RS_BUCKETS;
    for (unsigned c = 0; c < 256; c++)
        nser += r->chan[c].used ? (r->chan[c].s_lat_min ? 5u : 3u) : 0u;
    /* [min, max(, total)] per column, levels of 1, 1/4, 1/16...: at most 4 numbers per
     * column of level 0 */
    first = (unsigned)(BUDGET_VALUES / (4.0 * nser));
    if (first > 4096)
        first = 4096;
    if (first < 64)
        first = 64;
    for (unsigned n = first < used ? first : used; n >= 16 && nlev < 5; n /= 4)
        nlev++;
    if (!nlev)
        nlev = 1;
    fputs("<script type=\"application/json\" id=\"sf-data\">\n{", o);
    fprintf(o, "\"t0\":%.6f,\"w\":%" PRIu64 ",\"used\":%u,\"end\":%" PRId64, r->rs.t0 / 1e9,
            (uint64_t)1 << r->rs.shift, used, r->records ? rel(r, r->last_ts) : 0);
    fputs(",\"drop\":", o);
    rs_write_levels(o, r->s_drop, RS_MAX, first, nlev, used, 1);
    fputs(",\n\"damage\":", o);
    rs_write_levels(o, r->s_damage, RS_MAX, first, nlev, used, 1);
    fputs(",\n\"chans\":[", o);
    for (unsigned c = 0; c < 256; c++) {
        const struct rpt_chan *k = &r->chan[c];
        if (!k->used)
            continue;
        fprintf(o, "%s\n{\"n\":%u,\"name\":", f ? "" : ",", c);
        f = 0;
        json_str(o, k->name);
        fprintf(o, ",\"can\":%" PRIu64 ",\"nominal\":%" PRIu64 ",\"data\":%" PRIu64
                ",\"assumed\":%s", k->can, k->nominal, k->data, k->assumed ? "true" : "false");
        fputs(",\"frames\":", o);
        rs_write_levels(o, k->s_frames, RS_SUM, first, nlev, used, 1);
        fputs(",\"busy\":", o);
        rs_write_levels(o, k->s_busy_ps, RS_SUM, first, nlev, used, 1000);
        fputs(",\"err\":", o);
        rs_write_levels(o, k->s_err, RS_SUM, first, nlev, used, 1);
        if (k->s_lat_min) {
            fputs(",\"lat_min\":", o);
            rs_write_levels(o, k->s_lat_min, RS_MIN, first, nlev, used, 1);
            fputs(",\"lat_max\":", o);
            rs_write_levels(o, k->s_lat_max, RS_MAX, first, nlev, used, 1);
        }
        fputc('}', o);
    }
    fputs("],\n\"signals\":[", o);
    for (unsigned i = 0; i < r->nsignals; i++) {
        const struct rpt_signal *g = &r->signals[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", o);
        json_str(o, g->name);
        fputs(",\"message\":", o);
        json_str(o, g->message);
        fputs(",\"unit\":", o);
        json_str(o, g->unit);
        fputs(",\"lo\":", o);
        rs_write_levels_f(o, g->lo, 1, first, nlev, used);
        fputs(",\"hi\":", o);
        rs_write_levels_f(o, g->hi, 0, first, nlev, used);
        fputc('}', o);
    }
    fputs("],\n\"events\":[", o);
    f = 1;
    for (unsigned k = 0; k < EV_N; k++)
        for (unsigned i = 0; i < r->ev[k].n; i++) {
            const struct rpt_event *e = &r->ev[k].v[i];
            fprintf(o, "%s\n{\"k\":\"%s\",\"t\":%" PRId64 ",\"e\":%" PRId64 ",\"c\":%" PRIu64
                    ",\"ch\":%d,\"x\":", f ? "" : ",", ev_name[k], rel(r, e->ts),
                    rel(r, e->ts_end), e->count, e->channel);
            f = 0;
            json_str(o, e->text);
            fputc('}', o);
        }
    fputs("]}\n</script>\n", o);
}

/* ---- the page --------------------------------------------------------------------------- */

int rpt_html(FILE *o, const struct rpt *r, const struct rpt_html_opts *op)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>streamfat report: ", o);
    html(o, op->title);
    fputs("</title>\n<style>\n", o);
    fputs(rpt_asset_css, o);
    fputs("</style>\n</head>\n<body>\n<header><h1>Recording report: ", o);
    html(o, op->title);
    fputs("</h1>\n<p class=\"note\">", o);
    html(o, op->generated);
    fputs("</p></header>\n<main>\n", o);
    summary(o, r);
    channels(o, r);
    signals(o, r);
    ids(o, r);
    latency(o, r);
    files(o, r);
    events(o, r);
    fputs("</main>\n<div id=\"tip\" hidden></div>\n", o);
    data(o, r);
    fputs("<script>\n", o);
    fputs(rpt_asset_js, o);
    fputs("</script>\n</body>\n</html>\n", o);
    return ferror(o) ? -1 : 0;
}
