/* create_names IMAGE MODE FORMAT FIRST COUNT
 *
 * Test helper: for i in FIRST .. FIRST+COUNT-1, the file named by the printf FORMAT with i
 * (e.g. "coll/Long File Name %04d.txt"), in one mount. MODE "create": create it (it must
 * not exist) holding its own name and "\n"; "check": open it by that name and compare
 * its contents; "rm": unlink it. Exit 0 when every call succeeded and matched. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "helper_vol.h"

int main(int argc, char **argv)
{
    struct hvol h;
    struct sf_file f;
    char path[600], text[620], got[620];
    int err, bad = 0;

    if (argc != 6) {
        fprintf(stderr, "usage: create_names IMAGE create|check|rm FORMAT FIRST COUNT\n");
        return 2;
    }
    const char *mode = argv[2], *fmt = argv[3];
    long first = strtol(argv[4], NULL, 10), n = strtol(argv[5], NULL, 10);
    if (hvol_mount(&h, argv[1]))
        return 1;
    for (long i = first; i < first + n && !bad; i++) {
        snprintf(path, sizeof path, fmt, (int)i);
        int len = snprintf(text, sizeof text, "%s\n", path);
        if (!strcmp(mode, "rm")) {
            if ((err = sf_unlink(&h.vol, path))) {
                fprintf(stderr, "rm %s: %s\n", path, sf_strerror(err));
                bad = 1;
            }
            continue;
        }
        int creating = !strcmp(mode, "create");
        err = sf_open(&h.vol, &f, path,
                      creating ? SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL : SF_O_RDONLY);
        if (err) {
            fprintf(stderr, "open %s: %s\n", path, sf_strerror(err));
            bad = 1;
            continue;
        }
        if (creating) {
            if (sf_write(&f, text, (size_t)len) != len) {
                fprintf(stderr, "write %s failed\n", path);
                bad = 1;
            }
        } else {
            sf_ssize_t k = sf_read(&f, got, sizeof got);
            if (k != len || memcmp(got, text, (size_t)len)) {
                fprintf(stderr, "%s: contents differ\n", path);
                bad = 1;
            }
        }
        if ((err = sf_close(&f))) {
            fprintf(stderr, "close %s: %s\n", path, sf_strerror(err));
            bad = 1;
        }
    }
    err = hvol_unmount(&h);
    return bad || err ? 1 : 0;
}
