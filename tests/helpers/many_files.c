/* many_files IMAGE N [DIR]
 *
 * Test helper: create N small files f00000.txt .. in DIR (default: the root; created if
 * missing) in one mount, through sf_open / sf_write / sf_close. File i holds the line
 * "file i\n". Exit 0 when every call succeeded. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "helper_vol.h"

int main(int argc, char **argv)
{
    struct hvol h;
    struct sf_file f;
    char path[600], text[64];
    const char *dir = argc > 3 ? argv[3] : "";
    long n, i;
    int err;

    if (argc < 3) {
        fprintf(stderr, "usage: many_files IMAGE N [DIR]\n");
        return 2;
    }
    n = strtol(argv[2], NULL, 10);
    if (hvol_mount(&h, argv[1]))
        return 1;
    if (*dir) {
        err = sf_mkdir(&h.vol, dir);
        if (err && err != SF_EEXIST) {
            fprintf(stderr, "mkdir %s: %s\n", dir, sf_strerror(err));
            return 1;
        }
    }
    for (i = 0; i < n; i++) {
        int len = snprintf(text, sizeof text, "file %ld\n", i);
        snprintf(path, sizeof path, "%s%sf%05ld.txt", dir, *dir ? "/" : "", i);
        err = sf_open(&h.vol, &f, path, SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL);
        if (err) {
            fprintf(stderr, "open %s (file %ld of %ld): %s\n", path, i, n, sf_strerror(err));
            return 1;
        }
        sf_ssize_t w = sf_write(&f, text, (size_t)len);
        if (w != len) {
            fprintf(stderr, "write %s: %s\n", path, w < 0 ? sf_strerror((int)w) : "short");
            return 1;
        }
        err = sf_close(&f);
        if (err) {
            fprintf(stderr, "close %s: %s\n", path, sf_strerror(err));
            return 1;
        }
    }
    return hvol_unmount(&h) ? 1 : 0;
}
