/* The cipher stage's Linux port (include/streamfat/cipher_sodium.h): every cryptographic
 * operation is libsodium's; this file only adapts the calls. */
#include "streamfat/cipher_sodium.h"

#include <string.h>

#ifdef SF_HAVE_SODIUM
#include <sodium.h>

static int ready(void)
{
    static int state;                  /* 0 unknown, 1 ready, -1 failed */
    if (!state)
        state = sodium_init() >= 0 ? 1 : -1;
    return state > 0;
}

int sf_sodium_aead_available(uint32_t aead)
{
    if (!ready())
        return 0;
    if (aead == SF_AEAD_XCHACHA20_POLY1305)
        return 1;
    return aead == SF_AEAD_AES256_GCM && crypto_aead_aes256gcm_is_available();
}

static int port_random(void *ctx, void *buf, uint32_t n)
{
    (void)ctx;
    randombytes_buf(buf, n);
    return 0;
}

static int port_seal(void *ctx, uint32_t aead, uint8_t *out, const uint8_t *in, uint32_t n,
                     const uint8_t *ad, uint32_t ad_len, const uint8_t *nonce,
                     const uint8_t *key)
{
    (void)ctx;
    if (aead == SF_AEAD_XCHACHA20_POLY1305)
        return crypto_aead_xchacha20poly1305_ietf_encrypt(out, NULL, in, n, ad, ad_len, NULL,
                                                          nonce, key) ? SF_EINVAL : 0;
    if (aead == SF_AEAD_AES256_GCM && crypto_aead_aes256gcm_is_available())
        return crypto_aead_aes256gcm_encrypt(out, NULL, in, n, ad, ad_len, NULL, nonce,
                                             key) ? SF_EINVAL : 0;
    return SF_ENOTSUP;
}

static int port_open(void *ctx, uint32_t aead, uint8_t *out, const uint8_t *in, uint32_t n,
                     const uint8_t *ad, uint32_t ad_len, const uint8_t *nonce,
                     const uint8_t *key)
{
    (void)ctx;
    if (n < SF_CIPHER_TAG)
        return SF_ECORRUPT;
    if (aead == SF_AEAD_XCHACHA20_POLY1305)
        return crypto_aead_xchacha20poly1305_ietf_decrypt(out, NULL, NULL, in, n, ad, ad_len,
                                                          nonce, key) ? SF_ECORRUPT : 0;
    if (aead == SF_AEAD_AES256_GCM && crypto_aead_aes256gcm_is_available())
        return crypto_aead_aes256gcm_decrypt(out, NULL, NULL, in, n, ad, ad_len, nonce,
                                             key) ? SF_ECORRUPT : 0;
    return SF_ENOTSUP;
}

static int port_key_seal(void *ctx, uint8_t *sealed80, const uint8_t *key32,
                         const uint8_t *pub32)
{
    (void)ctx;
    return crypto_box_seal(sealed80, key32, SF_CIPHER_KEY, pub32) ? SF_EINVAL : 0;
}

static int port_key_open(void *ctx, uint8_t *key32, const uint8_t *sealed80,
                         const uint8_t *pub32, const uint8_t *sec32)
{
    (void)ctx;
    return crypto_box_seal_open(key32, sealed80, SF_CIPHER_SEALED, pub32, sec32) ?
           SF_ECORRUPT : 0;
}

static const struct sf_cipher_port sodium_port = {
    .ctx = NULL, .random = port_random, .aead_seal = port_seal, .aead_open = port_open,
    .key_seal = port_key_seal, .key_open = port_key_open,
};

/* The sizes cipher.h fixes are libsodium's. */
_Static_assert(crypto_box_SEALBYTES + SF_CIPHER_KEY == SF_CIPHER_SEALED, "sealed box size");
_Static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == SF_CIPHER_NONCE, "nonce size");
_Static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == SF_CIPHER_TAG, "tag size");
_Static_assert(crypto_aead_aes256gcm_ABYTES == SF_CIPHER_TAG, "tag size");
_Static_assert(crypto_box_PUBLICKEYBYTES == SF_CIPHER_KEY, "key size");

const struct sf_cipher_port *sf_sodium_port(void)
{
    return ready() ? &sodium_port : NULL;
}

int sf_sodium_keypair(uint8_t *pub32, uint8_t *sec32)
{
    if (!ready())
        return SF_ENOTSUP;
    return crypto_box_keypair(pub32, sec32) ? SF_EINVAL : 0;
}

int sf_sodium_public_of(const uint8_t *sec32, uint8_t *pub32)
{
    if (!ready())
        return SF_ENOTSUP;
    return crypto_scalarmult_base(pub32, sec32) ? SF_EINVAL : 0;
}

void sf_sodium_wipe(void *p, size_t n)
{
    sodium_memzero(p, n);
}

#else /* no libsodium in this build */

const struct sf_cipher_port *sf_sodium_port(void)
{
    return NULL;
}

int sf_sodium_aead_available(uint32_t aead)
{
    (void)aead;
    return 0;
}

int sf_sodium_keypair(uint8_t *pub32, uint8_t *sec32)
{
    (void)pub32;
    (void)sec32;
    return SF_ENOTSUP;
}

int sf_sodium_public_of(const uint8_t *sec32, uint8_t *pub32)
{
    (void)sec32;
    (void)pub32;
    return SF_ENOTSUP;
}

void sf_sodium_wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

#endif
