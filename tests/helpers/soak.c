/* soak SECONDS: cyclic logging with rotation against a RAM exFAT volume for SECONDS of wall
 * time, checking that nothing grows: resident memory (VmRSS), open descriptors, and the time
 * each log file takes (CPU time; rotation every 1 MiB on a 64 MiB volume, so cyclic deletion
 * runs all the time). Once deletion has started (the steady state), its first tenth and the
 * last tenth of the run (at least 2 s each) are compared:
 * RSS may grow by 1 MiB at most (the caller's buffers are fixed: ring, work, cache), the
 * descriptor count not at all, the median CPU time per file to at most twice (+200 us: a
 * loaded machine makes it noisy; a leak or a scan that grows with the files goes far past).
 * Prints "seconds=... files=... deleted=... rss_kib=A->B fds=A->B file_ms=A->B" and exits 0 or 1. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamfat/sf.h"
#include "streamfat/log.h"

#define DEV (64u << 20)
#define BLOCK (16u * 1024u)

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static uint64_t clk(void *c) { (void)c; return mono_ns(); }

/* CPU time of this process: the cost per file, not the machine's load. */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static long rss_kib(void)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            v = strtol(line + 6, NULL, 10);
    fclose(f);
    return v;
}

static int fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;            /* the directory stream itself */
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof v[0], cmp_u64);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 60;
    static uint8_t mbuf[1 << 20];
    static uint8_t cache[256 * 1024] __attribute__((aligned(4096)));
    static uint8_t ring[64 * BLOCK] __attribute__((aligned(4096)));
    static uint8_t work[BLOCK] __attribute__((aligned(4096)));
    uint8_t *disk = calloc(1, DEV);
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_log lg;
    if (!disk || sf_rambd_init(&ram, disk, 512, DEV / 512))
        return 2;
    memset(disk, 0, DEV);        /* commit the pages now: RSS must not grow with the disk */
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = 4096, .align = 64 * 1024,
                              .serial = 1, .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    struct sf_vol_cfg vc = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    if (sf_mkfs(&ram.bd, &o, &why) || sf_mount(&v, &vc)) {
        fprintf(stderr, "soak: mkfs/mount failed\n");
        return 2;
    }
    struct sf_log_cfg c = {
        .vol = &v, .ring = ring, .ring_size = sizeof ring, .block_size = BLOCK,
        .flags = SF_LOG_CYCLIC, .split_bytes = 1u << 20, .checkpoint_bytes = 256 * 1024,
        .clock = clk, .session_id = 77, .work = work, .work_size = sizeof work,
    };
    if (sf_log_open(&lg, &c)) {
        fprintf(stderr, "soak: open failed\n");
        return 2;
    }
    uint64_t t0 = mono_ns(), end = t0 + (uint64_t)(secs * 1e9);
    uint64_t win = (uint64_t)(secs * 1e9) / 10;
    if (win < 2000000000ull)
        win = 2000000000ull;
    static uint64_t first_ms[100000], last_ms[100000];
    size_t nf = 0, nl = 0;
    long rss0 = -1, rss1 = -1;
    int fd0 = -1, fd1 = -1;
    uint64_t files_seen = 1, file_t = cpu_ns(), k = 0, steady = 0;
    struct sf_log_stats st;
    for (;;) {
        uint64_t now = mono_ns();
        if (now >= end)
            break;
        for (int i = 0; i < 256; i++, k++) {
            uint8_t d[8];
            memcpy(d, &k, 8);
            if (sf_log_append_can(&lg, 0, now, 0x100 + (uint32_t)(k % 16), 0, d, 8)) {
                k++;
                break;                      /* ring full: let the writer run */
            }
        }
        int r;
        while ((r = sf_log_service(&lg)) > 0)
            ;
        if (r < 0) {
            fprintf(stderr, "soak: service: %s\n", sf_strerror(r));
            return 1;
        }
        sf_log_get_stats(&lg, &st);
        if (!steady && st.files_deleted)
            steady = now;                   /* cyclic deletion runs from here on */
        if (st.files != files_seen) {
            uint64_t c1 = cpu_ns(), us = (c1 - file_t) / 1000;
            if (steady && now - steady < win && nf < 100000)
                first_ms[nf++] = us;
            else if (steady && end - now < win && nl < 100000)
                last_ms[nl++] = us;
            files_seen = st.files;
            file_t = c1;
        }
        if (rss0 < 0 && steady && now - steady > win / 2) {
            rss0 = rss_kib();
            fd0 = fds();
        }
    }
    rss1 = rss_kib();
    fd1 = fds();
    sf_log_get_stats(&lg, &st);
    int err = sf_log_close(&lg);
    if (err || sf_unmount(&v)) {
        fprintf(stderr, "soak: close: %s\n", sf_strerror(err));
        return 1;
    }
    uint64_t m0 = median(first_ms, nf), m1 = median(last_ms, nl);
    printf("seconds=%.0f files=%llu deleted=%llu drops=%llu rss_kib=%ld->%ld fds=%d->%d file_cpu_us=%llu->%llu"
           " (%zu/%zu files in the windows)\n",
           secs, (unsigned long long)st.files, (unsigned long long)st.files_deleted,
           (unsigned long long)st.records_dropped, rss0, rss1, fd0, fd1,
           (unsigned long long)m0, (unsigned long long)m1, nf, nl);
    int bad = 0;
    if (st.files_deleted == 0)
        bad = fprintf(stderr, "soak: cyclic deletion never ran\n");
    if (rss1 > rss0 + 1024)
        bad = fprintf(stderr, "soak: resident memory grew\n");
    if (fd1 != fd0)
        bad = fprintf(stderr, "soak: descriptors changed\n");
    if (nf < 3 || nl < 3)
        bad = fprintf(stderr, "soak: too few files in the windows\n");
    else if (m1 > 2 * m0 + 200)
        bad = fprintf(stderr, "soak: the time per file grew\n");
    free(disk);
    return bad ? 1 : 0;
}
