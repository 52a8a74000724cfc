/* Files that only an interruption leaves behind, which repair removes (docs/FSCK.md,
 * "Leftovers"):
 * - the temporary copy of a replace cut short: ".NAME.sftmp" (docs/DESIGN.md, "Replacing a
 *   file"). The swap never lets this file and the one it replaces share clusters, and the
 *   old file stays whole until the swap's single entry write, so the temporary file is never
 *   the only copy: removing it (its clusters become leaks) loses nothing that was promised;
 * - an empty log file (*.SFL of size 0): a file prepared ahead of a rotation, or one whose
 *   start failed, when the cut came before its first checkpoint. With no header block there
 *   is no file_id, so recovery (recover.c) cannot attach anything to it either.
 * The callers (check_exfat.c, check_fat.c) remove the entry before its chain is walked, so
 * its clusters are left for the leak pass. */
#include "check_int.h"

static uint16_t lower(uint16_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint16_t)(c - 'A' + 'a') : c;
}

const char *chk_leftover(const uint16_t *name, uint32_t len, int isdir, uint64_t size)
{
    static const char suffix[] = ".sftmp";
    const uint32_t sl = sizeof suffix - 1;
    if (isdir)
        return 0;
    if (len > sl + 1 && name[0] == '.') {
        uint32_t i = 0;
        while (i < sl && lower(name[len - sl + i]) == (uint16_t)suffix[i])
            i++;
        if (i == sl)
            return "temporary copy left by an interrupted replace";
    }
    if (size == 0 && chk_is_log_name(name, len))
        return "empty log file without a header block";
    return 0;
}
