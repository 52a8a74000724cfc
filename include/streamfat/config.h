/* Compile-time feature options of the core (docs/PORTING.md, "Build options").
 *
 * Each option drops whole source files; CMake does the dropping and defines the macro, so
 * with CMake set -DSF_FAT=OFF etc. and nothing else. A firmware that compiles the sources
 * in its own build leaves out the same files and defines the same macros:
 *
 *   macro            CMake option       files left out               the call that remains
 *   SF_NO_FAT        -DSF_FAT=OFF       src/fs/fat_*.c               mounting a FAT volume or
 *                                       (src/fs/fat_off.c instead)   sf_mkfs of FAT: SF_ENOTSUP
 *   SF_NO_EXFAT      -DSF_EXFAT=OFF     src/fs/exfat_{vol,alloc,dir}.c   the same for exFAT
 *                                       (src/fs/exfat_off.c instead)
 *   SF_NO_MKFS       -DSF_MKFS=OFF      src/fs/exfat_mkfs.c and      sf_mkfs: SF_ENOTSUP
 *                                       fat_mkfs.c (mkfs_off.c in)
 *   SF_NO_LOG        -DSF_LOG=OFF       src/log/ but the record      sf_log_*: not defined
 *                                       codec (rec.c, decode.c)
 *   SF_NO_CHECK      -DSF_CHECK=OFF     src/check/                   sf_check: not defined
 *   SF_READONLY      -DSF_READONLY=ON   src/stream/, and as above    opening for writing,
 *                                       mkfs, log, check             mkdir, unlink, rename:
 *                                                                    SF_EROFS
 *   SF_NO_GPT        -DSF_GPT=OFF       src/fs/part_gpt.c            mounting a GPT disk, mkfs
 *                                       (part_gpt_off.c instead)     with GPT: SF_ENOTSUP (SD
 *                                                                    cards are MBR by the spec)
 *   SF_NO_LOG_TRIGGER -DSF_LOG_TRIGGER=OFF  src/log/trigger.c         sf_log_open with pre_bytes,
 *                                       (trigger_off.c instead)      pre_ns or post_ns, and
 *                                                                    sf_log_trigger: SF_ENOTSUP
 *   SF_NO_LOG_CONTROL -DSF_LOG_CONTROL=OFF  src/log/control.c       sf_log_open with
 *                                       (control_off.c instead)      sf_log_control: SF_ENOTSUP
 *   SF_NO_MESSAGES   -DSF_MESSAGES=OFF  no file left out: sf_vol.why  every check stays; a failed
 *                                       holds one generic text       mount says only that it
 *                                       instead of a reason per      failed (the error code
 *                                       check (fs/fs.h, SF_WHY)      still says how)
 *   SF_NO_LFN        -DSF_LFN=OFF       no file left out: FAT        creating a FAT entry whose
 *                                       entries get 8.3 names only;  name is not an exact 8.3
 *                                       without exFAT the up-case    name: SF_ENOTSUP; long
 *                                       table goes too (ASCII        names on the volume are
 *                                       case folding)                still read and found
 *   SF_SMALL_TABLES  -DSF_SMALL_TABLES=ON  no file left out: CRC-32C keeps one 16-entry
 *                    (default ON on        table (64 bytes) instead of sixteen 256-entry
 *                    bare metal)           ones (16 KiB) and goes a nibble at a time
 *
 * Read-only keeps the write paths' code out of a linked program: every entry point that
 * would write fails before reaching it, so --gc-sections drops it. */
#ifndef STREAMFAT_CONFIG_H
#define STREAMFAT_CONFIG_H

#ifdef SF_NO_FAT
#define SF_HAVE_FAT 0
#else
#define SF_HAVE_FAT 1
#endif

#ifdef SF_NO_EXFAT
#define SF_HAVE_EXFAT 0
#else
#define SF_HAVE_EXFAT 1
#endif

#ifdef SF_READONLY
#define SF_HAVE_WRITE 0
#else
#define SF_HAVE_WRITE 1
#endif

#if defined(SF_NO_MKFS) || defined(SF_READONLY)
#define SF_HAVE_MKFS 0
#else
#define SF_HAVE_MKFS 1
#endif

#if defined(SF_NO_LOG) || defined(SF_READONLY)
#define SF_HAVE_LOG 0
#else
#define SF_HAVE_LOG 1
#endif

#if defined(SF_NO_CHECK) || defined(SF_READONLY)
#define SF_HAVE_CHECK 0
#else
#define SF_HAVE_CHECK 1
#endif

#ifdef SF_NO_GPT
#define SF_HAVE_GPT 0
#else
#define SF_HAVE_GPT 1
#endif

#ifdef SF_NO_LOG_TRIGGER
#define SF_HAVE_LOG_TRIGGER 0
#else
#define SF_HAVE_LOG_TRIGGER 1
#endif

#ifdef SF_NO_LOG_CONTROL
#define SF_HAVE_LOG_CONTROL 0
#else
#define SF_HAVE_LOG_CONTROL 1
#endif

#ifdef SF_NO_MESSAGES
#define SF_HAVE_MESSAGES 0
#else
#define SF_HAVE_MESSAGES 1
#endif

#ifdef SF_NO_LFN
#define SF_HAVE_LFN 0
#else
#define SF_HAVE_LFN 1
#endif

/* SF_NO_XLINK_CHECK (a compiler flag, no CMake option): data writes are not checked against
 * the metadata cache for a file cross-linked with a directory on a corrupt volume
 * (docs/RELIABILITY.md); about 780 bytes of a Cortex-M4 build. The tiny set leaves it out
 * (scripts/size.sh); a read-only core has no data writes. */
#if defined(SF_NO_XLINK_CHECK) || defined(SF_READONLY)
#define SF_HAVE_XLINK_CHECK 0
#else
#define SF_HAVE_XLINK_CHECK 1
#endif

#if !SF_HAVE_FAT && !SF_HAVE_EXFAT
#error "streamfat: SF_NO_FAT and SF_NO_EXFAT together leave no file system"
#endif

#endif
