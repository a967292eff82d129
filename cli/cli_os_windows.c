/*
 * cli_os_windows.c - cli_os.h with the C runtime's signal() (it maps Ctrl+C to SIGINT) and a
 * temporary file standing in for open_memstream.
 */
#include "cli_os.h"

#include <signal.h>
#include <stdlib.h>

void cli_catch_interrupt(void (*fn)(int sig))
{
    signal(SIGINT, fn);
    signal(SIGTERM, fn);
}

FILE *cli_memfile_open(struct cli_memfile *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = tmpfile();
    return m->f;
}

char *cli_memfile_close(struct cli_memfile *m)
{
    long size;
    char *buf = NULL;

    if (fflush(m->f) != 0 || ferror(m->f) || (size = ftell(m->f)) < 0 ||
        fseek(m->f, 0, SEEK_SET) != 0 || !(buf = malloc((size_t)size + 1)) ||
        fread(buf, 1, (size_t)size, m->f) != (size_t)size) {
        free(buf);
        fclose(m->f);
        return NULL;
    }
    buf[size] = '\0';
    m->len = (size_t)size;
    fclose(m->f); /* tmpfile() deletes it on close */
    return buf;
}
