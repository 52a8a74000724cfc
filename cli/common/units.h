/* Parsing of sizes, rates and durations on the command line, one convention everywhere
 * (docs: ARCHITECTURE.md, "Units on the command line"):
 *
 *   sizes      N        bytes
 *              NK NM NG NT, NKiB NMiB NGiB NTiB   powers of 1024
 *              NKB NMB NGB NTB                    powers of 1000
 *              NB                                  bytes
 *   rates      NB/s, N{K,M,G,T}B/s (powers of 1000), N{Ki,Mi,Gi,Ti}B/s (powers of 1024)
 *   durations  N (seconds), Nms, Ns, Nm, Nh
 *
 * N may have a decimal fraction ("1.5G", "0.25s") as long as the result is a whole number
 * of the base unit (bytes, bytes per second, nanoseconds). Signs, spaces, empty strings,
 * unknown suffixes and values beyond 2^64 - 1 are refused. */
#ifndef SF_CLI_UNITS_H
#define SF_CLI_UNITS_H

#include <stdint.h>

/* Each returns 0 with *out set, or -1 with *why pointing to a static English text
 * ("unknown suffix 'X' (use K, M, G, T, KiB..TiB or KB..TB)"). */
int units_parse_size(const char *s, uint64_t *out, const char **why);
int units_parse_rate(const char *s, uint64_t *bytes_per_s, const char **why);
int units_parse_duration(const char *s, uint64_t *ns, const char **why);

/* Human-readable size with a binary unit, e.g. "64 MiB", "1.5 GiB", "4095 B".
 * Writes at most n bytes (n >= 16 is always enough); returns buf. */
char *units_format_size(uint64_t bytes, char *buf, unsigned n);

/* Defined here, declared in cli.h (every command has it): a plain count. */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

#endif
