/* streamfat: log data to FAT32/exFAT volumes on flash storage.
 *
 * Umbrella header, error codes and library version. Every public call returns 0 or a
 * negative enum sf_err; calls that return a count return sf_ssize_t (count or error).
 *
 * Threading: the library takes no locks and holds no globals. One volume and everything
 * opened on it (files, directory iterators) belong to one thread at a time; the caller
 * serialises. Different volumes are independent. */
#ifndef STREAMFAT_SF_H
#define STREAMFAT_SF_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"     /* feature options: SF_HAVE_FAT, SF_HAVE_WRITE, ... */

#ifdef __cplusplus
extern "C" {
#endif

/* Semantic version of the library API and ABI (docs/DESIGN.md, "Versioning"). */
#define SF_VERSION_MAJOR 0
#define SF_VERSION_MINOR 1
#define SF_VERSION_PATCH 0
#define SF_VERSION_STRING "0.1.0"

/* A size or a negative error, so one call can return both. */
typedef int64_t sf_ssize_t;

/* Negated errno numbers, so they read naturally on POSIX and need no table there. */
enum sf_err {
    SF_OK = 0,
    SF_EPERM = -1,      /* operation not permitted (read-only volume, root directory) */
    SF_ENOENT = -2,     /* no such file or directory */
    SF_EIO = -5,        /* the device reported an error */
    SF_EBADF = -9,      /* handle not open, or not open for this operation */
    SF_ENOMEM = -12,    /* the memory the caller passed in is too small */
    SF_EBUSY = -16,     /* device in use (mounted elsewhere), or file already open for writing */
    SF_EEXIST = -17,    /* name exists */
    SF_ENOTDIR = -20,   /* a path component is not a directory */
    SF_EISDIR = -21,    /* is a directory */
    SF_EINVAL = -22,    /* invalid argument */
    SF_EFBIG = -27,     /* file too large for the file system */
    SF_ENOSPC = -28,    /* volume full */
    SF_EROFS = -30,     /* volume mounted read-only */
    SF_ENAMETOOLONG = -36,
    SF_ENOTEMPTY = -39, /* directory not empty */
    SF_ENOTSUP = -95,   /* not supported by this device or file system */
    SF_ETIMEDOUT = -110,/* the device did not answer in time */
    SF_ECORRUPT = -84,  /* the medium fails validation (EILSEQ) */
    SF_EBADNAME = -1001,/* a name is empty, "." or "..", or holds a forbidden character */
                        /* (a new name also when it ends in a dot or a space) */
};

/* Short English name of an error ("I/O error"); never NULL. */
const char *sf_strerror(int err);

#ifdef __cplusplus
}
#endif

#include "bdev.h"
#include "vol.h"

#endif
