/*
 * thread_prio.h - scheduling priority of the calling thread, per platform (thread_prio_posix.c,
 * thread_prio_windows.c). Both log what they got; a refusal changes nothing else.
 */
#ifndef PERFLOG_THREAD_PRIO_H
#define PERFLOG_THREAD_PRIO_H

/* Raise the sampler thread above ordinary work. rt_priority 1..99 asks for a real-time class
 * where the platform has one, 0 for the platform's "above normal" level. */
void thread_prio_sampler(int rt_priority);

/* Lower the calling thread (nice value `nice`, > 0) so it yields to the sampler and the writer. */
void thread_prio_lower(int nice);

#endif
