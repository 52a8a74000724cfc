/* Key files of sealed logs: one line, a tag and 64 hex digits (cli/common/keyfile.h). A
 * file of the other kind is named as such: a .key given where a .pub is wanted would
 * otherwise be a secret key used as a public one. */
#include "cli.h"
#include "common/keyfile.h"
#include "streamfat/cipher_sodium.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The key after tag in path's first line: 0, or CLI_ERR after one line. */
static int read_key(const char *path, const char *tag, const char *other, uint8_t *key32)
{
    char line[256];
    FILE *f = fopen(path, "r");
    int ok = 0;

    if (!f) {
        cli_open_err(path, errno);
        return CLI_ERR;
    }
    size_t tl = strlen(tag);
    if (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = '\0';
        if (strncmp(line, other, strlen(other)) == 0) {
            fclose(f);
            cli_err("%s: is a %s key file, not a %s one", path,
                    strcmp(other, KEYFILE_SEC_TAG) == 0 ? "secret" : "public",
                    strcmp(tag, KEYFILE_SEC_TAG) == 0 ? "secret" : "public");
            sf_sodium_wipe(line, sizeof line);
            return CLI_ERR;
        }
        if (n == tl + 1 + 64 && strncmp(line, tag, tl) == 0 && line[tl] == ' ') {
            ok = 1;
            for (unsigned i = 0; i < 32 && ok; i++) {
                int hi = hexval(line[tl + 1 + 2 * i]), lo = hexval(line[tl + 2 + 2 * i]);
                if (hi < 0 || lo < 0)
                    ok = 0;
                else
                    key32[i] = (uint8_t)(hi << 4 | lo);
            }
        }
    }
    sf_sodium_wipe(line, sizeof line);
    fclose(f);
    if (!ok) {
        cli_err("%s: not a streamfat %s key file (expects one line '%s' and 64 hex digits; "
                "'streamfat keygen' writes them)", path,
                strcmp(tag, KEYFILE_SEC_TAG) == 0 ? "secret" : "public", tag);
        return CLI_ERR;
    }
    return 0;
}

int keyfile_read_public(const char *path, uint8_t *pub32)
{
    return read_key(path, KEYFILE_PUB_TAG, KEYFILE_SEC_TAG, pub32);
}

int keyfile_read_secret(const char *path, uint8_t *sec32, uint8_t *pub32)
{
    if (!sf_sodium_port()) {
        cli_err("%s: sealed logs need libsodium, which this build lacks (scripts/deps.sh "
                "installs libsodium-dev)", path);
        return CLI_ERR;
    }
    if (read_key(path, KEYFILE_SEC_TAG, KEYFILE_PUB_TAG, sec32))
        return CLI_ERR;
    if (sf_sodium_public_of(sec32, pub32)) {
        sf_sodium_wipe(sec32, 32);
        cli_err("%s: not a usable X25519 secret key", path);
        return CLI_ERR;
    }
    return 0;
}

void keyfile_line(const char *tag, const uint8_t *key32, char *out, unsigned cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(tag);
    if (cap < n + 1 + 64 + 2)
        return;
    memcpy(out, tag, n);
    out[n++] = ' ';
    for (unsigned i = 0; i < 32; i++) {
        out[n++] = hex[key32[i] >> 4];
        out[n++] = hex[key32[i] & 15];
    }
    out[n++] = '\n';
    out[n] = '\0';
}
