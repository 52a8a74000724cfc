/* streamfat keygen: a key pair for sealed logs (docs/LOG.md, "Sealed logs"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/keyfile.h"
#include "streamfat/cipher_sodium.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char help[] =
"NAME\n"
"  streamfat keygen - make a key pair for sealed logs\n"
"\n"
"SYNOPSIS\n"
"  streamfat keygen NAME\n"
"\n"
"DESCRIPTION\n"
"  Writes NAME.pub, the public key (X25519) for the logger ('log --encrypt-to NAME.pub'),\n"
"  and NAME.key, the secret key that reads the logs ('export --key NAME.key'), readable\n"
"  by its owner only (mode 0600). Keep NAME.key away from the logger: a logger holding\n"
"  only the public key cannot read what it wrote. Existing files are never replaced.\n"
"  Prints the key id (the public key's first 8 bytes, hex) that sealed files name.\n"
"\n"
"OPTIONS\n"
"  -h, --help    show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat keygen fleet\n"
"  streamfat log --encrypt-to fleet.pub --source can:can0 sd.img\n"
"  streamfat export --key fleet.key sd.img LOG00001.SFL\n"
"\n"
"EXIT STATUS\n"
"  0 written, 1 error (a file exists, no libsodium), 2 wrong usage.\n";

static const struct option longopts[] = {
    CLI_LONGOPTS_END,
};

/* One key file through the one output path for host files (out_open), refusing an
 * existing path; mode applies from the start (the secret key is never readable by
 * others, not even for a moment). */
static int write_key(const char *path, const char *line, mode_t mode, struct out_file *of)
{
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT) {
        cli_err("%s: exists; not replaced (keygen never overwrites a key)", path);
        return CLI_ERR;
    }
    if (out_open(of, path, NULL))
        return CLI_ERR;
    if (fchmod(fileno(of->f), mode)) {
        cli_err("%s: %s", path, strerror(errno));
        out_close(of, 0);
        return CLI_ERR;
    }
    fputs(line, of->f);
    return 0;
}

int cmd_keygen(int argc, char **argv)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":h", longopts, help, 0);
    uint8_t pub[32], sec[32];
    char line[128], pub_path[4096], sec_path[4096], id[17];
    struct out_file opub, osec;
    int c, rc = CLI_ERR;

    while ((c = cli_getopt(&cl)) > 0) {
    }
    if (c < 0)
        return cl.status;
    if (argc - optind != 1)
        return cli_usage("expects NAME (writes NAME.pub and NAME.key)");
    const char *name = argv[optind];
    if (!*name || (size_t)snprintf(pub_path, sizeof pub_path, "%s.pub", name) >= sizeof pub_path ||
        (size_t)snprintf(sec_path, sizeof sec_path, "%s.key", name) >= sizeof sec_path)
        return cli_usage("NAME '%s': expects a file name", name);
    if (!sf_sodium_port()) {
        cli_err("sealed logs need libsodium, which this build lacks (scripts/deps.sh "
                "installs libsodium-dev)");
        return CLI_ERR;
    }
    if (sf_sodium_keypair(pub, sec)) {
        cli_err("cannot make a key pair");
        return CLI_ERR;
    }
    /* The secret key first: a failure leaves no public key that nothing can read. */
    keyfile_line(KEYFILE_SEC_TAG, sec, line, sizeof line);
    if (write_key(sec_path, line, 0600, &osec) == 0) {
        keyfile_line(KEYFILE_PUB_TAG, pub, line, sizeof line);
        if (write_key(pub_path, line, 0644, &opub) == 0) {
            int ok_sec = out_close(&osec, 1) == 0;
            int ok_pub = ok_sec ? out_close(&opub, 1) == 0 : (out_close(&opub, 0), 0);
            if (ok_sec && !ok_pub)
                remove(sec_path);
            rc = ok_sec && ok_pub ? CLI_OK : CLI_ERR;
        } else {
            out_close(&osec, 0);
        }
    }
    sf_sodium_wipe(sec, sizeof sec);
    sf_sodium_wipe(line, sizeof line);
    if (rc == CLI_OK) {
        sf_cipher_key_id_hex(pub, id);
        printf("%s: public key, key id %s\n%s: secret key (mode 0600): keep it off the "
               "logger\n", pub_path, id, sec_path);
    }
    return rc;
}
