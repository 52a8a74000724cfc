/* `streamfat log --config FILE.json` and `--print-config` (log_config.c has the rules). */
#ifndef SF_CLI_LOG_CONFIG_H
#define SF_CLI_LOG_CONFIG_H

#include <getopt.h>

/* Without --config: 0 with *out_argc = argc and *out_argv NULL (use argv). With it: 0 and
 * a new argument vector (the file's options, then the command line's; free it with
 * log_config_free), or CLI_USAGE / CLI_ERR after printing one line naming the key or the
 * problem. */
int log_config_merge(int argc, char **argv, const struct option *longopts, int *out_argc,
                     char ***out_argv);
void log_config_free(int argc, char **argv);
/* The effective configuration of an argument vector as a JSON object on standard output. */
int log_config_print(int argc, char **argv, const struct option *longopts,
                     const char *target);

#endif
