/*
 * mem_windows.c - the heap on Windows: the C runtime's heap has no arenas to limit and no trim
 * call, and its use is not counted here.
 */
#include "base/mem.h"

void mem_limit_arenas(int arenas)
{
    (void)arenas;
}

void mem_trim_ask(void)
{
}

int mem_trim_if_asked(void)
{
    return 0;
}

int64_t mem_drop_library_pages(const char *const *names)
{
    (void)names;
    return 0;
}

int64_t mem_heap_in_use(void)
{
    return -1;
}
