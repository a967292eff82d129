/*
 * test_mem_drop.c - mem_drop_library_pages (base/mem_posix.c) on two private read-only mappings of
 * a file named like a library: the clean one's resident pages are dropped and read back intact;
 * the one with private copies (written, then made read-only, as the loader does with relocated
 * data) is left alone and keeps what was written; a mapping of a name not listed is left alone;
 * with no list, every file's clean private mappings are dropped, still not the one with private
 * copies nor a shared one.
 */
#include "base/mem.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 16

static char dir[] = "/tmp/perflog-test-mem-XXXXXX";

/* Resident KiB of the mapping that starts at p (/proc/self/smaps), -1 when none is found. */
static long rss_of(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    char line[4352], perms[8];
    unsigned long lo, hi;
    long kib, found = -1;
    int here = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3)
            here = lo == (unsigned long)p;
        else if (here && sscanf(line, "Rss: %ld kB", &kib) == 1)
            found = kib;
    }
    fclose(f);
    return found;
}

static char *map_file(const char *path, int prot)
{
    int fd = open(path, O_RDONLY);
    void *p;

    if (fd < 0)
        return NULL;
    p = mmap(NULL, PAGES * 4096, prot, MAP_PRIVATE, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
    static const char *const listed[] = {"libperflogtest.", NULL};
    static const char *const other[] = {"libnothere.", NULL};
    char path[256], *clean, *copied, *buf = malloc(PAGES * 4096);
    volatile char sum = 0;
    long before;
    int64_t kib;
    FILE *f;

    if (!mkdtemp(dir) || !buf) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < PAGES * 4096; i++)
        buf[i] = (char)(i * 7 + 3);
    snprintf(path, sizeof(path), "%s/libperflogtest.so.1", dir);
    f = fopen(path, "wb");
    CHECK(f && fwrite(buf, 1, PAGES * 4096, f) == PAGES * 4096);
    if (f)
        fclose(f);

    clean = map_file(path, PROT_READ);
    copied = map_file(path, PROT_READ | PROT_WRITE);
    CHECK(clean && copied);
    if (!clean || !copied)
        return tl_done();
    for (int i = 0; i < PAGES; i++) {
        sum += clean[i * 4096];
        copied[i * 4096] = 'x'; /* a private copy of every page */
    }
    CHECK_INT(mprotect(copied, PAGES * 4096, PROT_READ), 0);
    before = rss_of(clean);
    CHECK(before > 0);

    /* A name not listed: nothing dropped. */
    CHECK_INT(mem_drop_library_pages(other), 0);
    CHECK_INT(rss_of(clean), before);

    kib = mem_drop_library_pages(listed);
    CHECK_INT(kib, before); /* the clean mapping only */
    CHECK_INT(rss_of(clean), 0);
    CHECK_INT(rss_of(copied), PAGES * 4);
    CHECK(!memcmp(clean, buf, PAGES * 4096)); /* read back from the file */
    for (int i = 0; i < PAGES; i++)
        CHECK(copied[i * 4096] == 'x' && copied[i * 4096 + 1] == buf[i * 4096 + 1]);

    /* A shared read-only mapping of the file is not one of those: left alone, even with no list. */
    int sfd = open(path, O_RDONLY);
    char *shared = sfd >= 0 ? mmap(NULL, PAGES * 4096, PROT_READ, MAP_SHARED, sfd, 0) : MAP_FAILED;
    CHECK(shared != MAP_FAILED);
    if (sfd >= 0)
        close(sfd);
    for (int i = 0; shared != MAP_FAILED && i < PAGES; i++)
        sum += shared[i * 4096];

    /* No list: every file's clean read-only mappings, this test's own code among them (which
     * runs on, mapped back as it runs); still not the one with private copies. */
    before = rss_of(clean);
    CHECK(before > 0); /* read back above */
    kib = mem_drop_library_pages(NULL);
    CHECK(kib > before); /* the clean test mapping and more: this binary's code, libc's */
    CHECK_INT(rss_of(clean), 0);
    CHECK_INT(rss_of(copied), PAGES * 4);
    CHECK(!memcmp(clean, buf, PAGES * 4096));
    for (int i = 0; i < PAGES; i++)
        CHECK(copied[i * 4096] == 'x' && copied[i * 4096 + 1] == buf[i * 4096 + 1]);

    if (shared != MAP_FAILED) {
        CHECK_INT(rss_of(shared), PAGES * 4); /* the shared mapping kept its pages */
        munmap(shared, PAGES * 4096);
    }
    munmap(clean, PAGES * 4096);
    munmap(copied, PAGES * 4096);
    unlink(path);
    rmdir(dir);
    free(buf);
    (void)sum;
    return tl_done();
}
