/* The busiest-ids table of streamfat report: every (channel, id) seen, with its count, first
 * and last time and its period statistics (minimum, maximum, and the sum of squares that
 * gives the jitter, the standard deviation of the period). An open-addressing hash table
 * that doubles up to RID_MAX entries; frames of further ids are only counted, so memory
 * stays bounded whatever the log holds. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#define RID_CAP0 1024u

int rid_init(struct rid_table *t)
{
    memset(t, 0, sizeof *t);
    t->slot = calloc(RID_CAP0, sizeof *t->slot);
    if (!t->slot)
        return -1;
    t->cap = RID_CAP0;
    return 0;
}

static uint32_t hash(uint64_t k)
{
    k *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 32);
}

static struct rid *find(struct rid *slot, uint32_t cap, uint64_t key)
{
    uint32_t i = hash(key) & (cap - 1);

    while (slot[i].key && slot[i].key != key)
        i = (i + 1) & (cap - 1);
    return &slot[i];
}

static int grow(struct rid_table *t)
{
    uint32_t cap = t->cap * 2;
    struct rid *s = calloc(cap, sizeof *s);

    if (!s)
        return -1;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slot[i].key)
            *find(s, cap, t->slot[i].key) = t->slot[i];
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return 0;
}

int rid_add(struct rid_table *t, uint8_t ch, uint32_t id, int eff, uint64_t ts, uint8_t len,
            int fd)
{
    uint64_t key = ((uint64_t)ch << 32 | (uint64_t)(eff ? 1u : 0u) << 31 | id) + 1;
    struct rid *e = find(t->slot, t->cap, key);

    if (!e->key) {
        if (t->n >= RID_MAX) {
            t->untracked++;
            return 0;
        }
        /* keep the load at most one half: probes stay short */
        if ((t->n + 1) * 2 > t->cap) {
            if (grow(t))
                return -1;
            e = find(t->slot, t->cap, key);
        }
        e->key = key;
        e->first = ts;
        e->dt_min = UINT64_MAX;
        t->n++;
    } else {
        /* records of one channel are in time order (docs/FORMAT.md); a clock set back
         * gives no period */
        uint64_t dt = ts >= e->last ? ts - e->last : 0;
        double d = (double)dt;
        if (dt < e->dt_min)
            e->dt_min = dt;
        if (dt > e->dt_max)
            e->dt_max = dt;
        e->dt_sq += d * d;
    }
    e->count++;
    e->last = ts;
    if (len > e->len_max)
        e->len_max = len;
    e->fd |= (uint8_t)(fd != 0);
    return 0;
}

static int by_count(const void *a, const void *b)
{
    const struct rid *x = *(const struct rid *const *)a, *y = *(const struct rid *const *)b;

    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return x->key < y->key ? -1 : x->key > y->key;
}

struct rid **rid_top(const struct rid_table *t, unsigned *n)
{
    struct rid **v = malloc((t->n ? t->n : 1) * sizeof *v);
    unsigned k = 0;

    if (!v)
        return NULL;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slot[i].key)
            v[k++] = &t->slot[i];
    qsort(v, k, sizeof *v, by_count);
    if (*n > k)
        *n = k;
    return v;
}

void rid_free(struct rid_table *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}
