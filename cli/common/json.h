/* Minimal JSON output for --json: strings escaped per RFC 8259, nothing else needed. */
#ifndef SF_CLI_JSON_H
#define SF_CLI_JSON_H

#include <stdio.h>
#include <stdint.h>

/* Print s as a quoted JSON string. Bytes that are not valid UTF-8 are replaced by U+FFFD,
 * so the output is always valid JSON whatever the volume holds. */
void json_str(FILE *out, const char *s);
/* "key": "value" / "key": number, preceded by ", " unless *first (which is then cleared). */
void json_kv_str(FILE *out, int *first, const char *key, const char *value);
void json_kv_u64(FILE *out, int *first, const char *key, uint64_t value);
void json_kv_i64(FILE *out, int *first, const char *key, int64_t value);
void json_kv_bool(FILE *out, int *first, const char *key, int value);

#endif
