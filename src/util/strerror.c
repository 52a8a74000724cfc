/* sf_strerror: a short English name for every enum sf_err. */
#include "streamfat/sf.h"

const char *sf_strerror(int err)
{
    switch (err) {
    case SF_OK:           return "success";
    case SF_EPERM:        return "operation not permitted";
    case SF_ENOENT:       return "no such file or directory";
    case SF_EIO:          return "I/O error";
    case SF_EBADF:        return "bad file handle";
    case SF_ENOMEM:       return "buffer too small";
    case SF_EBUSY:        return "device or file busy";
    case SF_EEXIST:       return "file exists";
    case SF_ENOTDIR:      return "not a directory";
    case SF_EISDIR:       return "is a directory";
    case SF_EINVAL:       return "invalid argument";
    case SF_EFBIG:        return "file too large";
    case SF_ENOSPC:       return "no space left on volume";
    case SF_EROFS:        return "read-only volume";
    case SF_ENAMETOOLONG: return "name too long";
    case SF_ENOTEMPTY:    return "directory not empty";
    case SF_ENOTSUP:      return "not supported";
    case SF_ETIMEDOUT:    return "device timed out";
    case SF_ECORRUPT:     return "file system is corrupt";
    case SF_EBADNAME:     return "invalid name (empty, . or .., a control character, one of "
                                 "\" * / : < > ? \\ |, or a dot or space at the end)";
    default:              return "unknown error";
    }
}
