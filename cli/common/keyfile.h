/* Key files of sealed logs (docs/LOG.md, "Sealed logs"): NAME.pub holds the recipient's
 * X25519 public key, NAME.key the secret key, each one text line:
 *     streamfat-public-key <64 hex digits>
 *     streamfat-secret-key <64 hex digits>
 * keygen writes them (cli/commands/cmd_keygen.c), log --encrypt-to reads a .pub, the
 * readers' --key a .key. cli/common/keyfile.c. */
#ifndef CLI_KEYFILE_H
#define CLI_KEYFILE_H

#include <stdint.h>

#define KEYFILE_PUB_TAG "streamfat-public-key"
#define KEYFILE_SEC_TAG "streamfat-secret-key"

/* Read a public key (32 bytes) from path: 0, or CLI_ERR after one line saying why. */
int keyfile_read_public(const char *path, uint8_t *pub32);
/* Read a secret key and derive its public key: 0, or CLI_ERR after one line. */
int keyfile_read_secret(const char *path, uint8_t *sec32, uint8_t *pub32);
/* The line of a key file for key (tag: one of the two above), with its newline. */
void keyfile_line(const char *tag, const uint8_t *key32, char *out, unsigned cap);

#endif
