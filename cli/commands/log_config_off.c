/* `streamfat log --config` and `--print-config` in a build without cJSON (CMakeLists.txt
 * takes this file when libcjson is not installed, as in a cross build): both are refused
 * in one line; every other option works as usual. log_config.c is the real one. */
#include "log_config.h"

#include <string.h>

#include "cli.h"

static const char *config_option(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strncmp(argv[i], "--config", 8) && (argv[i][8] == 0 || argv[i][8] == '='))
            return "--config";
        if (!strcmp(argv[i], "--print-config"))
            return "--print-config";
    }
    return NULL;
}

int log_config_merge(int argc, char **argv, const struct option *longopts, int *out_argc,
                     char ***out_argv)
{
    const char *opt = config_option(argc, argv);
    (void)longopts;
    if (opt)
        return cli_usage("%s: this streamfat was built without cJSON (libcjson-dev)", opt);
    *out_argc = argc;
    *out_argv = NULL;
    return 0;
}

void log_config_free(int argc, char **argv)
{
    (void)argc;
    (void)argv;
}

int log_config_print(int argc, char **argv, const struct option *longopts,
                     const char *target)
{
    (void)argc;
    (void)argv;
    (void)longopts;
    (void)target;
    return cli_usage("--print-config: this streamfat was built without cJSON (libcjson-dev)");
}
