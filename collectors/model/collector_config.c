/*
 * collector_config.c - the deep copy and free of a collector_config; see collector_config.h.
 */
#include "collectors/model/collector_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    return d ? memcpy(d, s, n) : NULL;
}

/* Where the lists of a collector_config and their counts are, so that copy and free walk them
 * all in one loop and a list added to the struct is one row here. */
static const struct {
    size_t list, n;
} lists[] = {
#define LIST(name)                                                                                 \
    {                                                                                              \
        offsetof(struct collector_config, name), offsetof(struct collector_config, n_##name)       \
    }
    LIST(disk_include), LIST(disk_exclude), LIST(net_include),
    LIST(net_exclude),  LIST(pdh_counters),
#undef LIST
};

#define NLISTS (sizeof(lists) / sizeof(lists[0]))

static const char **list_of(const struct collector_config *c, size_t k, size_t **n)
{
    char *base = (char *)c; /* the caller's constness: src is only read */

    *n = (size_t *)(base + lists[k].n);
    return (const char **)(base + lists[k].list);
}

void collector_config_free(struct collector_config *c)
{
    if (!c)
        return;
    free((char *)c->root);
    for (size_t k = 0; k < NLISTS; k++) {
        size_t *n;
        const char **list = list_of(c, k, &n);

        for (size_t i = 0; i < *n; i++)
            free((char *)list[i]);
    }
    memset(c, 0, sizeof(*c));
}

int collector_config_copy(struct collector_config *dst, const struct collector_config *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->root && !(dst->root = dup_str(src->root)))
        return -ENOMEM;
    for (size_t k = 0; k < NLISTS; k++) {
        size_t *nsrc, *ndst, n;
        const char *const *from = list_of(src, k, &nsrc);
        const char **to = list_of(dst, k, &ndst);

        n = *nsrc < COLLECTOR_MAX_GLOBS ? *nsrc : COLLECTOR_MAX_GLOBS;
        /* Counted as they are made, so a failure leaves what was copied to the free below. */
        for (*ndst = 0; *ndst < n; (*ndst)++)
            if (!(to[*ndst] = dup_str(from[*ndst]))) {
                collector_config_free(dst);
                return -ENOMEM;
            }
    }
    return 0;
}
