/* Sealed logs (docs/FORMAT.md, "Sealed files"): the cipher stage of the log format. A file
 * whose header has feature bit 33 carries a random file key, sealed to a recipient's public
 * key in a CIPHER record of its header block; the stored payload of every record block is
 * nonce || AEAD(payload) with the block's header (bytes 0 .. 43, `used` the stored length)
 * as associated data. The CRC is over the stored bytes, so framing, fsck and recovery need
 * no key.
 *
 * Freestanding: no cryptography here. The port (struct sf_cipher_port) supplies the AEAD,
 * the key sealing (X25519 sealed box) and random bytes: a firmware its hardware's AES or a
 * library, Linux libsodium (include/streamfat/cipher_sodium.h). Every call works on one
 * block in place, in the caller's memory; nothing is allocated. */
#ifndef STREAMFAT_CIPHER_H
#define STREAMFAT_CIPHER_H

#include <stdint.h>
#include "rec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_FEATURE_ENCRYPTED (1ull << 33)  /* required feature bit 33: sealed blocks */

#define SF_CIPHER_KEY 32u          /* file key, public and secret keys */
#define SF_CIPHER_NONCE 24u        /* stored before each block's ciphertext */
#define SF_CIPHER_TAG 16u          /* the AEAD's tag, after the ciphertext */
#define SF_CIPHER_OVERHEAD (SF_CIPHER_NONCE + SF_CIPHER_TAG)
#define SF_CIPHER_SEALED 80u       /* sealed box of a 32-byte key: 32 + 16 + 32 */
#define SF_CIPHER_KEY_ID 8u        /* the recipient public key's first 8 bytes */
#define SF_CIPHER_AD 44u           /* associated data: block header bytes 0 .. 43 */
#define SF_CIPHER_REC_BODY 96u     /* the CIPHER record's body */

/* The header block's record naming the file key (docs/FORMAT.md, "Sealed files"). */
#define SF_REC_CIPHER 0x12

enum sf_aead {
    SF_AEAD_XCHACHA20_POLY1305 = 1,  /* IETF: 24-byte nonce (all stored bytes) */
    SF_AEAD_AES256_GCM = 2,          /* 12-byte nonce: the stored nonce's first 12 bytes */
};

/* What a port supplies. Each returns 0 or a negative SF_E* error; ctx is the port's. */
struct sf_cipher_port {
    void *ctx;
    /* n random bytes (the file key, the nonce prefix) from a cryptographic source */
    int (*random)(void *ctx, void *buf, uint32_t n);
    /* AEAD `aead` with `key`: n bytes of `in` to n + 16 bytes at `out` (ciphertext, tag);
     * out == in must work (the block is sealed in place). SF_ENOTSUP: aead not offered. */
    int (*aead_seal)(void *ctx, uint32_t aead, uint8_t *out, const uint8_t *in, uint32_t n,
                     const uint8_t *ad, uint32_t ad_len, const uint8_t *nonce,
                     const uint8_t *key);
    /* The reverse: n bytes of ciphertext and tag to n - 16 bytes at out (out == in works);
     * SF_ECORRUPT when the tag does not verify (nothing of the output may be used). */
    int (*aead_open)(void *ctx, uint32_t aead, uint8_t *out, const uint8_t *in, uint32_t n,
                     const uint8_t *ad, uint32_t ad_len, const uint8_t *nonce,
                     const uint8_t *key);
    /* Seal a 32-byte key to a recipient's X25519 public key (an anonymous sealed box:
     * only the secret key opens it); open it with the key pair (SF_ECORRUPT: it does not
     * open). key_open is only needed by readers, key_seal and random only by writers. */
    int (*key_seal)(void *ctx, uint8_t *sealed80, const uint8_t *key32, const uint8_t *pub32);
    int (*key_open)(void *ctx, uint8_t *key32, const uint8_t *sealed80, const uint8_t *pub32,
                    const uint8_t *sec32);
};

/* One file's cipher state: the port, the AEAD and the file key. */
struct sf_cipher {
    const struct sf_cipher_port *port;
    uint32_t aead;                 /* enum sf_aead */
    int have_key;
    uint8_t key[SF_CIPHER_KEY];
    uint8_t nonce_salt[16];        /* writer: random per file; a block's nonce is seq || salt */
};

/* The CIPHER record's body, decoded. */
struct sf_cipher_rec {
    uint32_t aead;
    uint8_t key_id[SF_CIPHER_KEY_ID];
    uint8_t sealed[SF_CIPHER_SEALED];
};

/* Writer: a new file. A random file key and nonce salt, the key sealed to pub32; body96
 * gets the CIPHER record's body for the header block. */
int sf_cipher_file_start(struct sf_cipher *c, const struct sf_cipher_port *port, uint32_t aead,
                         const uint8_t *pub32, uint8_t *body96);
/* Writer: seal one record block in place. bi->used plaintext payload bytes at
 * block + 48 (at most block_size - 48 - SF_CIPHER_OVERHEAD) become nonce || ciphertext ||
 * tag, and bi->used grows by SF_CIPHER_OVERHEAD; the caller then finishes the header and
 * CRC with sf_block_seal(block, bi). */
int sf_cipher_seal_block(const struct sf_cipher *c, uint8_t *block, struct sf_block_info *bi);
/* Writer: forget the file key (the file is finished: the logger cannot read it again). */
void sf_cipher_erase(struct sf_cipher *c);

/* Reader: the CIPHER record's body (n bytes; longer bodies: the rest is ignored). 0, or
 * SF_ECORRUPT when it is too short. */
int sf_cipher_rec_get(const uint8_t *body, uint32_t n, struct sf_cipher_rec *r);
/* Reader: open the file key of r with the recipient's key pair. 0; SF_ENOENT when r names
 * another key (key id); SF_ECORRUPT when the sealed key does not open; SF_ENOTSUP for an
 * AEAD this reader does not know. */
int sf_cipher_open_key(struct sf_cipher *c, const struct sf_cipher_port *port,
                       const struct sf_cipher_rec *r, const uint8_t *pub32,
                       const uint8_t *sec32);
/* Reader: open one record block in place (its header checked already): the stored
 * payload (bi->used bytes at block + 48) becomes the plaintext from block + 48 on, and
 * bi->used shrinks by SF_CIPHER_OVERHEAD. The block header (the AD) is read from block.
 * 0, or SF_ECORRUPT (too short, or the tag does not verify: altered, cut, moved, foreign,
 * or another key): the block's bytes are then no longer what was stored. */
int sf_cipher_open_block(const struct sf_cipher *c, uint8_t *block, struct sf_block_info *bi);

/* The writer's side of the stage as a table: the logger calls it through
 * sf_log_cfg.cipher_stage (= &sf_cipher_stage), so a firmware that does not seal never
 * names it and links none of the stage (docs/PORTING.md, "Sealed logs on a firmware"). */
struct sf_cipher_stage {
    int (*file_start)(struct sf_cipher *c, const struct sf_cipher_port *port, uint32_t aead,
                      const uint8_t *pub32, uint8_t *body96);
    int (*seal_block)(const struct sf_cipher *c, uint8_t *block, struct sf_block_info *bi);
    void (*erase)(struct sf_cipher *c);
};
extern const struct sf_cipher_stage sf_cipher_stage;

/* The key id of a public key (its first 8 bytes), as text: 16 lowercase hex digits. */
void sf_cipher_key_id_hex(const uint8_t *key_id8, char *out17);

#ifdef __cplusplus
}
#endif

#endif
