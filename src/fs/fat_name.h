/* FAT short (8.3) names: validity, the NT case byte, alias generation with numeric tails,
 * the long-name checksum, and decoding of OEM (code page 437) bytes. Pure functions over
 * names: no volume, no I/O.
 *
 * An 8.3 name is kept as on disk: 11 bytes, base (8) then extension (3), space padded,
 * without the dot. */
#ifndef SF_FS_FAT_NAME_H
#define SF_FS_FAT_NAME_H

#include <stdint.h>

#define FAT_SFN_LEN 11          /* bytes of an on-disk 8.3 name */
#define FAT_SFN_MAX_CHARS 12    /* "BASENAME.EXT" decoded */
#define FAT_TAIL_MAX 999999u    /* largest numeric tail, "~999999" */

/* The checksum of an 8.3 name that every long-name entry of its file carries. */
uint8_t fat_lfn_checksum(const uint8_t sfn[FAT_SFN_LEN]);

/* Unicode for an OEM byte (code page 437; bytes below 0x80 are ASCII). */
uint16_t fat_cp437(uint8_t b);

/* Decode an on-disk 8.3 name: trailing spaces trimmed, 0x05 read as 0xE5, lower case where
 * the NT case byte (DIR_NTRES) says so, "BASE" or "BASE.EXT". out holds FAT_SFN_MAX_CHARS
 * units; returns the length (0 for an all-space name). */
uint32_t fat_sfn_decode(const uint8_t sfn[FAT_SFN_LEN], uint8_t ntres, uint16_t *out);

/* Does `name` need no long-name entries? 1 when it is a valid 8.3 name of characters legal
 * in short names whose base and extension are each all upper or all lower case: sfn and
 * *ntres (the NT case byte) are set. 0 otherwise. */
int fat_sfn_exact(const uint16_t *name, uint32_t len, uint8_t sfn[FAT_SFN_LEN], uint8_t *ntres);

/* The basis of an alias for a long name (Microsoft's FAT specification, "Basis-Name
 * Generation"): upper case, spaces and leading periods dropped, characters that a short
 * name cannot hold replaced by '_', base up to the first period (8 at most), extension
 * after the last period (3 at most). Returns 1 when the name "fits": it converted
 * without loss and the basis spells the same name up to case, so the basis itself may be
 * the alias when it is unique; 0 when a numeric tail is required. */
int fat_sfn_basis(const uint16_t *name, uint32_t len, uint8_t basis[FAT_SFN_LEN]);

/* The basis with numeric tail "~n" (1 <= n <= FAT_TAIL_MAX): the base is cut so that base
 * plus tail fit in 8 characters ("LONGFI~1", "LONGF~10"). */
void fat_sfn_tail(const uint8_t basis[FAT_SFN_LEN], uint32_t n, uint8_t out[FAT_SFN_LEN]);

/* Is sfn the basis with some numeric tail? 1 with *n set, else 0. */
int fat_sfn_tail_of(const uint8_t basis[FAT_SFN_LEN], const uint8_t sfn[FAT_SFN_LEN],
                    uint32_t *n);

/* Directory entries a name needs: 1 for an exact 8.3 name, else its long-name entries
 * (13 characters each) plus the 8.3 entry. */
uint32_t fat_name_entries(const uint16_t *name, uint32_t len);

#endif
