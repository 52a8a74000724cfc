/* diag_decode: payloads in, the decoders' reading out (include/streamfat/diag.h), for the
 * tests that compare it with implementations we did not write (t_proto_decode_ref).
 *
 *   diag_decode < LINES
 *
 * LINES: "uds HEX", "obd HEX" or "dm1 HEX", one payload a line. Prints one line each:
 *   uds KIND SID NRC SUB DID DATAHEX DTC:STATUS,... SERVICE NRC_NAME  (hex; "-": none)
 *   obd MODE PID:KIND:RAW:NUM:DEN:OFFSET:LEN,... DTC,... VIN
 *   dm1 MIL RSL AWL PL FLASHES SPN:FMI:OC:CM,...
 * Exit 0, or 2 on bad input (one line on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/diag.h"

static uint8_t buf[8192];

static void hex(const uint8_t *d, uint32_t n)
{
    if (!n)
        putchar('-');
    for (uint32_t i = 0; i < n; i++)
        printf("%02X", d[i]);
}

static void uds(const uint8_t *d, uint32_t n)
{
    struct sf_uds u;
    if (sf_uds_parse(d, n, &u)) {
        puts("uds none");
        return;
    }
    printf("uds %d %02X ", u.kind, u.sid);
    if (u.kind == SF_UDS_NEGATIVE)
        printf("%02X ", u.nrc);
    else
        printf("- ");
    if (u.has_sub)
        printf("%02X ", u.sub);
    else
        printf("- ");
    if (u.has_did)
        printf("%04X ", u.did);
    else
        printf("- ");
    hex(u.data, u.len);
    putchar(' ');
    uint32_t dtc;
    uint8_t st;
    int any = 0;
    for (uint32_t i = 0; sf_uds_dtc_at(&u, i, &dtc, &st); i++, any = 1)
        printf("%s%06X:%02X", i ? "," : "", dtc, st);
    if (!any)
        putchar('-');
    const char *svc = sf_uds_service_name(u.sid), *nrc = sf_uds_nrc_name(u.nrc);
    printf(" %s %s\n", svc ? svc : "-", u.kind == SF_UDS_NEGATIVE && nrc ? nrc : "-");
}

static void obd(const uint8_t *d, uint32_t n)
{
    printf("obd %d ", sf_obd_mode(d, n));
    struct sf_obd_pid o;
    int any = 0;
    for (uint32_t i = 0; sf_obd_pid_at(d, n, i, &o); i++, any = 1)
        printf("%s%02X:%d:%u:%d:%d:%d:%u", i ? "," : "", o.pid, o.kind, (unsigned)o.raw, (int)o.num,
               (int)o.den, (int)o.offset, o.len);
    if (!any)
        putchar('-');
    putchar(' ');
    uint16_t dtc;
    char t[6];
    any = 0;
    for (uint32_t i = 0; sf_obd_dtc_at(d, n, i, &dtc); i++, any = 1) {
        sf_obd_dtc_text(dtc, t);
        printf("%s%s", i ? "," : "", t);
    }
    if (!any)
        putchar('-');
    const uint8_t *vin;
    if (sf_obd_vin(d, n, &vin))
        printf(" %.17s\n", (const char *)vin);
    else
        puts(" -");
}

static void dm1(const uint8_t *d, uint32_t n)
{
    struct sf_dm1 m;
    struct sf_dm1_dtc t;
    if (sf_dm1_parse(d, n, &m)) {
        puts("dm1 none");
        return;
    }
    printf("dm1 %u %u %u %u %u%u%u%u ", m.mil, m.red_stop, m.amber_warning, m.protect,
           m.mil_flash, m.red_stop_flash, m.amber_warning_flash, m.protect_flash);
    if (!m.ndtc)
        putchar('-');
    for (uint32_t i = 0; sf_dm1_dtc_at(&m, i, &t); i++)
        printf("%s%u:%u:%u:%u", i ? "," : "", (unsigned)t.spn, t.fmi, t.oc, t.cm);
    putchar('\n');
}

int main(void)
{
    char line[20000], kind[8];
    while (fgets(line, sizeof line, stdin)) {
        char *h = line;
        if (sscanf(line, "%7s", kind) != 1)
            continue;
        h += strlen(kind);
        while (*h == ' ')
            h++;
        uint32_t n = 0;
        while (h[0] && h[0] != '\n' && h[1] && n < sizeof buf) {
            unsigned v;
            if (sscanf(h, "%2x", &v) != 1) {
                fprintf(stderr, "diag_decode: bad hex '%s'\n", h);
                return 2;
            }
            buf[n++] = (uint8_t)v;
            h += 2;
        }
        if (!strcmp(kind, "uds"))
            uds(buf, n);
        else if (!strcmp(kind, "obd"))
            obd(buf, n);
        else if (!strcmp(kind, "dm1"))
            dm1(buf, n);
        else {
            fprintf(stderr, "diag_decode: unknown kind '%s'\n", kind);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
