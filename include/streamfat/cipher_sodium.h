/* The Linux port of the cipher stage (include/streamfat/cipher.h): libsodium. X25519
 * sealed boxes (crypto_box_seal) for the file key, XChaCha20-Poly1305 IETF for blocks, and
 * AES-256-GCM where libsodium offers it (a CPU with AES-NI and CLMUL). Built when
 * libsodium-dev is installed (scripts/deps.sh); without it sf_sodium_port returns NULL and
 * the commands that need it refuse in one line. host/cipher/sodium.c. */
#ifndef STREAMFAT_CIPHER_SODIUM_H
#define STREAMFAT_CIPHER_SODIUM_H

#include <stddef.h>
#include <stdint.h>
#include "cipher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The port, or NULL (no libsodium in this build, or sodium_init failed). */
const struct sf_cipher_port *sf_sodium_port(void);
/* Whether this machine can seal with aead (AES-256-GCM needs AES-NI). */
int sf_sodium_aead_available(uint32_t aead);
/* A new X25519 key pair. 0, or SF_ENOTSUP without libsodium. */
int sf_sodium_keypair(uint8_t *pub32, uint8_t *sec32);
/* The public key of a secret key. 0, or SF_ENOTSUP. */
int sf_sodium_public_of(const uint8_t *sec32, uint8_t *pub32);
/* Zero memory the compiler may not skip (keys). */
void sf_sodium_wipe(void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
