/*
 * mem_posix.c - the heap through glibc's malloc (mallopt(3), malloc_trim(3), mallinfo2(3)); with
 * another C library these do nothing and the heap in use is unknown. A sanitizer build's heap in
 * use is its allocator's own count.
 */
#include "base/mem.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

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
