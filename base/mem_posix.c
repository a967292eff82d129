/*
 * mem_posix.c - the heap through glibc's malloc (mallopt(3), malloc_trim(3), mallinfo2(3)); with
 * another C library these do nothing and the heap in use is unknown. A sanitizer build's heap in
 * use is its allocator's own count.
 */
#include "base/mem.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* A sanitizer build allocates through the sanitizer's own malloc, which glibc cannot count; its
 * count instead (sanitizer/allocator_interface.h, which gcc does not install). */
#define MEM_SANITIZER_HEAP 1
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

static atomic_int trim_asked;

void mem_limit_arenas(int arenas)
{
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
#endif
}

void mem_trim_ask(void)
{
    atomic_store(&trim_asked, 1);
}

int mem_trim_if_asked(void)
{
    if (!atomic_exchange(&trim_asked, 0))
        return 0;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return 1;
}

static int name_listed(const char *path, const char *const *names)
{
    const char *base = strrchr(path, '/');

    if (!names)
        return 1; /* every file */
    base = base ? base + 1 : path;
    for (; *names; names++)
        if (!strncmp(base, *names, strlen(*names)))
            return 1;
    return 0;
}

int64_t mem_drop_library_pages(const char *const *names)
{
#ifdef __linux__
    FILE *f = fopen("/proc/self/smaps", "re");
    char line[4352], perms[8], path[4096];
    unsigned long lo = 0, hi = 0;
    long rss = 0, anon = -1, kib;
    int listed = 0;
    int64_t dropped = 0;

    if (!f)
        return 0;
    /* Each mapping: its header line, then fields; it is decided once its Anonymous: line is read
     * (the last field needed), so the madvise comes after every field of the mapping. */
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b;

        /* sscanf stores what it matched before a mismatch: "Anonymous:" would set a to 0xa. */
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3) {
            lo = a;
            hi = b;
            if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) != 1)
                path[0] = '\0';
            listed = path[0] == '/' && !strchr(perms, 'w') && perms[3] == 'p' &&
                     name_listed(path, names);
            rss = 0;
            anon = -1;
        } else if (listed && sscanf(line, "Rss: %ld kB", &kib) == 1) {
            rss = kib;
        } else if (listed && sscanf(line, "Anonymous: %ld kB", &kib) == 1) {
            anon = kib;
            /* Private copies (relocated data made read-only) would be lost: only clean ones. */
            if (anon == 0 && rss > 0 && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
                dropped += rss;
            listed = 0;
        }
    }
    fclose(f);
    return dropped;
#else
    (void)names;
    return 0;
#endif
}

int64_t mem_heap_in_use(void)
{
#if defined(MEM_SANITIZER_HEAP)
    return (int64_t)__sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();

    /* uordblks: chunks in use in the arenas; hblkhd: blocks mmap'ed on their own */
    return (int64_t)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}
