/*
 * follow.c - the set of followed roots; see follow.h.
 *
 * A slot is free when its `seq` is even and its run id 0. A writer makes `seq` odd, writes the
 * fields, and makes it even again (a seqlock per slot); a reader retries a slot whose `seq` was odd
 * or changed while it read (a few times at most), so it never mixes two runs. Writers hold `lock`
 * (only among themselves).
 */
#include "daemon/runs/follow.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SNAPSHOT_TRIES 64

struct follow_slot {
    _Atomic unsigned seq;
    _Atomic int64_t run_id; /* 0: free */
    _Atomic int pid;
    _Atomic int64_t since_wall_ms;
};

struct follow_set {
    pthread_mutex_t lock; /* serialises writers */
    struct follow_slot slot[COLLECTOR_MAX_ROOTS];
};

struct follow_set *follow_set_new(void)
{
    struct follow_set *f = calloc(1, sizeof(*f));

    if (f)
        pthread_mutex_init(&f->lock, NULL);
    return f;
}

void follow_set_free(struct follow_set *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static void slot_write(struct follow_slot *s, int64_t run_id, int pid, int64_t since_wall_ms)
{
    atomic_fetch_add(&s->seq, 1); /* odd: being written */
    atomic_store(&s->run_id, run_id);
    atomic_store(&s->pid, pid);
    atomic_store(&s->since_wall_ms, since_wall_ms);
    atomic_fetch_add(&s->seq, 1);
}

int follow_add(struct follow_set *f, int64_t run_id, int pid, int64_t since_wall_ms)
{
    int rc = -ENOSPC;

    if (run_id <= 0 || pid <= 0)
        return -EINVAL;
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < COLLECTOR_MAX_ROOTS; i++)
        if (atomic_load(&f->slot[i].run_id) == 0) {
            slot_write(&f->slot[i], run_id, pid, since_wall_ms);
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

void follow_remove(struct follow_set *f, int64_t run_id)
{
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < COLLECTOR_MAX_ROOTS; i++)
        if (atomic_load(&f->slot[i].run_id) == run_id)
            slot_write(&f->slot[i], 0, 0, 0);
    pthread_mutex_unlock(&f->lock);
}

size_t follow_snapshot(struct follow_set *f, struct collector_proc_root *out, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < COLLECTOR_MAX_ROOTS && n < cap; i++) {
        struct follow_slot *s = &f->slot[i];
        unsigned before, after;
        int64_t run_id, since;
        int pid, tries = 0;

        /* A writer preempted mid-slot must not make the sampler spin: after a few tries the
         * slot is left for the next tick. */
        do {
            before = atomic_load(&s->seq);
            run_id = atomic_load(&s->run_id);
            pid = atomic_load(&s->pid);
            since = atomic_load(&s->since_wall_ms);
            after = atomic_load(&s->seq);
        } while (((before & 1u) || before != after) && ++tries < SNAPSHOT_TRIES);
        if (tries < SNAPSHOT_TRIES && run_id && pid > 0)
            out[n++] = (struct collector_proc_root){.pid = pid, .since_wall_ms = since};
    }
    return n;
}
