/* streamfat bench --plot: throughput against data written, as a standalone SVG document.
 * Axes carry units (MB or GB written, MB/s; MB = 10^6 bytes), ticks fall on 1-2-5 steps,
 * the cache boundary is a dashed vertical line with its position, and the steady-state
 * level a dotted horizontal one. */
#include "bench_analyze.h"

#include <math.h>

#define W 800.0
#define H 420.0
#define L 70.0     /* plot area: left, right, top, bottom margins */
#define R 20.0
#define T 40.0
#define B 55.0

/* A tick step of 1, 2 or 5 times a power of ten giving about five ticks up to max. */
static double tick_step(double max)
{
    double raw = max / 5, p = pow(10, floor(log10(raw))), m = raw / p;

    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, out);
        }
    }
}

void bench_svg(FILE *out, const struct bench_result *r, const char *title)
{
    double gb = r->bytes >= 2e9;                    /* x in GB, else MB */
    double xunit = gb ? 1e9 : 1e6;
    double xmax = (double)r->bytes / xunit, ymax = 0, xs, ys, v;
    double pw = W - L - R, ph = H - T - B;
    unsigned i;

    for (i = 0; i < r->nwin; i++)
        if (r->win_bps[i] / 1e6 > ymax)
            ymax = r->win_bps[i] / 1e6;
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    xmax = xmax > 0 ? xmax : 1;
    xs = tick_step(xmax);
    ys = tick_step(ymax);
    xmax = ceil(xmax / xs - 1e-9) * xs;
    ymax = ceil(ymax / ys - 1e-9) * ys;
#define PX(x) (L + (x) / xmax * pw)
#define PY(y) (T + ph - (y) / ymax * ph)

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(out, "<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">", W / 2);
    xml_text(out, title);
    fputs("</text>\n", out);

    /* grid, ticks and tick labels */
    fputs("<g id=\"x-axis\" stroke=\"#ccc\">\n", out);
    for (v = 0; v <= xmax + xs / 2; v += xs)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" stroke=\"none\" "
                "fill=\"black\">%g</text>\n", PX(v), T, PX(v), T + ph, PX(v), T + ph + 16, v);
    fputs("</g>\n<g id=\"y-axis\" stroke=\"#ccc\">\n", out);
    for (v = 0; v <= ymax + ys / 2; v += ys)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\" "
                "fill=\"black\">%g</text>\n", L, PY(v), L + pw, PY(v), L - 6, PY(v) + 4, v);
    fputs("</g>\n", out);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"black\"/>\n", L, T, pw, ph);
    fprintf(out, "<text id=\"x-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
            "data written (%s)</text>\n", L + pw / 2, H - 12, gb ? "GB" : "MB");
    fprintf(out, "<text id=\"y-label\" transform=\"translate(18 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">throughput (MB/s)</text>\n", T + ph / 2);

    /* the series: each window's throughput at its middle */
    fputs("<polyline id=\"throughput\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" "
          "points=\"", out);
    for (i = 0; i < r->nwin; i++)
        fprintf(out, "%s%.1f,%.1f", i ? " " : "",
                PX(((double)i + 0.5) * (double)r->window_bytes / xunit),
                PY(r->win_bps[i] / 1e6));
    fputs("\"/>\n", out);

    fprintf(out, "<line id=\"steady\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#2ca02c\" stroke-dasharray=\"2 3\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#2ca02c\">steady %.1f MB/s"
            "</text>\n", L, PY(r->steady_bps / 1e6), L + pw, PY(r->steady_bps / 1e6),
            L + pw - 4, PY(r->steady_bps / 1e6) - 4, r->steady_bps / 1e6);
    if (r->have_boundary) {
        double bx = PX((double)r->boundary_bytes / xunit);
        fprintf(out, "<line id=\"cache-boundary\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">cache boundary %.1f %s "
                "(%.1f MiB)</text>\n", bx, T, bx, T + ph, bx + 4, T + 14,
                (double)r->boundary_bytes / xunit, gb ? "GB" : "MB",
                (double)r->boundary_bytes / 1048576.0);
    }
    fputs("</svg>\n", out);
#undef PX
#undef PY
}
