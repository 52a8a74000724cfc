/* Never format over data by accident: what every command that formats (mkfs, log --mkfs,
 * demo) asks before it writes a boot sector (docs/FAT.md, "What mkfs refuses").
 *
 * A target may be formatted without --force when it does not exist, is empty, or its first
 * MiB (the whole target when smaller) is all zeros. Anything else is refused with one line
 * saying what is there: a FAT or exFAT volume (type, label, number of logs), an MBR or GPT
 * partition table (number of partitions, and the volume inside), a file system we do not
 * read (ext2/3/4, NTFS, XFS, btrfs, LUKS, swap, ISO 9660, squashfs), or unknown data (the
 * offset of the first non-zero byte). */
#ifndef SF_CLI_FORMAT_GUARD_H
#define SF_CLI_FORMAT_GUARD_H

#include <stddef.h>

/* Describe what target holds into what (e.g. "an exFAT volume (label LOGS, 2 logs)"):
 * 2 when it holds a FAT or exFAT volume that mounts (a log can be written onto it), 1 when
 * it holds anything else formatting would destroy or its first MiB cannot be read, 0 when
 * it may be formatted (missing, empty, all zeros) or cannot be opened at all (the caller's
 * own open reports why). Prints nothing. */
int format_guard_look(const char *target, char *what, size_t n);

/* The check itself: 0 when target may be formatted, else CLI_ERR after one line
 * "TARGET: holds WHAT: not formatted; LOG_HINT, --force erases it", LOG_HINT (how to log
 * onto the volume as it is, in the calling command's words) only for a volume that mounts. */
int format_guard(const char *target, const char *log_hint);

#endif
