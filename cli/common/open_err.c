/* One form for every host file a command cannot open (issue 26): "PATH: cannot open: no
 * such file or directory", as target_open words it for an image (sf_strerror's lower-case
 * texts), whether the file is an image, an input to export or put, a file: source or a
 * --config file. */
#include "cli.h"

#include <ctype.h>
#include <string.h>

const char *cli_errno_text(int errnum)
{
    static _Thread_local char buf[128];        /* file: sources open in producer threads */
    const char *s = strerror(errnum);
    size_t n = strlen(s);

    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    /* "No such file" -> "no such file"; an all-capital word (an acronym) stays */
    if (n > 1 && isupper((unsigned char)buf[0]) && !isupper((unsigned char)buf[1]))
        buf[0] = (char)tolower((unsigned char)buf[0]);
    return buf;
}

void cli_open_err(const char *path, int errnum)
{
    cli_err("%s: cannot open: %s", path, cli_errno_text(errnum));
}
