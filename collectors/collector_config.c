/*
 * collector_config.c - the deep copy and free of a collector_config; see collector_config.h.
 */
#include "collector_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    return d ? memcpy(d, s, n) : NULL;
}

/* Copy n strings into dst, counting them in *ndst as they are made, so that a failure leaves what
 * was copied for collector_config_free. 0 or -ENOMEM. */
static int copy_list(const char **dst, size_t *ndst, const char *const *src, size_t n)
{
    if (n > COLLECTOR_MAX_GLOBS)
        n = COLLECTOR_MAX_GLOBS;
    for (*ndst = 0; *ndst < n; (*ndst)++)
        if (!(dst[*ndst] = dup_str(src[*ndst])))
            return -ENOMEM;
    return 0;
}

static void free_list(const char **list, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free((char *)list[i]);
    *n = 0;
}

int collector_config_copy(struct collector_config *dst, const struct collector_config *src)
{
    memset(dst, 0, sizeof(*dst));
    if ((src->root && !(dst->root = dup_str(src->root))) ||
        copy_list(dst->disk_include, &dst->n_disk_include, src->disk_include, src->n_disk_include) <
            0 ||
        copy_list(dst->disk_exclude, &dst->n_disk_exclude, src->disk_exclude, src->n_disk_exclude) <
            0 ||
        copy_list(dst->net_include, &dst->n_net_include, src->net_include, src->n_net_include) <
            0 ||
        copy_list(dst->net_exclude, &dst->n_net_exclude, src->net_exclude, src->n_net_exclude) <
            0 ||
        copy_list(dst->pdh_counters, &dst->n_pdh_counters, src->pdh_counters, src->n_pdh_counters) <
            0) {
        collector_config_free(dst);
        return -ENOMEM;
    }
    return 0;
}

void collector_config_free(struct collector_config *c)
{
    if (!c)
        return;
    free((char *)c->root);
    free_list(c->disk_include, &c->n_disk_include);
    free_list(c->disk_exclude, &c->n_disk_exclude);
    free_list(c->net_include, &c->n_net_include);
    free_list(c->net_exclude, &c->n_net_exclude);
    free_list(c->pdh_counters, &c->n_pdh_counters);
    memset(c, 0, sizeof(*c));
}
