/*
 * cli_os_posix.c - cli_os.h with sigaction and open_memstream.
 */
#include "cli_os.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void cli_catch_interrupt(void (*fn)(int sig))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn; /* no SA_RESTART: a sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

FILE *cli_memfile_open(struct cli_memfile *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f;
}

char *cli_memfile_close(struct cli_memfile *m)
{
    if (fclose(m->f) != 0) {
        free(m->buf);
        return NULL;
    }
    return m->buf;
}
