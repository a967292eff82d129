/*
 * mem.h - the process's heap: how many malloc arenas it may use, giving freed memory back to the
 * system, and how much is in use (mem_posix.c: glibc's malloc; elsewhere these do nothing and the
 * figure is unknown). Thread-safe.
 */
#ifndef PERFLOG_MEM_H
#define PERFLOG_MEM_H

#include <stdint.h>

/*
 * Let malloc use at most `arenas` (>= 1) arenas. glibc otherwise gives threads that contend their
 * own arena, up to eight per core, and each keeps the free memory of its peak to itself. Call on
 * the main thread before starting any other thread.
 */
void mem_limit_arenas(int arenas);

/* Ask for a mem_trim_if_asked: a thread that just freed a large answer calls this, one that is
 * idle anyway does the work. */
void mem_trim_ask(void);

/* When asked since the last call, give free heap memory back to the system (the pages of freed
 * chunks, in every arena). Returns 1 when it trimmed, else 0. */
int mem_trim_if_asked(void);

/*
 * Unmap from this process the resident pages of the private read-only file mappings with no
 * private copies (the code and constant data of the binary and its shared libraries) whose file
 * name starts with one of `names` (NULL-terminated), or of every file when `names` is NULL. For
 * code that ran and will not run again: libraries loaded only because another one needs them,
 * the start-up's code. The pages stay in the page cache; a later access maps them back from there
 * (madvise(2) MADV_DONTNEED on a private mapping with no private pages loses nothing), so what
 * stays resident afterwards is what runs. Returns the KiB that were resident in those mappings, 0
 * where the platform has no such call.
 */
int64_t mem_drop_library_pages(const char *const *names);

/* Bytes malloc has handed out and not had back, in every arena; -1 when the platform cannot say. */
int64_t mem_heap_in_use(void);

#endif
