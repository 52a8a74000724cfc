/* A run of `streamfat log` that logged nothing leaves nothing (issue 26, item 4): the names
 * in the log directory are taken before the log starts, and when no source delivered a single
 * record the files the run created (its header-only log files, on rotation every one of
 * them) are removed after the log is closed. Files that were there before are never touched;
 * a run with any record removes nothing. */
#ifndef SF_CLI_LOG_SWEEP_H
#define SF_CLI_LOG_SWEEP_H

#include <stddef.h>

struct sf_vol;

struct log_names {
    char **v;                /* names (malloc'd) of the entries in dir before the run */
    size_t n;
    size_t dir_existed;      /* length of the longest prefix of dir that was there before:
                                the directories below it were made by the run and are
                                removed again when left empty */
};

/* The names in dir (NULL or "": the root) now. 0, or -1 after printing an error. */
int log_names_take(struct sf_vol *vol, const char *target, const char *dir,
                   struct log_names *before);
/* Remove every file in dir that is not in before, and the directories the run created for
 * dir when they are empty. Returns the number of files removed, or -1 after printing an error. */
long log_names_sweep(struct sf_vol *vol, const char *target, const char *dir,
                     const struct log_names *before);
void log_names_free(struct log_names *names);

#endif
