/* The cipher stage (include/streamfat/cipher.h, docs/FORMAT.md "Sealed files"): one record
 * block's payload sealed or opened in place through the port's AEAD, the file key sealed
 * to the recipient through the port's sealed box. No cryptography of its own.
 *
 * On disk, a sealed record block's payload is
 *     nonce (24) || ciphertext (n) || tag (16),        `used` = n + 40
 * with the block header's bytes 0 .. 43 (magic, version, kind, file_id, seq, first_ts,
 * used, count, block_size) as associated data: a block altered, cut short, moved to another
 * place or taken from another file does not open. The writer's nonce is seq (LE64) || a
 * random 16-byte salt per file: unique for the file key, since each seq is sealed once
 * (blocks written by a checkpoint are final). Readers take the stored nonce as it is. */
#include "streamfat/cipher.h"
#include "util/le.h"

#include <string.h>

/* The CIPHER record's body (docs/FORMAT.md): u8 aead, u8[7] zero, u8[8] key id,
 * u8[80] sealed file key. */
#define CR_AEAD    0
#define CR_KEY_ID  8
#define CR_SEALED  16

static int aead_known(uint32_t aead)
{
    return aead == SF_AEAD_XCHACHA20_POLY1305 || aead == SF_AEAD_AES256_GCM;
}

/* Bytes 0 .. 43 of the block header bi describes (the layout of rec.c's sf_block_seal). */
static void header_ad(uint8_t *ad, const struct sf_block_info *bi)
{
    st_le32(ad + 0, SF_BLOCK_MAGIC);
    st_le16(ad + 4, SF_REC_VERSION);
    st_le16(ad + 6, bi->kind);
    st_le64(ad + 8, bi->file_id);
    st_le64(ad + 16, bi->seq);
    st_le64(ad + 24, bi->first_ts);
    st_le32(ad + 32, bi->used);
    st_le32(ad + 36, bi->count);
    st_le32(ad + 40, bi->block_size);
}

/* A volatile store the compiler cannot drop as dead. */
static void wipe(void *p, uint32_t n)
{
    volatile uint8_t *v = p;
    while (n--)
        *v++ = 0;
}

int sf_cipher_file_start(struct sf_cipher *c, const struct sf_cipher_port *port, uint32_t aead,
                         const uint8_t *pub32, uint8_t *body96)
{
    int err;
    sf_cipher_erase(c);
    if (!port || !port->random || !port->aead_seal || !port->key_seal || !aead_known(aead))
        return SF_EINVAL;
    c->port = port;
    c->aead = aead;
    if ((err = port->random(port->ctx, c->key, sizeof c->key)) ||
        (err = port->random(port->ctx, c->nonce_salt, sizeof c->nonce_salt)))
        goto fail;
    memset(body96, 0, SF_CIPHER_REC_BODY);
    body96[CR_AEAD] = (uint8_t)aead;
    memcpy(body96 + CR_KEY_ID, pub32, SF_CIPHER_KEY_ID);
    if ((err = port->key_seal(port->ctx, body96 + CR_SEALED, c->key, pub32)))
        goto fail;
    c->have_key = 1;
    return 0;
fail:
    sf_cipher_erase(c);
    return err;
}

int sf_cipher_seal_block(const struct sf_cipher *c, uint8_t *block, struct sf_block_info *bi)
{
    uint8_t ad[SF_CIPHER_AD];
    uint8_t *p = block + SF_BLOCK_HDR;
    uint32_t n = bi->used;
    int err;

    if (!c->have_key || n > bi->block_size - SF_BLOCK_HDR - SF_CIPHER_OVERHEAD)
        return SF_EINVAL;
    bi->used = n + SF_CIPHER_OVERHEAD;
    header_ad(ad, bi);
    memmove(p + SF_CIPHER_NONCE, p, n);
    st_le64(p, bi->seq);
    memcpy(p + 8, c->nonce_salt, sizeof c->nonce_salt);
    err = c->port->aead_seal(c->port->ctx, c->aead, p + SF_CIPHER_NONCE, p + SF_CIPHER_NONCE,
                             n, ad, sizeof ad, p, c->key);
    if (err)
        bi->used = n;
    return err;
}

void sf_cipher_erase(struct sf_cipher *c)
{
    wipe(c->key, sizeof c->key);
    wipe(c->nonce_salt, sizeof c->nonce_salt);
    c->have_key = 0;
}

int sf_cipher_rec_get(const uint8_t *body, uint32_t n, struct sf_cipher_rec *r)
{
    if (n < SF_CIPHER_REC_BODY)
        return SF_ECORRUPT;
    r->aead = body[CR_AEAD];
    memcpy(r->key_id, body + CR_KEY_ID, SF_CIPHER_KEY_ID);
    memcpy(r->sealed, body + CR_SEALED, SF_CIPHER_SEALED);
    return 0;
}

int sf_cipher_open_key(struct sf_cipher *c, const struct sf_cipher_port *port,
                       const struct sf_cipher_rec *r, const uint8_t *pub32,
                       const uint8_t *sec32)
{
    int err;
    sf_cipher_erase(c);
    if (!port || !port->aead_open || !port->key_open)
        return SF_EINVAL;
    if (memcmp(r->key_id, pub32, SF_CIPHER_KEY_ID) != 0)
        return SF_ENOENT;
    if (!aead_known(r->aead))
        return SF_ENOTSUP;
    c->port = port;
    c->aead = r->aead;
    if ((err = port->key_open(port->ctx, c->key, r->sealed, pub32, sec32))) {
        sf_cipher_erase(c);
        return err < 0 && err != SF_ENOTSUP ? SF_ECORRUPT : err;
    }
    c->have_key = 1;
    return 0;
}

int sf_cipher_open_block(const struct sf_cipher *c, uint8_t *block, struct sf_block_info *bi)
{
    uint8_t nonce[SF_CIPHER_NONCE];
    uint8_t *p = block + SF_BLOCK_HDR;
    uint32_t stored = bi->used;
    int err;

    if (!c->have_key || stored < SF_CIPHER_OVERHEAD ||
        stored > bi->block_size - SF_BLOCK_HDR)
        return SF_ECORRUPT;
    memcpy(nonce, p, sizeof nonce);
    memmove(p, p + SF_CIPHER_NONCE, stored - SF_CIPHER_NONCE);
    err = c->port->aead_open(c->port->ctx, c->aead, p, p, stored - SF_CIPHER_NONCE, block,
                             SF_CIPHER_AD, nonce, c->key);
    if (err)
        return SF_ECORRUPT;
    bi->used = stored - SF_CIPHER_OVERHEAD;
    /* the tag's bytes after the plaintext: zero, as after any block's `used` */
    memset(p + bi->used, 0, SF_CIPHER_OVERHEAD);
    return 0;
}

void sf_cipher_key_id_hex(const uint8_t *key_id8, char *out17)
{
    static const char hex[] = "0123456789abcdef";
    for (uint32_t i = 0; i < SF_CIPHER_KEY_ID; i++) {
        out17[2 * i] = hex[key_id8[i] >> 4];
        out17[2 * i + 1] = hex[key_id8[i] & 15];
    }
    out17[2 * SF_CIPHER_KEY_ID] = 0;
}

const struct sf_cipher_stage sf_cipher_stage = {
    .file_start = sf_cipher_file_start, .seal_block = sf_cipher_seal_block,
    .erase = sf_cipher_erase,
};
